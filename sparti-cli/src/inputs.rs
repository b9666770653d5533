//! Reading a command's input files: scene files checked against what
//! sparti's structures accept, and query files, each error given as
//! `FILE:LINE: message` for stderr.

use std::path::{Path, PathBuf};

use sparti::Vector;
use sparti::glam::{Vec2, Vec3};

use crate::measure::check_scene;
use crate::queries::{Query, parse_queries};
use crate::scene::{Dim, Scene, parse_scene};

/// Reads and parses a scene file and checks that sparti's structures can
/// hold its objects; the error is the `FILE:LINE: message`
/// text for stderr.
///
/// # Errors
/// The file cannot be read or is malformed.
pub fn load_scene(path: &Path) -> Result<Scene, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("{}: cannot read the file: {e}", path.display()))?;
    let at = |errors: &[crate::scene::LineError]| {
        errors
            .iter()
            .map(|e| format!("{}:{}: {}", path.display(), e.line, e.message))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let scene = parse_scene(&bytes).map_err(|e| at(&e))?;
    match scene.dim {
        Dim::Two => check_scene::<Vec2>(&scene),
        Dim::Three => check_scene::<Vec3>(&scene),
    }
    .map_err(|e| at(&[e]))?;
    Ok(scene)
}

/// A scene's query file: `explicit` when given, otherwise the file beside
/// the scene with the extension `.queries` (`discs2d.csv` and
/// `discs2d.queries`), if there is one.
pub fn query_file(scene: &Path, explicit: Option<&Path>) -> Option<PathBuf> {
    explicit.map(Path::to_path_buf).or_else(|| {
        let beside = scene.with_extension("queries");
        (beside != scene && beside.is_file()).then_some(beside)
    })
}

/// Reads and parses a query file for a scene of `V`'s dimension; the
/// error is the `FILE:LINE: message` text for stderr.
///
/// # Errors
/// The file cannot be read or is malformed.
pub fn load_queries<V: Vector>(path: &Path) -> Result<Vec<Query<V>>, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("{}: cannot read the file: {e}", path.display()))?;
    parse_queries(&bytes).map_err(|errors| {
        errors
            .iter()
            .map(|e| format!("{}:{}: {}", path.display(), e.line, e.message))
            .collect::<Vec<_>>()
            .join("\n")
    })
}
