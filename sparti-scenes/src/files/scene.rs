//! Scene files: a CSV recording of a game's objects, frame by frame.
//!
//! ```text
//! # frame,id,kind,x,y,r,hx,hy: a 2D scene
//! frame,id,kind,x,y,r,hx,hy,layer,mask,static
//! 0,1,circle,0,0,1,,,1,0xffffffff,0
//! 0,2,rect,1.5,0,,0.5,0.5,2,1,1
//! 1,1,circle,0.5,0,1,,,,,
//! ```
//!
//! - The first line that is neither blank nor a `#` comment is the header;
//!   columns are found by name (case-insensitive, surrounding spaces
//!   ignored), in any order; unknown columns are ignored.
//! - Required columns: `frame` (integer), `id` (`u64`), `kind`, `x`, `y`,
//!   and `z` when the kinds are 3D. Kinds: `sphere`, `box` (3D), `circle`,
//!   `rect` (2D). Sizes: `r` for spheres and circles, half extents `hx`,
//!   `hy` (and `hz`) for boxes and rects.
//! - Optional columns: `layer` (`u32` bits, default 1), `mask` (`u32`
//!   bits, default all ones), `static` (`0`, `1`, `true`, `false`; default
//!   0). Bits are decimal, `0x` hexadecimal or `0b` binary. An empty cell in
//!   an optional column, or in a column the row's kind does not use (`r` for
//!   a box), means the default.
//! - Every row has exactly as many cells as the header. Rows are grouped into
//!   frames by their `frame` number, which must not decrease; an id appears
//!   at most once per frame. A frame is a frame number that has rows: a
//!   number skipped in the file is not a frame.
//!
//! [`parse_scene`] checks all of this and reports every malformed line
//! (up to [`MAX_ERRORS`]) with its number.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use sparti::glam::{Vec2, Vec3};
use sparti::{Shape, Vector};

/// At most this many errors are collected per file.
pub const MAX_ERRORS: usize = 20;

/// A problem on one line of an input file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl LineError {
    /// An error on `line`.
    pub fn new(line: usize, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.line, self.message)
    }
}

/// The dimension of a scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Circles and rects, `x y` coordinates.
    Two,
    /// Spheres and boxes, `x y z` coordinates.
    Three,
}

impl Dim {
    /// Number of coordinates: 2 or 3.
    pub fn count(self) -> usize {
        match self {
            Dim::Two => 2,
            Dim::Three => 3,
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dim::Two => "2D",
            Dim::Three => "3D",
        })
    }
}

/// The kind of an object's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// 3D ball, size `r`.
    Sphere,
    /// 3D box, half extents `hx hy hz`.
    Box,
    /// 2D disc, size `r`.
    Circle,
    /// 2D rectangle, half extents `hx hy`.
    Rect,
}

impl Kind {
    /// Parses a kind name (case-insensitive).
    pub fn parse(s: &str) -> Option<Kind> {
        match s.to_ascii_lowercase().as_str() {
            "sphere" => Some(Kind::Sphere),
            "box" => Some(Kind::Box),
            "circle" => Some(Kind::Circle),
            "rect" => Some(Kind::Rect),
            _ => None,
        }
    }

    /// The kind's name as written in scene files.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sphere => "sphere",
            Kind::Box => "box",
            Kind::Circle => "circle",
            Kind::Rect => "rect",
        }
    }

    /// The dimension the kind belongs to.
    pub fn dim(self) -> Dim {
        match self {
            Kind::Sphere | Kind::Box => Dim::Three,
            Kind::Circle | Kind::Rect => Dim::Two,
        }
    }

    /// True for spheres and circles (sized by a radius).
    pub fn is_round(self) -> bool {
        matches!(self, Kind::Sphere | Kind::Circle)
    }
}

/// One object in one frame: a data row of the file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// 1-based line number in the file.
    pub line: usize,
    /// The object's id.
    pub id: u64,
    /// Its shape kind.
    pub kind: Kind,
    /// Centre (`z` is 0 in 2D).
    pub center: [f32; 3],
    /// Radius in `size[0]` for round kinds, half extents otherwise (unused
    /// components 0).
    pub size: [f32; 3],
    /// Layer bits.
    pub layer: u32,
    /// Mask bits.
    pub mask: u32,
    /// Static flag.
    pub is_static: bool,
}

impl Row {
    /// The object's shape in the vector type `V` (`Vec2` or `Vec3`).
    pub fn shape<V: Vector>(&self) -> Shape<V> {
        let c = vector::<V>(self.center);
        if self.kind.is_round() {
            Shape::sphere(c, self.size[0])
        } else {
            Shape::cuboid(c, vector::<V>(self.size))
        }
    }

    /// True when the shapes (kind, centre, size) of two rows are equal.
    pub fn same_shape(&self, o: &Row) -> bool {
        self.kind == o.kind && self.center == o.center && self.size == o.size
    }

    /// True when layer, mask and static flag are equal.
    pub fn same_flags(&self, o: &Row) -> bool {
        self.layer == o.layer && self.mask == o.mask && self.is_static == o.is_static
    }
}

/// The first `V::DIM` components of `a` as a vector.
pub fn vector<V: Vector>(a: [f32; 3]) -> V {
    (0..V::DIM).fold(V::ZERO, |v, i| v.with(i, a[i]))
}

/// The objects alive in one frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// The frame number.
    pub number: i64,
    /// Line of the frame's first row.
    pub line: usize,
    /// Every object alive in the frame, in file order.
    pub rows: Vec<Row>,
}

/// One change that takes the objects alive before a frame to the frame's
/// rows (see [`Frame::changes`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Change<'a> {
    /// The live object with this id is not in the frame: it goes.
    Gone(u64),
    /// A row whose id is not alive: a new object.
    New(&'a Row),
    /// A row whose layer, mask or static flag changed: the object is
    /// removed and inserted again with its new flags.
    Refiled(&'a Row),
    /// A row whose shape changed: the object moves.
    Moved(&'a Row),
    /// A row with the same shape and flags.
    Same(&'a Row),
}

impl Frame {
    /// The changes from the objects alive before this frame (`live`, by id;
    /// `row_of` gives each one's last row) to this frame: first every live
    /// id absent from the frame, in id order, then each row, in file order.
    /// The replay of the `pairs` and `query` commands and the plans of
    /// `bench` and `tune` both apply a scene through it.
    pub fn changes<T>(
        &self,
        live: &BTreeMap<u64, T>,
        row_of: impl Fn(&T) -> &Row,
    ) -> Vec<Change<'_>> {
        let present: HashSet<u64> = self.rows.iter().map(|r| r.id).collect();
        let mut out: Vec<Change<'_>> = live
            .keys()
            .filter(|id| !present.contains(id))
            .map(|&id| Change::Gone(id))
            .collect();
        out.extend(
            self.rows
                .iter()
                .map(|row| match live.get(&row.id).map(&row_of) {
                    None => Change::New(row),
                    Some(old) if !old.same_flags(row) => Change::Refiled(row),
                    Some(old) if !old.same_shape(row) => Change::Moved(row),
                    Some(_) => Change::Same(row),
                }),
        );
        out
    }
}

/// A parsed scene: its dimension and frames in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// 2D or 3D.
    pub dim: Dim,
    /// Frames in increasing order of number.
    pub frames: Vec<Frame>,
}

impl Scene {
    /// The position of frame `number` in [`Scene::frames`].
    pub fn frame_index(&self, number: i64) -> Option<usize> {
        self.frames.binary_search_by_key(&number, |f| f.number).ok()
    }
}

/// The columns the parser knows.
const COLUMNS: [&str; 13] = [
    "frame", "id", "kind", "x", "y", "z", "r", "hx", "hy", "hz", "layer", "mask", "static",
];
const FRAME: usize = 0;
const ID: usize = 1;
const KIND: usize = 2;
const X: usize = 3;
const R: usize = 6;
const HX: usize = 7;
const LAYER: usize = 10;
const MASK: usize = 11;
const STATIC: usize = 12;

/// The lines of a file: 1-based number and text (without the line break), or
/// an error for a line that is not UTF-8. A UTF-8 byte order mark is skipped.
pub fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, Result<&str, LineError>)> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let empty = bytes.is_empty();
    bytes
        .split(|&b| b == b'\n')
        .filter(move |_| !empty)
        .enumerate()
        .map(|(i, l)| {
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            let text = std::str::from_utf8(l)
                .map_err(|_| LineError::new(i + 1, "the line is not valid UTF-8 text"));
            (i + 1, text)
        })
}

/// Parses a finite `f32`; `what` names the value in messages.
pub fn parse_f32(s: &str, what: &str) -> Result<f32, String> {
    let v: f32 = s
        .parse()
        .map_err(|_| format!("{what}: `{s}` is not a number"))?;
    if v.is_nan() {
        return Err(format!("{what} is NaN"));
    }
    if v.is_infinite() {
        return Err(if s.to_ascii_lowercase().contains("inf") {
            format!("{what} is infinite")
        } else {
            format!("{what}: `{s}` is out of the f32 range (about ±3.4e38)")
        });
    }
    Ok(v)
}

/// Parses `u32` bits: decimal, `0x` hexadecimal or `0b` binary.
pub fn parse_bits(s: &str) -> Option<u32> {
    let lower = s.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0x") {
        u32::from_str_radix(h, 16).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        u32::from_str_radix(b, 2).ok()
    } else if s.starts_with('+') {
        None
    } else {
        s.parse().ok()
    }
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "0" | "false" => Some(false),
        "1" | "true" => Some(true),
        _ => None,
    }
}

/// Column positions, from the header line.
struct Header {
    /// `pos[k]` is the cell index of `COLUMNS[k]`.
    pos: [Option<usize>; 13],
    cells: usize,
}

fn parse_header(line: usize, text: &str) -> Result<Header, LineError> {
    let mut pos = [None; 13];
    let names: Vec<&str> = text.split(',').map(str::trim).collect();
    for (i, name) in names.iter().enumerate() {
        let lower = name.to_ascii_lowercase();
        if let Some(k) = COLUMNS.iter().position(|c| *c == lower) {
            if pos[k].is_some() {
                return Err(LineError::new(
                    line,
                    format!("column `{lower}` appears twice in the header"),
                ));
            }
            pos[k] = Some(i);
        }
    }
    let missing: Vec<&str> = [FRAME, ID, KIND, X, X + 1]
        .iter()
        .filter(|&&k| pos[k].is_none())
        .map(|&k| COLUMNS[k])
        .collect();
    if !missing.is_empty() {
        return Err(LineError::new(
            line,
            format!(
                "the header lacks column{} {} (the header is the first line that is not blank or a # comment)",
                if missing.len() > 1 { "s" } else { "" },
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(Header {
        pos,
        cells: names.len(),
    })
}

/// Parses one data row (everything but the cross-row rules).
fn parse_row(h: &Header, line: usize, text: &str) -> Result<(i64, Row), String> {
    let cells: Vec<&str> = text.split(',').map(str::trim).collect();
    if cells.len() != h.cells {
        return Err(format!(
            "the row has {} values but the header has {} columns",
            cells.len(),
            h.cells
        ));
    }
    // A required cell: its column exists (or the message says it does not)
    // and it is not empty.
    let need = |k: usize, why: &str| -> Result<&str, String> {
        let Some(i) = h.pos[k] else {
            return Err(format!(
                "{why} needs column `{}`, missing from the header",
                COLUMNS[k]
            ));
        };
        let s = cells[i];
        if s.is_empty() {
            return Err(format!("missing value for `{}`", COLUMNS[k]));
        }
        Ok(s)
    };
    // An optional cell: `None` when the column is absent or the cell empty.
    let opt = |k: usize| h.pos[k].map(|i| cells[i]).filter(|s| !s.is_empty());

    let s = need(FRAME, "every row")?;
    let frame: i64 = s
        .parse()
        .map_err(|_| format!("frame: `{s}` is not an integer"))?;
    let s = need(ID, "every row")?;
    let id: u64 = s
        .parse()
        .map_err(|_| format!("id: `{s}` is not an unsigned 64-bit integer"))?;
    let s = need(KIND, "every row")?;
    let kind = Kind::parse(s).ok_or_else(|| {
        format!("unknown kind `{s}` (expected sphere or box in 3D, circle or rect in 2D)")
    })?;
    let what = kind.name();
    let n = kind.dim().count();
    let mut center = [0.0; 3];
    for (i, c) in center.iter_mut().enumerate().take(n) {
        let name = COLUMNS[X + i];
        *c = parse_f32(need(X + i, what)?, name)?;
    }
    let mut size = [0.0; 3];
    if kind.is_round() {
        let r = parse_f32(need(R, what)?, "r")?;
        if r < 0.0 {
            return Err(format!("negative radius r = {r}"));
        }
        size[0] = r;
    } else {
        for (i, c) in size.iter_mut().enumerate().take(n) {
            let name = COLUMNS[HX + i];
            let v = parse_f32(need(HX + i, what)?, name)?;
            if v < 0.0 {
                return Err(format!("negative half extent {name} = {v}"));
            }
            *c = v;
        }
    }
    let layer = match opt(LAYER) {
        None => 1,
        Some(s) => parse_bits(s)
            .ok_or_else(|| format!("layer: `{s}` is not u32 bits (decimal, 0x.. or 0b..)"))?,
    };
    let mask = match opt(MASK) {
        None => u32::MAX,
        Some(s) => parse_bits(s)
            .ok_or_else(|| format!("mask: `{s}` is not u32 bits (decimal, 0x.. or 0b..)"))?,
    };
    let is_static = match opt(STATIC) {
        None => false,
        Some(s) => {
            parse_bool(s).ok_or_else(|| format!("static: `{s}` is not 0, 1, true or false"))?
        }
    };
    let row = Row {
        line,
        id,
        kind,
        center,
        size,
        layer,
        mask,
        is_static,
    };
    // Finite inputs can still give a box whose corners or extent overflow.
    let checked = match kind.dim() {
        Dim::Two => row.shape::<Vec2>().check(),
        Dim::Three => row.shape::<Vec3>().check(),
    };
    if checked.is_err() {
        return Err(format!(
            "the {what}'s bounds overflow f32 (centre ± size beyond ±3.4e38)"
        ));
    }
    Ok((frame, row))
}

/// Parses a scene file (as bytes: a line that is not UTF-8 is an error).
///
/// # Errors
/// Every malformed line, up to [`MAX_ERRORS`], in line order.
pub fn parse_scene(bytes: &[u8]) -> Result<Scene, Vec<LineError>> {
    let mut errors = Vec::new();
    let mut header: Option<Header> = None;
    let mut dim: Option<(Dim, usize, Kind)> = None;
    let mut frames: Vec<Frame> = Vec::new();
    // Ids of the current frame, with the line where each appeared.
    let mut seen: HashMap<u64, usize> = HashMap::new();
    let mut last_line = 0;
    for (line, text) in lines(bytes) {
        last_line = line;
        if errors.len() >= MAX_ERRORS {
            break;
        }
        let text = match text {
            Ok(t) => t,
            Err(e) => {
                errors.push(e);
                if header.is_none() {
                    break;
                }
                continue;
            }
        };
        let t = text.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let Some(h) = &header else {
            match parse_header(line, t) {
                Ok(h) => header = Some(h),
                Err(e) => {
                    errors.push(e);
                    break;
                }
            }
            continue;
        };
        let (number, row) = match parse_row(h, line, t) {
            Ok(r) => r,
            Err(m) => {
                errors.push(LineError::new(line, m));
                continue;
            }
        };
        match dim {
            None => dim = Some((row.kind.dim(), line, row.kind)),
            Some((d, first, k)) if d != row.kind.dim() => {
                errors.push(LineError::new(
                    line,
                    format!(
                        "{} kind `{}` in a {} scene (line {first} has a `{}`): one file is all 2D or all 3D",
                        row.kind.dim(),
                        row.kind.name(),
                        d,
                        k.name()
                    ),
                ));
                continue;
            }
            Some(_) => {}
        }
        match frames.last_mut() {
            Some(f) if f.number == number => {}
            Some(f) if f.number > number => {
                errors.push(LineError::new(
                    line,
                    format!(
                        "frame {number} after frame {}: frames must not decrease",
                        f.number
                    ),
                ));
                continue;
            }
            _ => {
                seen.clear();
                frames.push(Frame {
                    number,
                    line,
                    rows: Vec::new(),
                });
            }
        }
        if let Some(first) = seen.insert(row.id, line) {
            seen.insert(row.id, first);
            errors.push(LineError::new(
                line,
                format!(
                    "id {} appears twice in frame {number} (first on line {first})",
                    row.id
                ),
            ));
            continue;
        }
        if let Some(f) = frames.last_mut() {
            f.rows.push(row);
        }
    }
    let Some(h) = header else {
        if errors.is_empty() {
            errors.push(LineError::new(
                last_line.max(1),
                "no header line: the file is empty or holds only comments",
            ));
        }
        return Err(errors);
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    // With no rows, the `z` column tells the dimension.
    let dim = dim.map_or(
        if h.pos[X + 2].is_some() {
            Dim::Three
        } else {
            Dim::Two
        },
        |d| d.0,
    );
    Ok(Scene { dim, frames })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Scene, Vec<LineError>> {
        parse_scene(s.as_bytes())
    }

    #[test]
    fn a_frame_lists_its_changes_gone_first_then_rows_in_file_order() {
        let scene = parse(
            "frame,id,kind,x,y,r,layer\n\
             0,1,circle,0,0,1,\n\
             0,2,circle,5,0,1,\n\
             0,3,circle,9,0,1,\n\
             0,4,circle,9,9,1,\n\
             1,4,circle,9,9,1,\n\
             1,7,circle,1,1,1,\n\
             1,3,circle,9,0,1,2\n\
             1,2,circle,6,0,1,\n",
        )
        .unwrap();
        let live: BTreeMap<u64, Row> = scene.frames[0].rows.iter().map(|r| (r.id, *r)).collect();
        let next = &scene.frames[1];
        let ids: Vec<(&str, u64)> = next
            .changes(&live, |r| r)
            .into_iter()
            .map(|c| match c {
                Change::Gone(id) => ("gone", id),
                Change::New(r) => ("new", r.id),
                Change::Refiled(r) => ("refiled", r.id),
                Change::Moved(r) => ("moved", r.id),
                Change::Same(r) => ("same", r.id),
            })
            .collect();
        assert_eq!(
            ids,
            [
                ("gone", 1),
                ("same", 4),
                ("new", 7),
                ("refiled", 3),
                ("moved", 2)
            ]
        );
    }

    fn first_error(s: &str) -> LineError {
        parse(s).unwrap_err().remove(0)
    }

    #[test]
    fn parses_a_3d_scene_with_columns_in_any_order() {
        let s = parse(
            "# a comment\n\nid,frame,kind,x,y,z,r,hx,hy,hz,extra,layer,mask,static\n\
             1,0,sphere,1,2,3,0.5,,,,whatever,,,\n\
             2,0,box,0,0,0,,1,2,3,,0x10,0b11,true\n\
             \n# between\n\
             1,4,sphere,1,2,3,0.75,,,,,1,7,0\r\n",
        )
        .unwrap();
        assert_eq!(s.dim, Dim::Three);
        assert_eq!(s.frames.len(), 2);
        assert_eq!(s.frames[0].number, 0);
        assert_eq!(s.frames[1].number, 4);
        let a = s.frames[0].rows[0];
        assert_eq!(
            (a.id, a.kind, a.center, a.size[0]),
            (1, Kind::Sphere, [1.0, 2.0, 3.0], 0.5)
        );
        assert_eq!((a.layer, a.mask, a.is_static), (1, u32::MAX, false));
        let b = s.frames[0].rows[1];
        assert_eq!(
            (b.kind, b.size, b.layer, b.mask, b.is_static),
            (Kind::Box, [1.0, 2.0, 3.0], 16, 3, true)
        );
        assert_eq!(s.frames[1].rows[0].line, 8);
        assert_eq!(s.frame_index(4), Some(1));
        assert_eq!(s.frame_index(2), None);
    }

    #[test]
    fn parses_a_2d_scene_without_optional_columns() {
        let s =
            parse("frame,id,kind,x,y,r,hx,hy\n0,5,circle,1,1,2,,\n0,6,rect,0,0,,1,1\n").unwrap();
        assert_eq!(s.dim, Dim::Two);
        assert_eq!(s.frames[0].rows.len(), 2);
        let sh = s.frames[0].rows[1].shape::<Vec2>();
        assert_eq!(sh.aabb().min, Vec2::new(-1.0, -1.0));
    }

    #[test]
    fn header_only_scenes_are_empty_with_the_dimension_of_their_columns() {
        assert_eq!(parse("frame,id,kind,x,y\n").unwrap().dim, Dim::Two);
        let s = parse("\u{feff}frame,id,kind,x,y,z\n").unwrap();
        assert_eq!(s.dim, Dim::Three);
        assert!(s.frames.is_empty());
    }

    #[test]
    fn empty_files_and_missing_columns_are_errors() {
        assert_eq!(first_error("").line, 1);
        assert_eq!(first_error("# only\n\n").line, 2);
        let e = first_error("# c\nframe,id,x,y\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("`kind`"), "{e}");
        let e = first_error("frame,id,kind,x,y\n0,1,sphere,0,0\n");
        assert!(e.message.contains("column `z`"), "{e}");
        let e = first_error("frame,id,kind,x,y\n0,1,circle,0,0\n");
        assert!(e.message.contains("column `r`"), "{e}");
        let e = first_error("frame,id,kind,x,y,X\n");
        assert!(e.message.contains("twice"), "{e}");
    }

    #[test]
    fn bad_values_are_errors_on_their_line() {
        let h = "frame,id,kind,x,y,r,hx,hy\n";
        let cases = [
            ("0,1,circle,0,,1,,", "missing value for `y`"),
            ("0,1,circle,0,0,1,", "values but the header"),
            ("0,1,circle,0,0,1,,,", "values but the header"),
            ("0,1,circle,0,abc,1,,", "not a number"),
            ("0,1,circle,0,NaN,1,,", "NaN"),
            ("0,1,circle,0,inf,1,,", "infinite"),
            ("0,1,circle,0,1e39,1,,", "f32 range"),
            ("0,1,circle,0,0,-1,,", "negative radius"),
            ("0,1,rect,0,0,,1,-0.5", "negative half extent hy"),
            ("0,1,triangle,0,0,1,,", "unknown kind"),
            ("0,-1,circle,0,0,1,,", "id"),
            ("0.5,1,circle,0,0,1,,", "frame"),
            ("0,1,rect,3e38,0,,3e38,1", "overflow"),
        ];
        for (row, want) in cases {
            let e = first_error(&format!("{h}{row}\n"));
            assert_eq!(e.line, 2, "{row}");
            assert!(e.message.contains(want), "{row}: {e}");
        }
        let h = "frame,id,kind,x,y,r,layer,mask,static\n";
        for (row, want) in [
            ("0,1,circle,0,0,1,x,,", "layer"),
            ("0,1,circle,0,0,1,,0x1ffffffff,", "mask"),
            ("0,1,circle,0,0,1,,,2", "static"),
        ] {
            let e = first_error(&format!("{h}{row}\n"));
            assert!(e.message.contains(want), "{row}: {e}");
        }
    }

    #[test]
    fn cross_row_rules() {
        let h = "frame,id,kind,x,y,z,r\n";
        let e = first_error(&format!("{h}0,1,sphere,0,0,0,1\n0,2,circle,0,0,,1\n"));
        assert_eq!(e.line, 3);
        assert!(e.message.contains("2D kind `circle` in a 3D scene"), "{e}");
        let e = first_error(&format!("{h}3,1,sphere,0,0,0,1\n2,2,sphere,0,0,0,1\n"));
        assert!(e.message.contains("frame 2 after frame 3"), "{e}");
        let e = first_error(&format!("{h}3,1,sphere,0,0,0,1\n3,1,sphere,1,0,0,1\n"));
        assert!(
            e.message
                .contains("id 1 appears twice in frame 3 (first on line 2)"),
            "{e}"
        );
        // The same id in the next frame is fine.
        assert!(parse(&format!("{h}3,1,sphere,0,0,0,1\n4,1,sphere,1,0,0,1\n")).is_ok());
    }

    #[test]
    fn every_error_is_reported_up_to_the_limit() {
        let mut s = String::from("frame,id,kind,x,y,r\n");
        for i in 0..50 {
            s.push_str(&format!("0,{i},circle,0,0,bad\n"));
        }
        let errors = parse(&s).unwrap_err();
        assert_eq!(errors.len(), MAX_ERRORS);
        assert_eq!(errors[3].line, 5);
    }

    #[test]
    fn invalid_utf8_is_an_error_on_its_line() {
        let e = parse_scene(b"frame,id,kind,x,y,r\n0,1,circle,0,0,\xff\n").unwrap_err();
        assert_eq!(e[0].line, 2);
        assert!(e[0].message.contains("UTF-8"));
    }

    #[test]
    fn bits_and_numbers() {
        assert_eq!(parse_bits("0xFF"), Some(255));
        assert_eq!(parse_bits("0b101"), Some(5));
        assert_eq!(parse_bits("4294967295"), Some(u32::MAX));
        assert_eq!(parse_bits("4294967296"), None);
        assert_eq!(parse_bits("-1"), None);
        assert_eq!(parse_bits(""), None);
        assert!(parse_f32("1e-50", "x").is_ok()); // underflows to 0: fine
        assert!(parse_f32("-inf", "x").is_err());
        assert!(parse_f32("", "x").is_err());
    }
}
