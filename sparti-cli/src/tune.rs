//! `sparti tune`: replays a scene through every structure of its
//! dimension over a grid of settings, and recommends the fastest.
//!
//! The grid, around the scene's typical object size `t` (the median of its
//! objects' largest extents, [`typical_size`]) rounded to a power of two
//! `p`: minimum node size (BSP: minimum dimension) `p/4, p/2, p, 2p, 4p`;
//! looseness 1.25, 1.5, 2, 3 for the loose trees; leaf capacity 0, 1, 2, 4,
//! 8 for the loose trees and the BSP; and the brute force. `--quick` keeps
//! `p/2, p, 2p`, looseness 1.5 and 2, leaf capacity 0, 2, 8. When a
//! structure's fastest setting has the grid's largest (smallest) size, it
//! is tried at the next power of two out, and so on while that wins (up to
//! four steps, not below `t/64`).
//!
//! Each setting is measured as in `sparti bench` ([`crate::measure`]): the
//! scene replayed frame by frame (in a loop when it is short), each frame
//! its changes, every pair, then the queries of the scene's query file if
//! it has one (`--queries`, or the `.queries` file beside the scene), as
//! a game would each frame; warm-up frames, then the median frame time. The fastest few and the default
//! (the scene's default structure, `octree` or `quadtree`, with the
//! library's default settings) are then measured again, interleaved, and
//! ranked by the median of their runs, which tames the luck of a single
//! run. Of the settings within 2% of the fastest, the one that changes the
//! fewest defaults is recommended (settings that make no difference stay
//! at their defaults). Every setting must find the same pairs and query
//! results as the brute force in every frame (exit code 3 otherwise).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use sparti::Vector;
use sparti::glam::{Vec2, Vec3};

use crate::catalogue::grid;
use crate::console::{MISMATCH, complain, format_table, print, progress, sig3};
use crate::inputs::{load_queries, load_scene, query_file};
use crate::measure::{Config, Run, ScenePlan, Structure, Timing, measure, median, typical_size};
use crate::queries::Query;
use crate::scene::{Dim, Scene};

/// The arguments of `sparti tune`.
#[derive(clap::Args, Debug, Clone)]
pub struct TuneArgs {
    /// The scene file (CSV, see the README).
    pub scene: PathBuf,
    /// A smaller grid and fewer frames (a few seconds).
    #[arg(long)]
    pub quick: bool,
    /// The queries the game makes every frame (a query file, see the
    /// README), answered after the pairs and timed with them, so that the
    /// ranking weighs them. Default: the file beside the scene with the
    /// extension `.queries`, if there is one.
    #[arg(long, value_name = "FILE")]
    pub queries: Option<PathBuf>,
}

/// The default structure of a dimension with its default settings.
pub fn default_config() -> Config {
    Config::default_of(Structure::Orthtree)
}

/// A setting's measurements.
struct Tried {
    config: Config,
    runs: Vec<Run>,
}

impl Tried {
    /// The median of the runs' median frame times, in ms.
    fn ms(&self) -> f64 {
        let m: Vec<f64> = self.runs.iter().map(Run::median_ms).collect();
        median(&m)
    }

    /// The runs' spread: (slowest - fastest) / median, 0 for one run.
    fn spread(&self) -> f64 {
        let m: Vec<f64> = self.runs.iter().map(Run::median_ms).collect();
        let (lo, hi) = m
            .iter()
            .fold((f64::INFINITY, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
        if m.len() < 2 || self.ms() <= 0.0 {
            0.0
        } else {
            (hi - lo) / self.ms()
        }
    }

    /// The median of the runs' median time in the queries, in ms.
    fn query_ms(&self) -> f64 {
        let m: Vec<f64> = self.runs.iter().map(Run::median_query_ms).collect();
        median(&m)
    }

    fn tests_per_object(&self) -> f64 {
        let r = &self.runs[0];
        r.mean_pair_tests() / r.mean_objects().max(1.0)
    }
}

/// Steps the grid may be extended by, per structure.
const MAX_EXTENSIONS: usize = 4;

/// How many settings differ from the structure's defaults (the default
/// structure itself counts as none, another structure as one more).
fn changes(config: Config) -> usize {
    usize::from(config.structure() != Structure::Orthtree) + config.changed_fields().len()
}

/// A setting in words: `loose-quadtree with min_node_size 2, ...`.
fn describe(config: Config, dim: usize) -> String {
    match config {
        Config::Brute => "the brute force (brute)".to_string(),
        c => format!("{} with {}", c.structure().name(dim), c.params()),
    }
}

/// Largest scene on which the brute force is the reference.
const BRUTE_LIMIT: usize = 20_000;

/// What a search measured: every setting tried, fastest first.
struct Search {
    tried: Vec<Tried>,
    /// The settings tried beyond the grid's edge.
    extra: Vec<Config>,
    /// Settings whose pairs or query results differed from the reference's.
    mismatches: Vec<String>,
    /// Settings the scene could not run through (refused input).
    errors: Vec<String>,
    timing: Timing,
    /// How many of the fastest were measured again, and how many times.
    finalists: usize,
    rounds: usize,
}

/// How each setting is timed: a few frames and a short minimum with
/// `--quick`.
fn timing(frames: usize, quick: bool) -> Timing {
    if quick {
        Timing {
            warm_up: 2.min(frames),
            min_frames: frames.clamp(5, 50),
            min_time: Duration::from_millis(10),
            max_frames: 500,
        }
    } else {
        Timing {
            warm_up: 3.min(frames),
            min_frames: frames.clamp(10, 300),
            min_time: Duration::from_millis(100),
            max_frames: 5000,
        }
    }
}

/// The search: every setting of the grid measured once (the reference
/// first, the brute force, or the default beyond the brute force's
/// limit); a structure whose fastest setting has the grid's largest
/// (smallest) size tried at the next power of two out while that keeps
/// winning; then the fastest few and the default measured again,
/// interleaved. Ranked by the median of each setting's runs.
fn search<V: Vector>(
    args: &TuneArgs,
    plan: &ScenePlan<V>,
    queries: &[Query<V>],
    typical: f32,
    default: Config,
) -> Search {
    let dim = V::DIM;
    let mut configs = grid(typical, args.quick);
    if plan.max_objects > BRUTE_LIMIT {
        configs.retain(|c| *c != Config::Brute);
    }
    if !configs.contains(&default) {
        configs.push(default);
    }
    // The reference for the pairs comes first.
    if let Some(i) = configs
        .iter()
        .position(|c| *c == Config::Brute)
        .or_else(|| configs.iter().position(|c| *c == default))
    {
        configs.swap(0, i);
    }
    let timing = timing(plan.len(), args.quick);
    let (finalists, rounds) = if args.quick { (3, 1) } else { (5, 3) };
    let bar = progress((configs.len() + (finalists + 1) * rounds) as u64);
    let mut tried: Vec<Tried> = Vec::new();
    let mut mismatches = Vec::new();
    let mut errors = Vec::new();
    let mut reference: Option<(Config, Run)> = None;
    let mut one = |config: Config, bar: &indicatif::ProgressBar| -> Option<Run> {
        bar.set_message(format!(
            "{} {}",
            config.structure().name(dim),
            config.params()
        ));
        let result = measure::<V>(config, None, &mut plan.source(), queries, &timing);
        bar.inc(1);
        match result {
            Ok(run) => {
                match &reference {
                    None => reference = Some((config, run.clone())),
                    Some((rc, r)) => {
                        if let Some(d) = run.first_difference(r) {
                            mismatches.push(format!(
                                "MISMATCH: {} ({}) frame {} of the replay: {}",
                                config.structure().name(dim),
                                config.params(),
                                d.frame,
                                d.describe(rc.structure().name(dim))
                            ));
                        }
                    }
                }
                Some(run)
            }
            Err(e) => {
                errors.push(format!(
                    "{}: {} ({}): {}",
                    args.scene.display(),
                    config.structure().name(dim),
                    config.params(),
                    e.message
                ));
                None
            }
        }
    };
    for &config in &configs {
        if let Some(run) = one(config, &bar) {
            tried.push(Tried {
                config,
                runs: vec![run],
            });
        }
    }
    let mut extra = Vec::new();
    for s in [Structure::Orthtree, Structure::Loose, Structure::Bsp] {
        for _ in 0..MAX_EXTENSIONS {
            let of_s = || tried.iter().filter(|t| t.config.structure() == s);
            let Some(best) = of_s().min_by(|a, b| a.ms().total_cmp(&b.ms())) else {
                break;
            };
            let Some(size) = best.config.size() else {
                break;
            };
            let sizes: Vec<f32> = of_s().filter_map(|t| t.config.size()).collect();
            let (lo, hi) = sizes
                .iter()
                .fold((f32::INFINITY, 0f32), |(l, h), &x| (l.min(x), h.max(x)));
            let next = if size >= hi {
                size * 2.0
            } else if size <= lo && size / 2.0 >= typical / 64.0 {
                size / 2.0
            } else {
                break;
            };
            let config = best.config.with_size(next);
            bar.inc_length(1);
            let Some(run) = one(config, &bar) else { break };
            extra.push(config);
            tried.push(Tried {
                config,
                runs: vec![run],
            });
        }
    }
    // Confirmation rounds: the fastest few and the default, interleaved.
    tried.sort_by(|a, b| a.ms().total_cmp(&b.ms()));
    let mut again: Vec<usize> = (0..finalists.min(tried.len())).collect();
    if let Some(d) = tried.iter().position(|t| t.config == default)
        && !again.contains(&d)
    {
        again.push(d);
    }
    for _ in 0..rounds {
        for &i in &again {
            if let Some(run) = one(tried[i].config, &bar) {
                tried[i].runs.push(run);
            }
        }
    }
    bar.finish_and_clear();
    tried.sort_by(|a, b| a.ms().total_cmp(&b.ms()));
    Search {
        tried,
        extra,
        mismatches,
        errors,
        timing,
        finalists,
        rounds,
    }
}

/// The setting recommended against the default's: among the settings
/// within 2% of the fastest, the one that changes the fewest defaults
/// (settings that make no difference are left at theirs).
struct Recommendation<'a> {
    best: &'a Tried,
    default: &'a Tried,
    /// How many settings are within 2% of the fastest.
    near: usize,
    /// The runs' spread to weigh a gain against: the larger of the best's
    /// and the default's, at least 5%.
    noise: f64,
}

/// `None` when the default itself could not be measured.
fn recommend(tried: &[Tried], default: Config) -> Option<Recommendation<'_>> {
    let def = tried.iter().find(|t| t.config == default)?;
    let fastest = tried[0].ms();
    let near: Vec<&Tried> = tried.iter().filter(|t| t.ms() <= fastest * 1.02).collect();
    let best = near
        .iter()
        .copied()
        .min_by_key(|t| changes(t.config))
        .unwrap_or(&tried[0]);
    Some(Recommendation {
        best,
        default: def,
        near: near.len(),
        noise: best.spread().max(def.spread()).max(0.05),
    })
}

/// What the report tells beside the search: the scene, and its queries.
struct Setting<'a> {
    scene: &'a std::path::Path,
    dim: usize,
    frames: usize,
    max_objects: usize,
    typical: f32,
    /// The query file and how many queries it holds.
    queries: Option<(&'a std::path::Path, usize)>,
    default: Config,
}

/// The report: the scene and what was timed, the ranked table (the
/// fastest 15, the best of each structure and the default), notes, and the
/// recommendation with the code to paste.
fn render(setting: &Setting, search: &Search, rec: &Recommendation) -> String {
    let (dim, default, tried) = (setting.dim, setting.default, &search.tried);
    let (def_ms, def_tests) = (rec.default.ms(), rec.default.tests_per_object());
    let mut text = String::new();
    let _ = writeln!(
        text,
        "scene {}: {dim}D, {} frames, up to {} objects, typical object size {} (median largest extent)",
        setting.scene.display(),
        setting.frames,
        setting.max_objects,
        sig3(f64::from(setting.typical))
    );
    let counts = tried
        .iter()
        .flat_map(|t| t.runs.iter().map(|r| r.seconds.len()));
    let (fewest, most) = counts.fold((usize::MAX, 0), |(l, h), n| (l.min(n), h.max(n)));
    match setting.queries {
        Some((q, count)) => {
            let _ = writeln!(
                text,
                "each frame: the scene's changes, every pair, then the {count} queries of {} (ranked by the whole frame; \"of it queries\" is their part)",
                q.display()
            );
        }
        None => {
            let _ = writeln!(
                text,
                "each frame: the scene's changes and every pair (no query file: give the game's queries with --queries FILE so that the ranking weighs them)"
            );
        }
    }
    let _ = writeln!(
        text,
        "{} settings measured; each run: the median time of {} frames (the scene replayed in a loop) after {} warm-up frames; the {} fastest and the default run {} more time(s), ranked by the median of their runs.\n",
        tried.len(),
        if fewest == most {
            fewest.to_string()
        } else {
            format!("{fewest} to {most}")
        },
        search.timing.warm_up,
        search.finalists,
        search.rounds
    );
    let mut shown: Vec<usize> = (0..15.min(tried.len())).collect();
    for s in Structure::ALL {
        if let Some(i) = tried.iter().position(|t| t.config.structure() == s)
            && !shown.contains(&i)
        {
            shown.push(i);
        }
    }
    if let Some(i) = tried.iter().position(|t| t.config == default)
        && !shown.contains(&i)
    {
        shown.push(i);
    }
    shown.sort_unstable();
    let has_queries = setting.queries.is_some_and(|(_, n)| n > 0);
    let rows: Vec<Vec<String>> = shown
        .iter()
        .map(|&i| {
            let t = &tried[i];
            let mut name = t.config.structure().name(dim).to_string();
            if t.config == default {
                name.push_str(" (default)");
            }
            vec![
                (i + 1).to_string(),
                name,
                t.config.params(),
                sig3(t.ms()),
                if has_queries {
                    sig3(t.query_ms())
                } else {
                    "-".into()
                },
                sig3(t.tests_per_object()),
                t.runs.len().to_string(),
                format!("{:+.0}%", (def_ms / t.ms() - 1.0) * 100.0),
            ]
        })
        .collect();
    text.push_str(&format_table(
        &[
            "rank",
            "structure",
            "settings",
            "ms/frame",
            "of it queries",
            "tests/object",
            "runs",
            "speed vs default",
        ],
        &rows,
        &[false, true, true, false, false, false, false, false],
    ));
    if shown.len() < tried.len() {
        let _ = writeln!(
            text,
            "({} of {} settings shown: the fastest 15, the best of each structure and the default)",
            shown.len(),
            tried.len()
        );
    }
    if !search.extra.is_empty() {
        let _ = writeln!(
            text,
            "(the fastest setting of a structure was at the edge of the grid: also tried {})",
            search
                .extra
                .iter()
                .map(|c| format!("{} with {}", c.structure().name(dim), c.params()))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if rec.near > 1 {
        let _ = writeln!(
            text,
            "({} settings are within 2% of the fastest; of those, the one that changes the fewest defaults is recommended)",
            rec.near
        );
    }
    let (best, noise) = (rec.best, rec.noise);
    let best_ms = best.ms();
    let speedup = def_ms / best_ms;
    text.push('\n');
    let default_name = format!(
        "{} with default settings ({})",
        default.structure().name(dim),
        default.code(dim)
    );
    if best.config == default {
        let _ = writeln!(
            text,
            "recommendation: keep the default, {default_name}: the fastest measured, {} ms per frame.",
            sig3(def_ms)
        );
    } else if speedup - 1.0 < noise {
        let _ = writeln!(
            text,
            "recommendation: keep the default, {default_name}: the fastest, {}, is only {:.0}% faster ({} instead of {} ms per frame), within the measurement noise ({:.0}% between runs).",
            describe(best.config, dim),
            (speedup - 1.0) * 100.0,
            sig3(best_ms),
            sig3(def_ms),
            noise * 100.0
        );
    } else {
        let _ = writeln!(
            text,
            "recommendation: use {}, {:.0}% faster than {default_name}: {} instead of {} ms per frame ({} times the speed, {:.0}% less time), {} pair tests per object instead of {} (runs of one setting differ by up to {:.0}%).\n    {}",
            describe(best.config, dim),
            (speedup - 1.0) * 100.0,
            sig3(best_ms),
            sig3(def_ms),
            sig3(speedup),
            (1.0 - best_ms / def_ms) * 100.0,
            sig3(best.tests_per_object()),
            sig3(def_tests),
            noise * 100.0,
            best.config.code(dim)
        );
    }
    if best.config == Config::Brute
        && let Some(tree) = tried.iter().find(|t| t.config != Config::Brute)
    {
        let _ = writeln!(
            text,
            "(with this few objects testing every pair is cheapest; if the scene grows, the fastest tree here is {}: {} ms per frame, {:+.0}% against the default)",
            describe(tree.config, dim),
            sig3(tree.ms()),
            (def_ms / tree.ms() - 1.0) * 100.0
        );
    }
    text
}

/// `sparti tune` on a loaded scene: loads its queries, searches, prints the
/// report, then the errors and mismatches (exit code 1 or 3).
fn tune<V: Vector>(args: &TuneArgs, scene: &Scene) -> ExitCode {
    let query_path = query_file(&args.scene, args.queries.as_deref());
    let queries = match query_path.as_deref().map(load_queries::<V>).transpose() {
        Ok(q) => q.unwrap_or_default(),
        Err(e) => {
            complain(&e);
            return ExitCode::from(2);
        }
    };
    let plan = ScenePlan::<V>::new(scene);
    if plan.max_objects == 0 {
        complain(&format!(
            "{}: the scene has no objects to tune on",
            args.scene.display()
        ));
        return ExitCode::from(2);
    }
    let typical = typical_size(scene);
    let default = default_config();
    let search = search(args, &plan, &queries, typical, default);
    let Some(rec) = recommend(&search.tried, default) else {
        for e in &search.errors {
            complain(e);
        }
        return ExitCode::from(1);
    };
    let setting = Setting {
        scene: &args.scene,
        dim: V::DIM,
        frames: plan.len(),
        max_objects: plan.max_objects,
        typical,
        queries: query_path.as_deref().map(|q| (q, queries.len())),
        default,
    };
    if !print(&render(&setting, &search, &rec)) {
        return ExitCode::from(1);
    }
    for e in &search.errors {
        complain(e);
    }
    if !search.mismatches.is_empty() {
        for m in &search.mismatches {
            complain(m);
        }
        complain(&format!(
            "sparti tune: {} setting(s) disagreed with the reference: this is a bug in sparti",
            search.mismatches.len()
        ));
        return ExitCode::from(MISMATCH);
    }
    if search.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Runs `sparti tune`.
pub fn main(args: &TuneArgs) -> ExitCode {
    let scene = match load_scene(&args.scene) {
        Ok(s) => s,
        Err(message) => {
            complain(&message);
            return ExitCode::from(2);
        }
    };
    match scene.dim {
        Dim::Two => tune::<Vec2>(args, &scene),
        Dim::Three => tune::<Vec3>(args, &scene),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_is_around_the_typical_size() {
        let g = grid(3.0, false);
        // 3 rounds to 4: sizes 1, 2, 4, 8, 16.
        assert!(g.contains(&Config::Orthtree { min_node_size: 1.0 }));
        assert!(g.contains(&Config::Orthtree {
            min_node_size: 16.0
        }));
        assert_eq!(g.len(), 1 + 5 + 5 * 4 * 5 + 5 * 5);
        assert_eq!(grid(3.0, true).len(), 1 + 3 + 3 * 2 * 3 + 3 * 3);
    }

    #[test]
    fn changes_from_the_defaults_are_counted() {
        assert_eq!(changes(default_config()), 0);
        assert_eq!(changes(Config::Orthtree { min_node_size: 4.0 }), 1);
        assert_eq!(changes(Config::default_of(Structure::Loose)), 1);
        let c = Config::default_of(Structure::Bsp).with_size(8.0);
        assert_eq!(c.size(), Some(8.0));
        assert_eq!(changes(c), 2);
        assert_eq!(changes(Config::Brute), 1);
    }
}
