//! `sparti`: replay a recorded scene through any sparti structure and print
//! what it finds (`pairs`) or what it answers (`query`); time the
//! structures (`bench`) and their settings (`tune`).
//!
//! Exit codes: 0 on success, 2 on bad input (a malformed scene or query
//! file, an unknown or unsuitable index, a frame not in the scene, an
//! unreadable file; clap's usage errors too), 1 when stdout (or bench's
//! report) cannot be written, 3 when bench or tune finds a structure
//! disagreeing with the brute force. On exit code 2 nothing is written to
//! stdout: the whole output is built first, then written at once.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use sparti::glam::{Vec2, Vec3};
use sparti::{SpatialIndex, Vector};
use sparti_cli::catalogue::{Config, IndexJob, Structure};
use sparti_cli::demo;
use sparti_cli::queries::{Query, parse_queries};
use sparti_cli::replay;
use sparti_cli::scene::{Dim, LineError, Scene, parse_scene};

/// Replay recorded game scenes through sparti's spatial structures.
#[derive(Parser)]
#[command(name = "sparti", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every overlapping pair of every frame, as CSV `frame,a,b` (a < b,
    /// sorted by frame, a, b).
    Pairs {
        /// The scene file (CSV, see the README).
        scene: PathBuf,
        /// The structure to replay the scene through (default: octree in
        /// 3D, quadtree in 2D).
        #[arg(long, value_enum)]
        index: Option<IndexName>,
        /// Only this frame's pairs (the scene is still replayed from its
        /// first frame). It must be a frame number present in the scene.
        #[arg(long, allow_negative_numbers = true)]
        frame: Option<i64>,
    },
    /// Answers the queries of a file on the last frame (or on --frame), as
    /// CSV `query,id,distance`.
    Query {
        /// The scene file (CSV, see the README).
        scene: PathBuf,
        /// The query file: one query per line (see the README).
        queries: PathBuf,
        /// The structure to replay the scene through (default: octree in
        /// 3D, quadtree in 2D).
        #[arg(long, value_enum)]
        index: Option<IndexName>,
        /// Run the queries on this frame instead of the last. It must be a
        /// frame number present in the scene.
        #[arg(long, allow_negative_numbers = true)]
        frame: Option<i64>,
    },
    /// The demos: bouncing discs (2D) and a machine gun's bullets (3D),
    /// every structure side by side, live in a window or headless to
    /// images.
    Demo {
        #[command(subcommand)]
        which: DemoCommand,
    },
    /// Times every structure and the brute force on built-in scenarios (2D
    /// and 3D, several sizes) and on scene files: a table, and SVG plots in
    /// an HTML report. Exit code 3 if a structure disagrees with the brute
    /// force.
    Bench(sparti_cli::bench::BenchArgs),
    /// Times every structure of a scene's dimension over a grid of its
    /// settings on the scene, and recommends the fastest.
    Tune(sparti_cli::tune::TuneArgs),
}

/// The two demos.
#[derive(Subcommand)]
enum DemoCommand {
    /// N discs bounce off the walls of a 640x480 window and off each other
    /// (the BSP article's demo); prints pair tests and objects per
    /// node for every structure.
    Discs {
        /// How many discs.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(2..=5000))]
        discs: u64,
        /// The structure whose nodes are drawn first; all of them run.
        #[arg(long, default_value = "quadtree", value_parser = lanes(&demo::discs::STRUCTURES))]
        structure: IndexName,
        #[command(flatten)]
        common: DemoArgs,
    },
    /// A stream of fast bullets crosses a 3D world of static obstacles;
    /// prints the node churn that lazy pruning saves, pair tests
    /// and objects per node.
    Bullets {
        /// The structure whose nodes are drawn first; all of them run.
        #[arg(long, default_value = "octree", value_parser = lanes(&demo::bullets::STRUCTURES))]
        structure: IndexName,
        #[command(flatten)]
        common: DemoArgs,
    },
}

/// A demo's structures as the values `--structure` accepts (and `--help`
/// lists).
fn lanes(
    names: &'static [&'static str],
) -> impl clap::builder::TypedValueParser<Value = IndexName> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(names.iter().copied())
        .map(|s| IndexName::from_str(&s, false).expect("a demo's lanes are structures"))
}

/// Options of both demos.
#[derive(clap::Args)]
struct DemoArgs {
    /// Stop after this many frames (default: live, until Esc; headless,
    /// 300).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    frames: Option<u64>,
    /// No window: write PNG frames and an animated GIF to --out.
    #[arg(long)]
    headless: bool,
    /// Where --headless writes its images (default: sparti-demo-NAME).
    #[arg(long)]
    out: Option<PathBuf>,
    /// With --headless, write every Kth frame as a PNG (and the last; the
    /// GIF takes every other frame).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    every: u64,
    /// Random seed of the scene.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The structures, by their command-line names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum IndexName {
    /// Every object against every other (2D and 3D).
    Brute,
    /// The octree (3D).
    Octree,
    /// The loose octree (3D).
    LooseOctree,
    /// The quadtree (2D).
    Quadtree,
    /// The loose quadtree (2D).
    LooseQuadtree,
    /// The axis-aligned BSP tree (2D and 3D).
    Bsp,
}

impl IndexName {
    fn name(self) -> &'static str {
        match self {
            IndexName::Brute => "brute",
            IndexName::Octree => "octree",
            IndexName::LooseOctree => "loose-octree",
            IndexName::Quadtree => "quadtree",
            IndexName::LooseQuadtree => "loose-quadtree",
            IndexName::Bsp => "bsp",
        }
    }

    /// The one dimension the structure works in, `None` for both.
    fn dim(self) -> Option<Dim> {
        match self {
            IndexName::Brute | IndexName::Bsp => None,
            IndexName::Octree | IndexName::LooseOctree => Some(Dim::Three),
            IndexName::Quadtree | IndexName::LooseQuadtree => Some(Dim::Two),
        }
    }

    /// The structure in the catalogue.
    fn structure(self) -> Structure {
        match self {
            IndexName::Brute => Structure::Brute,
            IndexName::Octree | IndexName::Quadtree => Structure::Orthtree,
            IndexName::LooseOctree | IndexName::LooseQuadtree => Structure::Loose,
            IndexName::Bsp => Structure::Bsp,
        }
    }

    /// The default for a scene: the best structure for its dimension.
    fn default_for(dim: Dim) -> Self {
        match dim {
            Dim::Two => IndexName::Quadtree,
            Dim::Three => IndexName::Octree,
        }
    }
}

/// What to compute once the scene is replayed.
enum Job<V: Vector> {
    /// `pairs`, for every frame or one (its position in the scene).
    Pairs(Option<usize>),
    /// `query`, on the frame at this position (the last when `None`).
    Query(Option<usize>, Vec<Query<V>>),
}

/// A job of either dimension.
enum AnyJob {
    Two(Job<Vec2>),
    Three(Job<Vec3>),
}

/// Parsed queries of either dimension.
enum AnyQueries {
    Two(Vec<Query<Vec2>>),
    Three(Vec<Query<Vec3>>),
}

/// A failure: the message for stderr (exit code 2).
struct Failure(String);

impl Failure {
    fn at(file: &Path, errors: &[LineError]) -> Self {
        let lines: Vec<String> = errors
            .iter()
            .map(|e| format!("{}:{}: {}", file.display(), e.line, e.message))
            .collect();
        Failure(lines.join("\n"))
    }
}

/// One job, to run through the structure the catalogue builds.
struct Execute<'a, V: Vector> {
    name: IndexName,
    scene: &'a Scene,
    job: &'a Job<V>,
}

impl<V: Vector> IndexJob<V, u64> for Execute<'_, V> {
    type Output = Result<String, LineError>;

    fn run<S: SpatialIndex<V, u64> + 'static>(self, index: S) -> Self::Output {
        let (name, scene, mut out) = (self.name.name(), self.scene, String::new());
        match self.job {
            Job::Pairs(only) => replay::pairs(index, name, scene, *only, &mut out)?,
            Job::Query(at, qs) => replay::queries(index, name, scene, *at, qs, &mut out)?,
        }
        Ok(out)
    }
}

/// Runs the job through the named structure with its default settings,
/// built by the catalogue. `None` for a structure of the other dimension
/// (refused with a clearer message before this is called).
fn dispatch(name: IndexName, scene: &Scene, job: &AnyJob) -> Option<Result<String, LineError>> {
    let config = Config::default_of(name.structure());
    let built = match job {
        AnyJob::Two(job) if name.dim() != Some(Dim::Three) => {
            config.build(None, Execute { name, scene, job })
        }
        AnyJob::Three(job) if name.dim() != Some(Dim::Two) => {
            config.build(None, Execute { name, scene, job })
        }
        _ => return None,
    };
    Some(built.unwrap_or_else(|e| {
        Err(LineError::new(
            0,
            format!(
                "the {} index refused its default settings: {e}",
                name.name()
            ),
        ))
    }))
}

/// Reads a whole file.
fn read(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path)
        .map_err(|e| Failure(format!("{}: cannot read the file: {e}", path.display())))
}

/// Finds frame `n`'s position in the scene.
fn frame_position(path: &Path, scene: &Scene, n: Option<i64>) -> Result<Option<usize>, Failure> {
    let Some(n) = n else { return Ok(None) };
    scene.frame_index(n).map(Some).ok_or_else(|| {
        let has = match (scene.frames.first(), scene.frames.last()) {
            (Some(a), Some(b)) => format!(
                "it has {} frame{} numbered {} to {}",
                scene.frames.len(),
                if scene.frames.len() == 1 { "" } else { "s" },
                a.number,
                b.number
            ),
            _ => "it has no frames".to_string(),
        };
        Failure(format!(
            "{}: frame {n} is not in the scene ({has})",
            path.display()
        ))
    })
}

fn run(cli: Cli) -> Result<String, Failure> {
    let (scene_path, queries_path, index, frame) = match &cli.command {
        Command::Pairs {
            scene,
            index,
            frame,
        } => (scene, None, *index, *frame),
        Command::Query {
            scene,
            queries,
            index,
            frame,
        } => (scene, Some(queries), *index, *frame),
        // Run by `main` before `run`.
        Command::Demo { .. } | Command::Bench(_) | Command::Tune(_) => {
            unreachable!("handled in main")
        }
    };
    let scene_bytes = read(scene_path)?;
    let queries_bytes = queries_path.map(|p| read(p)).transpose()?;
    let scene = parse_scene(&scene_bytes).map_err(|e| Failure::at(scene_path, &e))?;
    // Both files are checked before the frame number.
    let parsed = match (&queries_bytes, queries_path) {
        (Some(bytes), Some(path)) => Some(match scene.dim {
            Dim::Two => AnyQueries::Two(parse_queries(bytes).map_err(|e| Failure::at(path, &e))?),
            Dim::Three => {
                AnyQueries::Three(parse_queries(bytes).map_err(|e| Failure::at(path, &e))?)
            }
        }),
        _ => None,
    };
    let at = frame_position(scene_path, &scene, frame)?;
    let job = match (parsed, scene.dim) {
        (Some(AnyQueries::Two(q)), _) => AnyJob::Two(Job::Query(at, q)),
        (Some(AnyQueries::Three(q)), _) => AnyJob::Three(Job::Query(at, q)),
        (None, Dim::Two) => AnyJob::Two(Job::Pairs(at)),
        (None, Dim::Three) => AnyJob::Three(Job::Pairs(at)),
    };
    let name = index.unwrap_or(IndexName::default_for(scene.dim));
    if let Some(d) = name.dim()
        && d != scene.dim
    {
        return Err(Failure(format!(
            "index {} is a {d} structure and {} is a {} scene (use {} or brute)",
            name.name(),
            scene_path.display(),
            scene.dim,
            IndexName::default_for(scene.dim).name()
        )));
    }
    match dispatch(name, &scene, &job) {
        Some(out) => out.map_err(|e| Failure::at(scene_path, &[e])),
        None => Err(Failure(format!(
            "index {} does not run {} scenes",
            name.name(),
            scene.dim
        ))),
    }
}

/// Runs a demo; its report goes to stdout. Errors: exit code 2 for a
/// structure the demo does not run, 1 for a failure while running (a
/// structure's pairs differing from the brute force's, no display, a file
/// that cannot be written).
fn run_demo(which: DemoCommand) -> ExitCode {
    let (result, name, lanes, structure, common): (_, _, &[&str], _, _) = match which {
        DemoCommand::Discs {
            discs,
            structure,
            common,
        } => (
            demo::discs::Discs::new(discs as usize, common.seed)
                .map(|d| Box::new(d) as Box<dyn demo::Demo>),
            "discs",
            &demo::discs::STRUCTURES,
            structure,
            common,
        ),
        DemoCommand::Bullets { structure, common } => (
            demo::bullets::Bullets::new(common.seed).map(|d| Box::new(d) as Box<dyn demo::Demo>),
            "bullets",
            &demo::bullets::STRUCTURES,
            structure,
            common,
        ),
    };
    let Some(lane) = lanes.iter().position(|&l| l == structure.name()) else {
        let _ = writeln!(
            std::io::stderr(),
            "the {name} demo runs {}, not {}",
            lanes.join(", "),
            structure.name()
        );
        return ExitCode::from(2);
    };
    let opts = demo::Options {
        frames: common.frames.map(|f| f as usize),
        headless: common.headless,
        out: common
            .out
            .unwrap_or_else(|| PathBuf::from(format!("sparti-demo-{name}"))),
        every: common.every as usize,
        seed: common.seed,
    };
    let outcome = result.and_then(|mut d| {
        if opts.headless {
            demo::run_headless(d.as_mut(), lane, &opts)?;
        } else {
            demo::window::run_live(d.as_mut(), lane, &opts)?;
        }
        Ok(d.report())
    });
    match outcome {
        Ok(report) => {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(report.as_bytes());
            if opts.headless {
                let _ = writeln!(
                    stdout,
                    "images: {}/frame-NNNN.png (every {} frames), {}/{name}.gif, {}/last-STRUCTURE.png",
                    opts.out.display(),
                    opts.every,
                    opts.out.display(),
                    opts.out.display()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "sparti demo {name}: {e}");
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // demo, bench and tune write their own output (a window or images, a
    // progress bar, then a table).
    let cli = match cli.command {
        Command::Demo { which } => return run_demo(which),
        Command::Bench(args) => return sparti_cli::bench::main(&args),
        Command::Tune(args) => return sparti_cli::tune::main(&args),
        command => Cli { command },
    };
    match run(cli) {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(out.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Ok(()) => ExitCode::SUCCESS,
                // A closed pipe (`| head`) is the reader's choice, not an error.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "sparti: cannot write the output: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Err(Failure(message)) => {
            // Not eprintln!, which panics when stderr is a closed pipe.
            let _ = writeln!(std::io::stderr(), "{message}");
            ExitCode::from(2)
        }
    }
}
