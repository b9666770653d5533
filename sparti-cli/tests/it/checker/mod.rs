//! An independent brute-force checker for `sparti pairs` and `sparti query`,
//! written from the spec alone: its own minimal parser (for well-formed
//! files only), its own geometry in `f64`, no sparti code at all. It reads
//! each frame's rows as the state of the world (no replay), so it also
//! checks the tool's insert/update/remove bookkeeping.

use std::collections::HashMap;

/// An object of one frame.
#[derive(Clone, Debug)]
pub struct Obj {
    pub id: u64,
    pub round: bool,
    pub c: [f64; 3],
    /// Radius in `s[0]` when round, half extents otherwise.
    pub s: [f64; 3],
    pub layer: u32,
    pub mask: u32,
    pub is_static: bool,
}

pub struct SceneData {
    pub dim: usize,
    pub frames: Vec<(i64, Vec<Obj>)>,
}

fn bits(s: &str) -> u32 {
    if let Some(h) = s.strip_prefix("0x") {
        u32::from_str_radix(h, 16).unwrap()
    } else if let Some(b) = s.strip_prefix("0b") {
        u32::from_str_radix(b, 2).unwrap()
    } else {
        s.parse().unwrap()
    }
}

/// Parses a well-formed scene file (panics otherwise).
pub fn parse_scene(text: &str) -> SceneData {
    let mut header: Option<HashMap<String, usize>> = None;
    let mut frames: Vec<(i64, Vec<Obj>)> = Vec::new();
    let mut dim = 0;
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = t.split(',').map(str::trim).collect();
        let Some(h) = &header else {
            header = Some(
                cells
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.to_string(), i))
                    .collect(),
            );
            continue;
        };
        let get = |name: &str| h.get(name).map(|&i| cells[i]).filter(|s| !s.is_empty());
        let num = |name: &str| get(name).unwrap().parse::<f64>().unwrap();
        let kind = get("kind").unwrap();
        let (round, d) = match kind {
            "sphere" => (true, 3),
            "box" => (false, 3),
            "circle" => (true, 2),
            "rect" => (false, 2),
            _ => panic!("kind {kind}"),
        };
        dim = d;
        let mut c = [0.0; 3];
        let mut s = [0.0; 3];
        for i in 0..d {
            c[i] = num(["x", "y", "z"][i]);
            if !round {
                s[i] = num(["hx", "hy", "hz"][i]);
            }
        }
        if round {
            s[0] = num("r");
        }
        let obj = Obj {
            id: get("id").unwrap().parse().unwrap(),
            round,
            c,
            s,
            layer: get("layer").map_or(1, bits),
            mask: get("mask").map_or(u32::MAX, bits),
            is_static: get("static").is_some_and(|s| s == "1" || s == "true"),
        };
        let frame: i64 = get("frame").unwrap().parse().unwrap();
        match frames.last_mut() {
            Some((f, objs)) if *f == frame => objs.push(obj),
            _ => frames.push((frame, vec![obj])),
        }
    }
    SceneData { dim, frames }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Squared distance from a point to an object's box (0 inside).
fn box_dist2(o: &Obj, p: &[f64], dim: usize) -> f64 {
    (0..dim)
        .map(|i| {
            let e = (p[i] - o.c[i]).abs() - o.s[i];
            if e > 0.0 { e * e } else { 0.0 }
        })
        .sum()
}

/// Distance from a point to the object's shape (0 inside).
fn dist(o: &Obj, p: &[f64], dim: usize) -> f64 {
    if o.round {
        let v: Vec<f64> = (0..dim).map(|i| p[i] - o.c[i]).collect();
        (dot(&v, &v).sqrt() - o.s[0]).max(0.0)
    } else {
        box_dist2(o, p, dim).sqrt()
    }
}

/// Shape overlap, touching included.
fn overlap(a: &Obj, b: &Obj, dim: usize) -> bool {
    match (a.round, b.round) {
        (true, true) => {
            let v: Vec<f64> = (0..dim).map(|i| a.c[i] - b.c[i]).collect();
            let r = a.s[0] + b.s[0];
            dot(&v, &v) <= r * r
        }
        (true, false) => box_dist2(b, &a.c, dim) <= a.s[0] * a.s[0],
        (false, true) => box_dist2(a, &b.c, dim) <= b.s[0] * b.s[0],
        (false, false) => (0..dim)
            .all(|i| a.c[i] - a.s[i] <= b.c[i] + b.s[i] && b.c[i] - b.s[i] <= a.c[i] + a.s[i]),
    }
}

/// The distance along the unit direction `d` at which a ray from `o` first
/// meets the object, if within `max`.
fn ray_hit(obj: &Obj, o: &[f64], d: &[f64], max: f64, dim: usize) -> Option<f64> {
    if obj.round {
        let m: Vec<f64> = (0..dim).map(|i| o[i] - obj.c[i]).collect();
        let c = dot(&m, &m) - obj.s[0] * obj.s[0];
        if c <= 0.0 {
            return Some(0.0);
        }
        let b = dot(&m, d);
        if b > 0.0 {
            return None;
        }
        let disc = b * b - c;
        if disc < 0.0 {
            return None;
        }
        let t = -b - disc.sqrt();
        (t <= max).then_some(t.max(0.0))
    } else {
        let (mut t0, mut t1) = (0.0f64, max);
        for i in 0..dim {
            let (lo, hi) = (obj.c[i] - obj.s[i], obj.c[i] + obj.s[i]);
            if d[i] == 0.0 {
                if o[i] < lo || o[i] > hi {
                    return None;
                }
            } else {
                let (a, b) = ((lo - o[i]) / d[i], (hi - o[i]) / d[i]);
                t0 = t0.max(a.min(b));
                t1 = t1.min(a.max(b));
            }
        }
        (t0 <= t1).then_some(t0)
    }
}

fn unit(v: &[f64]) -> Vec<f64> {
    let l = dot(v, v).sqrt();
    v.iter().map(|x| x / l).collect()
}

fn fmt_dist(d: f64) -> String {
    let f = d as f32;
    if f == 0.0 { "0".into() } else { format!("{f}") }
}

/// The `sparti pairs` output, for every frame or one.
pub fn pairs(scene: &SceneData, only: Option<i64>) -> String {
    let mut out = String::from("frame,a,b\n");
    for (f, objs) in &scene.frames {
        if only.is_some_and(|o| o != *f) {
            continue;
        }
        let mut rows = Vec::new();
        for (i, a) in objs.iter().enumerate() {
            for b in &objs[i + 1..] {
                if a.layer & b.mask != 0
                    && b.layer & a.mask != 0
                    && !(a.is_static && b.is_static)
                    && overlap(a, b, scene.dim)
                {
                    rows.push((a.id.min(b.id), a.id.max(b.id)));
                }
            }
        }
        rows.sort();
        for (a, b) in rows {
            out.push_str(&format!("{f},{a},{b}\n"));
        }
    }
    out
}

/// The `sparti query` output on the last frame or frame `at`.
pub fn queries(scene: &SceneData, at: Option<i64>, text: &str) -> String {
    let dim = scene.dim;
    let objs: &[Obj] = match at {
        None => scene.frames.last().map_or(&[], |f| &f.1),
        Some(n) => &scene.frames.iter().find(|f| f.0 == n).unwrap().1,
    };
    let mut out = String::from("query,id,distance\n");
    let mut n = 0;
    for line in text.lines() {
        let line = line.split('#').next().unwrap().trim();
        if line.is_empty() {
            continue;
        }
        let mut toks: Vec<&str> = line.split_whitespace().collect();
        let name = toks.remove(0);
        let mut layers = u32::MAX;
        if let Some(b) = toks.last().and_then(|t| t.strip_prefix("layer=")) {
            layers = bits(b);
            toks.pop();
        }
        let v: Vec<f64> = toks.iter().map(|t| t.parse().unwrap()).collect();
        let live: Vec<&Obj> = objs.iter().filter(|o| o.layer & layers != 0).collect();
        // Rows with a distance, sorted by distance then id; or ids only.
        let mut with_d: Vec<(f64, u64)> = Vec::new();
        let mut ids: Vec<u64> = Vec::new();
        match name {
            "box" => {
                let q = Obj {
                    id: 0,
                    round: false,
                    c: std::array::from_fn(|i| {
                        if i < dim {
                            (v[i] + v[dim + i]) / 2.0
                        } else {
                            0.0
                        }
                    }),
                    s: std::array::from_fn(|i| {
                        if i < dim {
                            (v[dim + i] - v[i]) / 2.0
                        } else {
                            0.0
                        }
                    }),
                    layer: 0,
                    mask: 0,
                    is_static: false,
                };
                ids = live
                    .iter()
                    .filter(|o| overlap(o, &q, dim))
                    .map(|o| o.id)
                    .collect();
            }
            "sphere" => {
                let q = Obj {
                    id: 0,
                    round: true,
                    c: std::array::from_fn(|i| if i < dim { v[i] } else { 0.0 }),
                    s: [v[dim], 0.0, 0.0],
                    layer: 0,
                    mask: 0,
                    is_static: false,
                };
                ids = live
                    .iter()
                    .filter(|o| overlap(o, &q, dim))
                    .map(|o| o.id)
                    .collect();
            }
            "ray" | "nearest" => {
                let d = unit(&v[dim..2 * dim]);
                with_d = live
                    .iter()
                    .filter_map(|o| ray_hit(o, &v[..dim], &d, v[2 * dim], dim).map(|t| (t, o.id)))
                    .collect();
                with_d.sort_by(|a, b| a.partial_cmp(b).unwrap());
                if name == "nearest" {
                    with_d.truncate(1);
                }
            }
            "cone" => {
                let d = unit(&v[dim..2 * dim]);
                let cos = v[2 * dim].to_radians().cos();
                let range = v[2 * dim + 1];
                ids = live
                    .iter()
                    .filter(|o| {
                        let w: Vec<f64> = (0..dim).map(|i| o.c[i] - v[i]).collect();
                        let l2 = dot(&w, &w);
                        l2 <= range * range && (l2 == 0.0 || dot(&w, &d) >= cos * l2.sqrt())
                    })
                    .map(|o| o.id)
                    .collect();
            }
            "frustum" => {
                ids = live
                    .iter()
                    .filter(|o| {
                        v.chunks(4).all(|p| {
                            let n = &p[..3];
                            if o.round {
                                (dot(n, &o.c) + p[3]) / dot(n, n).sqrt() >= -o.s[0]
                            } else {
                                // The corner farthest along the normal.
                                let q: Vec<f64> = (0..3)
                                    .map(|i| o.c[i] + if n[i] >= 0.0 { o.s[i] } else { -o.s[i] })
                                    .collect();
                                dot(n, &q) + p[3] >= 0.0
                            }
                        })
                    })
                    .map(|o| o.id)
                    .collect();
            }
            "knn" => {
                let k = v[dim] as usize;
                with_d = live
                    .iter()
                    .map(|o| (dist(o, &v[..dim], dim), o.id))
                    .collect();
                with_d.sort_by(|a, b| a.partial_cmp(b).unwrap());
                with_d.truncate(k);
            }
            _ => panic!("query {name}"),
        }
        ids.sort();
        for id in ids {
            out.push_str(&format!("{n},{id},\n"));
        }
        for (d, id) in with_d {
            out.push_str(&format!("{n},{id},{}\n", fmt_dist(d)));
        }
        n += 1;
    }
    out
}

/// Compares two outputs: equal lines, except that distances (the third
/// field of `query` rows) may differ by a relative 1e-5, as the checker
/// computes in `f64` and sparti in `f32`. Returns the first difference.
pub fn compare(expected: &str, actual: &str) -> Result<(), String> {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    for (i, (x, y)) in e.iter().zip(&a).enumerate() {
        if x == y {
            continue;
        }
        let (fx, fy): (Vec<&str>, Vec<&str>) = (x.split(',').collect(), y.split(',').collect());
        let close = fx.len() == 3
            && fy.len() == 3
            && fx[..2] == fy[..2]
            && match (fx[2].parse::<f64>(), fy[2].parse::<f64>()) {
                (Ok(p), Ok(q)) => (p - q).abs() <= 1e-5 * p.abs().max(1.0),
                _ => false,
            };
        if !close {
            return Err(format!("line {}: expected `{x}`, got `{y}`", i + 1));
        }
    }
    if e.len() != a.len() {
        return Err(format!("expected {} lines, got {}", e.len(), a.len()));
    }
    Ok(())
}
