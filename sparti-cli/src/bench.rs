//! `sparti bench`: every structure and the brute force on the built-in
//! scenarios ([`crate::scenarios`]) in 2D and 3D at several sizes, and on
//! scene files, in one run; a table on stdout, and a report directory with
//! `index.html`, one SVG plot per scenario (milliseconds per frame against
//! the number of objects, one line per structure) and `results.csv`.
//!
//! Each measurement ([`crate::measure`]): a few warm-up frames, then the
//! median of at least several frames of (update every object, find every
//! pair), single-threaded. The brute force runs while its predicted frame
//! (from its last size, growing as N²) stays under a budget; every other
//! structure must find the same pairs as the brute force in every frame
//! (or, where the brute force did not run, as each other): a difference is
//! reported on stderr and the command exits with code 3. A scene file with
//! a query file beside it also answers those queries every frame, after
//! the pairs: their time is part of the frame (and shown apart), and their
//! results too must agree.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use indicatif::ProgressBar;
use sparti::glam::{Vec2, Vec3};
use sparti::{Aabb, Vector};

use crate::console::{MISMATCH, complain, format_table, print, progress, sig3};
use crate::inputs::{load_queries, load_scene, query_file};
use crate::measure::{Config, Run, ScenePlan, Structure, Timing, measure};
use crate::plot::{Plot, Series, escape};
use crate::queries::Query;
use crate::scenarios::{Scenario, Synthetic};
use crate::scene::{Dim, Scene};

/// The arguments of `sparti bench`.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Scene files (CSV, see the README) to replay through every structure
    /// of their dimension, besides the built-in scenarios. A query file
    /// beside a scene (`discs2d.queries` beside `discs2d.csv`) is answered
    /// every frame, after the pairs, and timed with them.
    pub scenes: Vec<PathBuf>,
    /// A short run (well under 20 s in a release build): sizes
    /// 1000,3000,10000 and fewer frames.
    #[arg(long)]
    pub quick: bool,
    /// The report directory (created if needed): index.html, one SVG per
    /// scenario, results.csv.
    #[arg(long, default_value = "bench-report")]
    pub out: PathBuf,
    /// Object counts for the built-in scenarios, comma-separated (default
    /// 1000,3000,10000,30000,100000; 1000,3000,10000 with --quick).
    #[arg(long, value_delimiter = ',')]
    pub sizes: Option<Vec<usize>>,
}

/// One measured (structure, workload) of the table.
#[derive(Clone, Debug)]
pub struct Entry {
    /// 2 or 3.
    pub dim: usize,
    /// The scenario's name, or the scene file's path.
    pub workload: String,
    /// True for a scene file.
    pub is_scene: bool,
    /// Objects (the scenario's N; a scene's most objects in a frame).
    pub n: usize,
    /// The structure's name.
    pub structure: &'static str,
    /// The measurement.
    pub run: Run,
    /// Mean pairs per frame over the frames every structure of the
    /// workload ran (warm-up included), so that they compare.
    pub pairs_per_frame: f64,
    /// Median time over the best median of the same workload.
    pub ratio: f64,
}

impl Entry {
    /// Nanoseconds per live object per frame.
    pub fn ns_per_object(&self) -> f64 {
        self.run.median_ms() * 1e6 / self.run.mean_objects().max(1.0)
    }

    /// Pair tests per live object per frame.
    pub fn tests_per_object(&self) -> f64 {
        self.run.mean_pair_tests() / self.run.mean_objects().max(1.0)
    }

    /// The median milliseconds per frame spent in the scene's queries, or
    /// `-` for a workload without queries.
    pub fn query_ms(&self) -> String {
        if self.run.query_seconds.is_empty() {
            "-".into()
        } else {
            sig3(self.run.median_query_ms())
        }
    }
}

/// The whole run's settings.
struct Settings {
    timing: Timing,
    /// The brute force is skipped when its predicted frame exceeds this.
    brute_budget_ms: f64,
}

/// What the run found.
#[derive(Default)]
struct Results {
    entries: Vec<Entry>,
    /// Notes on runs left out.
    skipped: Vec<String>,
    /// Structures that disagreed with the reference.
    mismatches: Vec<String>,
    /// A structure failed (refused an object): message for stderr.
    errors: Vec<String>,
}

/// Measures every structure of `V`'s dimension on one workload, checks
/// their pairs against the first run (the brute force when it ran), and
/// fills in the ratios.
#[allow(clippy::too_many_arguments)]
fn group<'a, V: Vector>(
    results: &mut Results,
    bar: &ProgressBar,
    settings: &Settings,
    label: (&str, bool, usize),
    world: Option<Aabb<V>>,
    run_brute: bool,
    source: &dyn Fn() -> Box<dyn crate::measure::Source<V> + 'a>,
    queries: &[Query<V>],
) {
    let (workload, is_scene, n) = label;
    let dim = V::DIM;
    let mut runs: Vec<(Structure, Run)> = Vec::new();
    for s in Structure::ALL {
        bar.set_message(format!("{dim}D {workload} N={n} {}", s.name(dim)));
        if s == Structure::Brute && !run_brute {
            bar.inc(1);
            continue;
        }
        let mut src = source();
        match measure::<V>(
            Config::default_of(s),
            world,
            src.as_mut(),
            queries,
            &settings.timing,
        ) {
            Ok(run) => runs.push((s, run)),
            Err(e) => results.errors.push(format!(
                "{}{}: {} {}",
                workload,
                if e.line > 0 {
                    format!(":{}", e.line)
                } else {
                    String::new()
                },
                s.name(dim),
                e.message
            )),
        }
        bar.inc(1);
    }
    if let Some((rs, reference)) = runs.first() {
        for (s, run) in &runs[1..] {
            if let Some(d) = run.first_difference(reference) {
                results.mismatches.push(format!(
                    "MISMATCH: {} on {dim}D {workload} (N={n}) frame {}: {}",
                    s.name(dim),
                    d.frame,
                    d.describe(rs.name(dim))
                ));
            }
        }
    }
    let best = runs
        .iter()
        .map(|(_, r)| r.median_ms())
        .fold(f64::INFINITY, f64::min);
    let common = runs.iter().map(|(_, r)| r.pairs.len()).min().unwrap_or(0);
    for (s, run) in runs {
        let ratio = run.median_ms() / best;
        let pairs = &run.pairs[..common];
        let pairs_per_frame = pairs.iter().sum::<usize>() as f64 / common.max(1) as f64;
        results.entries.push(Entry {
            dim,
            workload: workload.to_string(),
            is_scene,
            n,
            structure: s.name(dim),
            run,
            pairs_per_frame,
            ratio: if ratio.is_finite() { ratio } else { 1.0 },
        });
    }
}

/// The built-in scenarios of one dimension, at every size.
fn scenarios<V: Vector>(
    results: &mut Results,
    bar: &ProgressBar,
    settings: &Settings,
    sizes: &[usize],
) {
    for scenario in Scenario::ALL {
        let mut last_brute: Option<(usize, f64)> = None;
        for &n in sizes {
            let predicted = last_brute.map(|(m, ms)| ms * (n as f64 / m as f64).powi(2).max(1.0));
            let run_brute = predicted.is_none_or(|p| p <= settings.brute_budget_ms);
            if !run_brute {
                results.skipped.push(format!(
                    "brute force skipped on {}D {} N={n}: predicted {} ms per frame (budget {} ms)",
                    V::DIM,
                    scenario.name(),
                    sig3(predicted.unwrap_or(0.0)),
                    settings.brute_budget_ms
                ));
            }
            let world = Synthetic::<V>::new(scenario, n).world();
            group::<V>(
                results,
                bar,
                settings,
                (scenario.name(), false, n),
                Some(world),
                run_brute,
                &|| Box::new(Synthetic::<V>::new(scenario, n)),
                &[],
            );
            if run_brute {
                last_brute = results
                    .entries
                    .iter()
                    .rev()
                    .find(|e| e.structure == "brute" && e.n == n && e.workload == scenario.name())
                    .map(|e| (n, e.run.median_ms()));
            }
        }
    }
}

/// Largest scene on which the brute force runs (in objects per frame).
const BRUTE_SCENE_LIMIT: usize = 20_000;

fn scene_group<V: Vector>(
    results: &mut Results,
    bar: &ProgressBar,
    settings: &Settings,
    path: &Path,
    scene: &Scene,
    query_path: Option<&Path>,
) {
    let plan = ScenePlan::<V>::new(scene);
    let name = path.display().to_string();
    let queries = match query_path.map(load_queries::<V>).transpose() {
        Ok(q) => q.unwrap_or_default(),
        Err(e) => {
            results.errors.push(e);
            bar.inc(Structure::ALL.len() as u64);
            return;
        }
    };
    if let Some(q) = query_path {
        results.skipped.push(format!(
            "{name}: every frame also answers the {} queries of {} (\"of it queries\")",
            queries.len(),
            q.display()
        ));
    }
    if plan.max_objects == 0 {
        results
            .skipped
            .push(format!("{name}: no objects, nothing to measure"));
        bar.inc(Structure::ALL.len() as u64);
        return;
    }
    let run_brute = plan.max_objects <= BRUTE_SCENE_LIMIT;
    if !run_brute {
        results.skipped.push(format!(
            "brute force skipped on {name}: {} objects (limit {BRUTE_SCENE_LIMIT})",
            plan.max_objects
        ));
    }
    group::<V>(
        results,
        bar,
        settings,
        (&name, true, plan.max_objects),
        None,
        run_brute,
        &|| Box::new(plan.source()),
        &queries,
    );
}

/// The terminal table.
fn table(entries: &[Entry]) -> String {
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            vec![
                format!("{}D {}", e.dim, e.workload),
                e.n.to_string(),
                e.structure.to_string(),
                sig3(e.run.median_ms()),
                e.query_ms(),
                sig3(e.ns_per_object()),
                sig3(e.tests_per_object()),
                sig3(e.pairs_per_frame),
                format!("{}x", sig3(e.ratio)),
            ]
        })
        .collect();
    format_table(
        &[
            "scenario",
            "N",
            "structure",
            "ms/frame",
            "of it queries",
            "ns/object",
            "tests/object",
            "pairs/frame",
            "vs best",
        ],
        &rows,
        &[true, false, true, false, false, false, false, false, false],
    )
}

fn csv(entries: &[Entry]) -> String {
    let mut s = String::from(
        "dim,scenario,n,structure,ms_per_frame,ns_per_object,pair_tests_per_object,pairs_per_frame,frames,ratio_to_best,query_ms_per_frame\n",
    );
    for e in entries {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{}",
            e.dim,
            e.workload.replace(',', ";"),
            e.n,
            e.structure,
            e.run.median_ms(),
            e.ns_per_object(),
            e.tests_per_object(),
            e.pairs_per_frame,
            e.run.seconds.len(),
            e.ratio,
            if e.run.query_seconds.is_empty() {
                String::new()
            } else {
                e.run.median_query_ms().to_string()
            }
        );
    }
    s
}

/// The plots: one per (dimension, scenario), file name and SVG.
fn plots(entries: &[Entry]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dim in [3, 2] {
        for scenario in Scenario::ALL {
            let of: Vec<&Entry> = entries
                .iter()
                .filter(|e| !e.is_scene && e.dim == dim && e.workload == scenario.name())
                .collect();
            if of.is_empty() {
                continue;
            }
            let series = Structure::ALL
                .iter()
                .map(|s| Series {
                    name: s.name(dim).to_string(),
                    points: of
                        .iter()
                        .filter(|e| e.structure == s.name(dim))
                        .map(|e| (e.n as f64, e.run.median_ms()))
                        .collect(),
                })
                .filter(|s| !s.points.is_empty())
                .collect();
            let plot = Plot {
                title: format!("{dim}D {}: cost per frame", scenario.name()),
                x_label: "objects (N)".into(),
                y_label: "ms per frame (update all + pairs)".into(),
                series,
            };
            out.push((format!("{dim}d-{}.svg", scenario.name()), plot.to_svg()));
        }
    }
    out
}

fn html(results: &Results, plots: &[(String, String)], about: &str) -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>sparti bench</title>\n<style>\nbody { font-family: sans-serif; margin: 2em; }\ntable { border-collapse: collapse; }\nth, td { padding: 2px 10px; border-bottom: 1px solid #ddd; }\ntd.n { text-align: right; font-variant-numeric: tabular-nums; }\ntr.best td { font-weight: bold; }\n.bad { color: #b00; font-weight: bold; }\n</style>\n</head>\n<body>\n<h1>sparti bench</h1>\n",
    );
    let _ = writeln!(s, "<p>{}</p>", escape(about));
    if !results.mismatches.is_empty() || !results.errors.is_empty() {
        s.push_str("<h2 class=\"bad\">Problems</h2>\n<ul>\n");
        for m in results.mismatches.iter().chain(&results.errors) {
            let _ = writeln!(s, "<li class=\"bad\">{}</li>", escape(m));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("<h2>Plots</h2>\n");
    for (file, _) in plots {
        let _ = writeln!(
            s,
            "<img src=\"{0}\" alt=\"{0}\" width=\"680\" height=\"420\">",
            escape(file)
        );
    }
    s.push_str("<h2>Table</h2>\n<p>Bold: the fastest structure of its workload. <a href=\"results.csv\">results.csv</a> has the same figures.</p>\n<table>\n<tr><th>scenario</th><th>N</th><th>structure</th><th>ms/frame</th><th>of it queries</th><th>ns/object</th><th>pair tests/object</th><th>pairs/frame</th><th>frames</th><th>vs best</th></tr>\n");
    for e in &results.entries {
        let _ = writeln!(
            s,
            "<tr{}><td>{}D {}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}x</td></tr>",
            if e.ratio <= 1.0 {
                " class=\"best\""
            } else {
                ""
            },
            e.dim,
            escape(&e.workload),
            e.n,
            e.structure,
            sig3(e.run.median_ms()),
            e.query_ms(),
            sig3(e.ns_per_object()),
            sig3(e.tests_per_object()),
            sig3(e.pairs_per_frame),
            e.run.seconds.len(),
            sig3(e.ratio)
        );
    }
    s.push_str("</table>\n");
    if !results.skipped.is_empty() {
        s.push_str("<h2>Left out</h2>\n<ul>\n");
        for m in &results.skipped {
            let _ = writeln!(s, "<li>{}</li>", escape(m));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</body>\n</html>\n");
    s
}

/// Runs `sparti bench`.
pub fn main(args: &BenchArgs) -> ExitCode {
    // Every input is checked before anything runs or is printed.
    let mut sizes = args.sizes.clone().unwrap_or_else(|| {
        if args.quick {
            vec![1_000, 3_000, 10_000]
        } else {
            vec![1_000, 3_000, 10_000, 30_000, 100_000]
        }
    });
    if let Some(bad) = sizes.iter().find(|&&n| !(2..=10_000_000).contains(&n)) {
        complain(&format!(
            "--sizes: {bad} objects is out of range (2 to 10000000)"
        ));
        return ExitCode::from(2);
    }
    sizes.sort_unstable();
    sizes.dedup();
    let mut scenes = Vec::new();
    for path in &args.scenes {
        let loaded = load_scene(path).and_then(|s| {
            // A query file beside the scene is timed with it.
            let queries = query_file(path, None);
            if let Some(q) = &queries {
                match s.dim {
                    Dim::Two => load_queries::<Vec2>(q).map(drop),
                    Dim::Three => load_queries::<Vec3>(q).map(drop),
                }?;
            }
            Ok((path.clone(), s, queries))
        });
        match loaded {
            Ok(scene) => scenes.push(scene),
            Err(message) => {
                complain(&message);
                return ExitCode::from(2);
            }
        }
    }
    let settings = if args.quick {
        Settings {
            timing: Timing {
                warm_up: 2,
                min_frames: 5,
                min_time: Duration::from_millis(30),
                max_frames: 50,
            },
            brute_budget_ms: 60.0,
        }
    } else {
        Settings {
            timing: Timing {
                warm_up: 3,
                min_frames: 7,
                min_time: Duration::from_millis(300),
                max_frames: 200,
            },
            brute_budget_ms: 600.0,
        }
    };
    let per_group = Structure::ALL.len() as u64;
    let total = 2 * Scenario::ALL.len() as u64 * sizes.len() as u64 * per_group
        + scenes.len() as u64 * per_group;
    let bar = progress(total);
    let mut results = Results::default();
    scenarios::<Vec3>(&mut results, &bar, &settings, &sizes);
    scenarios::<Vec2>(&mut results, &bar, &settings, &sizes);
    for (path, scene, queries) in &scenes {
        let queries = queries.as_deref();
        match scene.dim {
            Dim::Two => scene_group::<Vec2>(&mut results, &bar, &settings, path, scene, queries),
            Dim::Three => scene_group::<Vec3>(&mut results, &bar, &settings, path, scene, queries),
        }
    }
    bar.finish_and_clear();

    let t = settings.timing;
    let about = format!(
        "sparti {} ({} run, {} build). Each figure: the median of at least {} frames (and at least {} ms of them, at most {}) after {} warm-up frames; a frame updates every moving object, then finds every pair, then (scene files with a query file beside them) answers the queries; single-threaded, std::time::Instant. Structures with their default settings; built-in scenarios give the structures the region the objects stay in as their world, scene files do not.",
        env!("CARGO_PKG_VERSION"),
        if args.quick { "quick" } else { "full" },
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        t.min_frames,
        t.min_time.as_millis(),
        t.max_frames,
        t.warm_up,
    );
    let plots = plots(&results.entries);
    let written = std::fs::create_dir_all(&args.out)
        .and_then(|()| {
            for (file, svg) in &plots {
                std::fs::write(args.out.join(file), svg)?;
            }
            std::fs::write(args.out.join("results.csv"), csv(&results.entries))?;
            std::fs::write(args.out.join("index.html"), html(&results, &plots, &about))
        })
        .map_err(|e| {
            format!(
                "sparti: cannot write the report in {}: {e}",
                args.out.display()
            )
        });

    let mut text = table(&results.entries);
    for m in &results.skipped {
        let _ = writeln!(text, "note: {m}");
    }
    if !print(&text) {
        return ExitCode::from(1);
    }
    match written {
        Ok(()) => complain(&format!(
            "report: {}",
            args.out.join("index.html").display()
        )),
        Err(e) => {
            complain(&e);
            return ExitCode::from(1);
        }
    }
    for e in &results.errors {
        complain(e);
    }
    if !results.mismatches.is_empty() {
        for m in &results.mismatches {
            complain(m);
        }
        complain(&format!(
            "sparti bench: {} structure(s) disagreed with the brute force (or, where it did not run, with the first tree): this is a bug in sparti",
            results.mismatches.len()
        ));
        return ExitCode::from(MISMATCH);
    }
    if !results.errors.is_empty() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_their_columns() {
        let t = format_table(
            &["name", "ms"],
            &[
                vec!["octree".into(), "1.5".into()],
                vec!["bsp".into(), "12.25".into()],
            ],
            &[true, false],
        );
        assert_eq!(
            t,
            "name       ms\n-------------\noctree    1.5\nbsp     12.25\n"
        );
        assert_eq!(sig3(1234.5), "1234");
        assert_eq!(sig3(0.012345), "0.0123");
        assert_eq!(sig3(f64::NAN), "-");
    }
}
