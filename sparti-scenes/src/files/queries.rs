//! Query files: one query per line, whitespace separated, `#` comments.
//!
//! ```text
//! # 3D queries (points have 2 components in a 2D scene)
//! box 0 0 0 10 10 10            # MIN MAX
//! sphere 5 5 5 2 layer=0b10     # CENTRE R, only objects on layer 2
//! ray 0 0 0 1 0 0 100           # ORIGIN DIR MAXDIST
//! nearest 0 0 0 1 0 0 100       # ORIGIN DIR MAXDIST
//! cone 0 0 0 1 0 0 30 20        # APEX DIR HALF_ANGLE_DEGREES RANGE
//! frustum 1 0 0 5  -1 0 0 5  0 1 0 5  0 -1 0 5  0 0 1 5  0 0 -1 5
//! knn 1 2 3 4                   # POINT K
//! ```
//!
//! Every number is finite; the point a `sphere`, `ray`, `nearest`, `cone`
//! or `knn` query measures from lies within sparti's coordinate limit
//! ([`MAX_COORDINATE`], 2^60). Sizes, ranges and distances are `>= 0`, box
//! corners ordered (`MIN <= MAX`), directions and plane normals non-zero,
//! half-angles in `[0, 180]` degrees, `K` a non-negative integer. An
//! optional last token `layer=BITS` (decimal, `0x` or `0b`) keeps only the
//! objects with `layer & BITS != 0`. `frustum` is 3D only.

use sparti::{Aabb, Cone, Filter, Frustum, MAX_COORDINATE, Plane, Ray, Sphere, Vector};

use crate::files::scene::{LineError, MAX_ERRORS, lines, parse_bits, parse_f32, vector};

/// What a query asks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op<V: Vector> {
    /// Objects overlapping the box.
    Box(Aabb<V>),
    /// Objects overlapping the ball.
    Sphere(Sphere<V>),
    /// Every object hit within the distance.
    Ray(Ray<V>, f32),
    /// The first object hit within the distance (ties: smaller id).
    Nearest(Ray<V>, f32),
    /// Objects whose centre is in the cone.
    Cone(Cone<V>),
    /// Objects not wholly outside one plane.
    Frustum(Frustum<V>),
    /// The `k` objects nearest to the point (ties: smaller id).
    Knn(V, usize),
}

/// One query of the file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Query<V: Vector> {
    /// 1-based line number.
    pub line: usize,
    /// The query.
    pub op: Op<V>,
    /// The `layer=BITS` filter ([`Filter::ALL`] without one).
    pub filter: Filter,
}

/// The query names, for messages.
const NAMES: &str = "box, sphere, ray, nearest, cone, frustum or knn";

/// Parses one query line (comment already stripped, not blank).
fn parse_line<V: Vector>(line: usize, text: &str) -> Result<Query<V>, String> {
    let d = V::DIM;
    let mut tokens: Vec<&str> = text.split_whitespace().collect();
    let name = tokens.remove(0).to_ascii_lowercase();
    let mut filter = Filter::ALL;
    if let Some(&last) = tokens.last()
        && let Some(bits) = last.strip_prefix("layer=")
    {
        let layers = parse_bits(bits).ok_or_else(|| {
            format!("bad layer `{last}`: expected layer=BITS with u32 bits (decimal, 0x.. or 0b..)")
        })?;
        filter = Filter::layers(layers);
        tokens.pop();
    }
    if let Some(t) = tokens.iter().find(|t| t.contains('=')) {
        return Err(format!(
            "unexpected `{t}`: the only option is layer=BITS, as the last token"
        ));
    }
    let (count, usage) = match name.as_str() {
        "box" => (2 * d, "box MIN MAX"),
        "sphere" => (d + 1, "sphere CENTRE R"),
        "ray" => (2 * d + 1, "ray ORIGIN DIR MAXDIST"),
        "nearest" => (2 * d + 1, "nearest ORIGIN DIR MAXDIST"),
        "cone" => (2 * d + 2, "cone APEX DIR HALF_ANGLE_DEGREES RANGE"),
        "frustum" if d == 3 => (24, "frustum followed by 6 planes `nx ny nz d`"),
        "frustum" => return Err("frustum is a 3D query and the scene is 2D".into()),
        "knn" => (d + 1, "knn POINT K"),
        _ => return Err(format!("unknown query `{name}` (expected {NAMES})")),
    };
    if tokens.len() != count {
        return Err(format!(
            "{name} takes {count} values in {d}D ({usage}), got {}",
            tokens.len()
        ));
    }
    // K is an integer: parse it apart from the numbers.
    let k = if name == "knn" {
        let s = tokens.pop().unwrap_or_default();
        Some(
            s.parse::<usize>()
                .map_err(|_| format!("knn: K = `{s}` is not a non-negative integer"))?,
        )
    } else {
        None
    };
    let mut nums = Vec::with_capacity(tokens.len());
    for (i, t) in tokens.iter().enumerate() {
        nums.push(parse_f32(t, &format!("{name}: value {}", i + 1))?);
    }
    let v = |at: usize| -> V {
        let mut a = [0.0; 3];
        a[..d].copy_from_slice(&nums[at..at + d]);
        vector(a)
    };
    let nonneg = |x: f32, what: &str| {
        if x < 0.0 {
            Err(format!("{name}: negative {what} {x}"))
        } else {
            Ok(x)
        }
    };
    // Points from which distances are measured stay within sparti's
    // coordinate limit, like the objects: beyond it squared distances
    // overflow f32 and answers become meaningless.
    let point_at = match name.as_str() {
        "sphere" | "ray" | "nearest" | "cone" | "knn" => Some(0),
        _ => None,
    };
    if let Some(at) = point_at
        && let Some(x) = nums[at..at + d].iter().find(|x| x.abs() > MAX_COORDINATE)
    {
        return Err(format!(
            "{name}: coordinate {x:e} is beyond sparti's limit of ±2^60 (about 1.15e18)"
        ));
    }
    let op = match name.as_str() {
        "box" => Op::Box(Aabb::new(v(0), v(d)).map_err(|e| match e {
            sparti::Error::InvertedBox => "box: MIN > MAX on some axis".to_string(),
            _ => "box: its size overflows f32".to_string(),
        })?),
        "sphere" => {
            let r = nonneg(nums[d], "radius")?;
            Op::Sphere(
                Sphere::new(v(0), r).map_err(|_| "sphere: its bounds overflow f32".to_string())?,
            )
        }
        "ray" | "nearest" => {
            let max = nonneg(nums[2 * d], "MAXDIST")?;
            let ray = Ray::new(v(0), v(d)).map_err(|_| format!("{name}: zero direction"))?;
            if name == "ray" {
                Op::Ray(ray, max)
            } else {
                Op::Nearest(ray, max)
            }
        }
        "cone" => {
            let angle = nums[2 * d];
            if !(0.0..=180.0).contains(&angle) {
                return Err(format!(
                    "cone: half-angle {angle} is outside [0, 180] degrees"
                ));
            }
            let range = nonneg(nums[2 * d + 1], "RANGE")?;
            Op::Cone(
                Cone::from_degrees(v(0), v(d), angle, range)
                    .map_err(|_| "cone: zero direction".to_string())?,
            )
        }
        "frustum" => {
            let mut planes = Vec::with_capacity(6);
            for p in 0..6 {
                let n = v(4 * p);
                let plane = Plane::new(n, nums[4 * p + 3]).map_err(|_| {
                    format!("frustum: plane {} has a zero (or degenerate) normal", p + 1)
                })?;
                planes.push(plane);
            }
            let planes: [Plane<V>; 6] = planes
                .try_into()
                .map_err(|_| "frustum: needs 6 planes".to_string())?;
            Op::Frustum(Frustum::new(planes))
        }
        _ => Op::Knn(v(0), k.unwrap_or(0)),
    };
    Ok(Query { line, op, filter })
}

/// Parses a query file for a scene of dimension `V::DIM`.
///
/// # Errors
/// Every malformed line, up to [`MAX_ERRORS`], in line order.
pub fn parse_queries<V: Vector>(bytes: &[u8]) -> Result<Vec<Query<V>>, Vec<LineError>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (line, text) in lines(bytes) {
        if errors.len() >= MAX_ERRORS {
            break;
        }
        let text = match text {
            Ok(t) => t,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let text = text.split('#').next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        match parse_line(line, text) {
            Ok(q) => out.push(q),
            Err(m) => errors.push(LineError::new(line, m)),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sparti::glam::{Vec2, Vec3};

    fn one3(s: &str) -> Result<Query<Vec3>, LineError> {
        parse_queries::<Vec3>(s.as_bytes())
            .map(|mut v| v.remove(0))
            .map_err(|mut e| e.remove(0))
    }

    fn err3(s: &str) -> String {
        one3(s).unwrap_err().message
    }

    #[test]
    fn parses_every_query_in_3d() {
        let text = "# comment\n\nbox 0 0 0 1 2 3\nsphere 1 1 1 2 layer=0b10 # trailing\n\
                    ray 0 0 0 2 0 0 10\nnearest 0 0 0 0 0 -1 5\ncone 0 0 0 1 0 0 180 7\n\
                    frustum 1 0 0 5 -1 0 0 5 0 1 0 5 0 -1 0 5 0 0 2 10 0 0 -1 5\nknn 1 2 3 4\n";
        let q = parse_queries::<Vec3>(text.as_bytes()).unwrap();
        assert_eq!(q.len(), 7);
        assert_eq!(q[0].line, 3);
        assert!(matches!(q[0].op, Op::Box(b) if b.max == Vec3::new(1.0, 2.0, 3.0)));
        assert_eq!(q[1].filter, Filter::layers(2));
        assert_eq!(q[0].filter, Filter::ALL);
        assert!(matches!(q[2].op, Op::Ray(r, 10.0) if r.dir == Vec3::X));
        assert!(matches!(q[3].op, Op::Nearest(r, 5.0) if r.dir == -Vec3::Z));
        assert!(matches!(q[4].op, Op::Cone(c) if c.range == 7.0));
        // Planes go through Plane::new: the normal (0, 0, 2) and d = 10 become (0, 0, 1) and 5.
        let Op::Frustum(f) = q[5].op else { panic!() };
        assert_eq!((f.planes[4].normal, f.planes[4].d), (Vec3::Z, 5.0));
        assert!(matches!(q[6].op, Op::Knn(p, 4) if p == Vec3::new(1.0, 2.0, 3.0)));
    }

    #[test]
    fn parses_2d_queries() {
        let q = parse_queries::<Vec2>(b"box 0 0 1 1\nknn 1 1 0\nray 0 0 1 1 3 layer=5\n").unwrap();
        assert_eq!(q.len(), 3);
        assert!(matches!(q[1].op, Op::Knn(_, 0)));
        assert_eq!(q[2].filter, Filter::layers(5));
        let e =
            parse_queries::<Vec2>(b"frustum 1 0 0 5 -1 0 0 5 0 1 0 5 0 -1 0 5 0 0 1 5 0 0 -1 5\n")
                .unwrap_err();
        assert!(e[0].message.contains("3D query"));
        let e = parse_queries::<Vec2>(b"box 0 0 0 1 1 1\n").unwrap_err();
        assert!(
            e[0].message.contains("takes 4 values in 2D"),
            "{}",
            e[0].message
        );
    }

    #[test]
    fn bad_queries_are_errors_on_their_line() {
        let cases = [
            ("teleport 1 2 3", "unknown query"),
            ("box 0 0 0 1 1", "takes 6 values"),
            ("box 0 0 0 1 1 1 1", "takes 6 values"),
            ("box 0 0 0 -1 1 1", "MIN > MAX"),
            ("box 0 NaN 0 1 1 1", "NaN"),
            ("sphere 0 0 0 inf", "infinite"),
            ("sphere 0 0 0 -1", "negative radius"),
            ("sphere 0 0 x 1", "not a number"),
            ("ray 0 0 0 0 0 0 5", "zero direction"),
            ("nearest 0 0 0 0 0 0 5", "zero direction"),
            ("ray 0 0 0 1 0 0 -5", "negative MAXDIST"),
            ("cone 0 0 0 0 0 0 30 5", "zero direction"),
            ("cone 0 0 0 1 0 0 181 5", "half-angle"),
            ("cone 0 0 0 1 0 0 30 -5", "negative RANGE"),
            (
                "frustum 0 0 0 5 -1 0 0 5 0 1 0 5 0 -1 0 5 0 0 1 5 0 0 -1 5",
                "plane 1",
            ),
            ("frustum 1 0 0 5", "takes 24 values"),
            ("knn 0 0 0 -1", "not a non-negative integer"),
            ("knn 0 0 0 1.5", "not a non-negative integer"),
            ("sphere 0 0 0 1 layer=abc", "bad layer"),
            ("sphere 0 0 0 1 layer=-1", "bad layer"),
            ("sphere 0 0 0 1 layer=", "bad layer"),
            ("sphere 0 0 0 layer=1 1", "last token"),
            ("sphere 0 0 0 1 layer=1 layer=2", "last token"),
            ("knn 1e20 0 0 1", "limit"),
            ("ray 0 0 -2e18 0 0 1 5", "limit"),
        ];
        for (q, want) in cases {
            let m = err3(&format!("# c\n{q}\n"));
            assert!(m.contains(want), "{q}: {m}");
            assert_eq!(one3(&format!("# c\n{q}\n")).unwrap_err().line, 2);
        }
    }

    #[test]
    fn every_bad_line_is_reported() {
        let e = parse_queries::<Vec3>(b"box\nknn 0 0 0 1\nsphere\n").unwrap_err();
        assert_eq!(e.iter().map(|e| e.line).collect::<Vec<_>>(), vec![1, 3]);
    }

    #[test]
    fn cone_of_180_degrees_is_accepted() {
        assert!(one3("cone 0 0 0 1 0 0 180 1").is_ok());
        assert!(one3("cone 0 0 0 1 0 0 0 0").is_ok());
    }
}
