//! The results: a Markdown table a workload (medians, sparti's best
//! structure against the best peer), the raw samples as CSV, the medians as
//! JSON, and SVG plots of the pairs workloads' cost per object against N.

use std::fmt::Write as _;
use std::path::Path;

use sparti_cli::plot::{Plot, Series};

/// One measurement: an implementation on a workload at one N.
pub struct Row {
    pub workload: String,
    pub n: usize,
    pub name: String,
    /// One of sparti's structures.
    pub sparti: bool,
    /// The brute force (the oracle): shown, never "best".
    pub oracle: bool,
    pub unit: &'static str,
    pub higher_is_better: bool,
    /// Every timed sample (frames, repetitions).
    pub samples: Vec<f64>,
    /// What was checked equal (pair count, hits, ...), for the record;
    /// empty when nothing is checked (memory).
    pub check: String,
    /// Further figures shown in a table of their own (memory).
    pub extra: Vec<(&'static str, f64)>,
}

impl Row {
    pub fn median(&self) -> f64 {
        crate::median(&self.samples)
    }
}

pub struct Report {
    pub command: String,
    pub quick: bool,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
    pub failures: Vec<String>,
    pub elapsed: f64,
}

/// A number with 3 significant digits and thousands separators.
pub fn fmt(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else if v >= 1.0 {
        2
    } else {
        3
    };
    let mut x = v;
    if v >= 1000.0 {
        // 3 significant digits.
        let p = 10f64.powi(v.log10().floor() as i32 - 2);
        x = (v / p).round() * p;
    }
    let s = format!("{x:.digits$}");
    let (int, frac) = s.split_once('.').map_or((s.as_str(), ""), |(a, b)| (a, b));
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

fn title(workload: &str) -> &'static str {
    match workload {
        "pairs3d" => {
            "Dynamic pairs, 3D (update every object's bounds, then all overlapping pairs; median ns per object per frame, lower is better)"
        }
        "pairs2d" => "Dynamic pairs, 2D (circles; median ns per object per frame, lower is better)",
        "build3d" => "Static bulk build, 3D boxes (median ms, lower is better)",
        "build2d" => "Static bulk build, 2D rectangles (median ms, lower is better)",
        "ray" => {
            "Ray nearest hit against 100,000 static spheres (median rays per second, higher is better)"
        }
        "box" => {
            "Box query (cubes of side 8) against 100,000 static spheres (median queries per second, higher is better)"
        }
        "frustum" => {
            "Frustum culling against static spheres (median frustums per second, higher is better)"
        }
        "nearest" => {
            "The 8 nearest of a point among 100,000 static spheres (median queries per second, higher is better)"
        }
        "memory" => {
            "Memory held after building N static spheres (bytes per object, lower is better)"
        }
        _ => "",
    }
}

/// The machine: CPU model and logical cores.
pub fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, {cores} logical cores")
}

/// The commit the binary was built from (with `+changes` where tracked
/// files differed from it), recorded by the build script.
fn git_commit() -> String {
    env!("SPARTI_BENCH_COMMIT").to_string()
}

impl Report {
    pub fn new(command: String, quick: bool) -> Self {
        Self {
            command,
            quick,
            rows: Vec::new(),
            notes: Vec::new(),
            failures: Vec::new(),
            elapsed: 0.0,
        }
    }

    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }

    pub fn note(&mut self, s: String) {
        self.notes.push(s);
    }

    pub fn fail(&mut self, s: String) {
        eprintln!("DISAGREEMENT: {s}");
        self.failures.push(s);
    }

    fn workloads(&self) -> Vec<String> {
        let mut w: Vec<String> = Vec::new();
        for r in &self.rows {
            if !w.contains(&r.workload) {
                w.push(r.workload.clone());
            }
        }
        w
    }

    /// The Markdown report: one table a workload.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "Command: `{}`", self.command);
        let _ = writeln!(
            s,
            "Machine: {}; sparti commit `{}`; single-threaded; {} run, {:.0} s in all.",
            machine(),
            git_commit(),
            if self.quick { "quick" } else { "full" },
            self.elapsed
        );
        let _ = writeln!(
            s,
            "Verification: {}.\n",
            if self.failures.is_empty() {
                "every implementation returned the same results (pair sets, nearest hits, query counts) in every workload".to_string()
            } else {
                format!(
                    "FAILED, {} disagreement(s), listed at the end",
                    self.failures.len()
                )
            }
        );
        for w in self.workloads() {
            let rows: Vec<&Row> = self.rows.iter().filter(|r| r.workload == w).collect();
            let mut names: Vec<(&str, bool)> = Vec::new();
            for r in &rows {
                if !names.iter().any(|(n, _)| *n == r.name) {
                    names.push((&r.name, r.sparti));
                }
            }
            let mut ns: Vec<usize> = rows.iter().map(|r| r.n).collect();
            ns.sort_unstable();
            ns.dedup();
            let higher = rows[0].higher_is_better;
            let _ = writeln!(s, "### {w}: {}\n", title(&w));
            let mut head = String::from("| N |");
            let mut rule = String::from("|---:|");
            for (n, sp) in &names {
                let _ = write!(head, " {}{} |", n, if *sp { "" } else { " (peer)" });
                rule.push_str("---:|");
            }
            head.push_str(" best sparti | best peer | sparti vs best peer |");
            rule.push_str("---|---|---:|");
            let _ = writeln!(s, "{head}\n{rule}");
            for &n in &ns {
                let _ = write!(s, "| {} |", fmt(n as f64));
                for (name, _) in &names {
                    match rows.iter().find(|r| r.n == n && r.name == *name) {
                        Some(r) => {
                            let _ = write!(s, " {} |", fmt(r.median()));
                        }
                        None => s.push_str(" - |"),
                    }
                }
                let best = |sparti: bool| {
                    rows.iter()
                        .filter(|r| r.n == n && r.sparti == sparti && !r.oracle)
                        .min_by(|a, b| {
                            let (x, y) = (a.median(), b.median());
                            if higher {
                                y.total_cmp(&x)
                            } else {
                                x.total_cmp(&y)
                            }
                        })
                };
                let (bs, bp) = (best(true), best(false));
                let show = |r: Option<&Row>| r.map_or("-".to_string(), |r| r.name.clone());
                let ratio = match (bs, bp) {
                    (Some(a), Some(b)) => {
                        let r = if higher {
                            a.median() / b.median()
                        } else {
                            b.median() / a.median()
                        };
                        format!("{r:.2}x")
                    }
                    _ => "-".into(),
                };
                let _ = writeln!(
                    s,
                    " {} | {} | {} |",
                    show(bs.copied()),
                    show(bp.copied()),
                    ratio
                );
            }
            if w.starts_with("pairs") && ns.len() > 1 {
                // Cost per object at the largest N over the smallest: the
                // issue asks for growth no faster than log N (log(1M) /
                // log(1k) = 2).
                let (lo, hi) = (ns[0], ns[ns.len() - 1]);
                let _ = write!(s, "| growth {} to {} |", fmt(lo as f64), fmt(hi as f64));
                for (name, _) in &names {
                    let at = |n: usize| rows.iter().find(|r| r.n == n && r.name == *name);
                    match (at(lo), at(hi)) {
                        (Some(a), Some(b)) => {
                            let _ = write!(s, " {:.2}x |", b.median() / a.median());
                        }
                        _ => s.push_str(" - |"),
                    }
                }
                let _ = writeln!(
                    s,
                    " | | (log N grows {:.2}x) |",
                    (hi as f64).ln() / (lo as f64).ln()
                );
            }
            let checks: Vec<String> = ns
                .iter()
                .filter_map(|&n| {
                    rows.iter()
                        .find(|r| r.n == n && !r.check.is_empty())
                        .map(|r| format!("N = {}: {}", fmt(n as f64), r.check))
                })
                .collect();
            let _ = write!(
                s,
                "\n\"sparti vs best peer\": how many times better sparti's best structure is than the best peer ({}; below 1: the peer is better). The brute force is the oracle, never \"best\".",
                if higher {
                    "its rate over the peer's"
                } else {
                    "the peer's figure over sparti's"
                },
            );
            if !checks.is_empty() {
                let _ = write!(s, " Checked equal: {}.", checks.join("; "));
            }
            s.push_str("\n\n");
            let extra: Vec<&str> = rows
                .iter()
                .flat_map(|r| r.extra.iter().map(|(k, _)| *k))
                .fold(Vec::new(), |mut v, k| {
                    if !v.contains(&k) {
                        v.push(k);
                    }
                    v
                });
            if !extra.is_empty() {
                let _ = write!(s, "| structure | N | {} |", rows[0].unit);
                for k in &extra {
                    let _ = write!(s, " {k} |");
                }
                let _ = write!(s, "\n|---|---:|---:|");
                for _ in &extra {
                    s.push_str("---:|");
                }
                s.push('\n');
                for r in &rows {
                    let _ = write!(
                        s,
                        "| {} | {} | {} |",
                        r.name,
                        fmt(r.n as f64),
                        fmt(r.median())
                    );
                    for k in &extra {
                        match r.extra.iter().find(|(x, _)| x == k) {
                            Some((_, v)) => {
                                let _ = write!(s, " {} |", fmt(*v));
                            }
                            None => s.push_str(" - |"),
                        }
                    }
                    s.push('\n');
                }
                s.push('\n');
            }
            if w == "memory" {
                let _ = writeln!(
                    s,
                    "Bytes each structure holds after the build, per object: everything it allocated and keeps, its copy of the objects included (the peers' wrappers' copy of the caller's spheres, 16 bytes an object, left out). \"above own data\" subtracts {} bytes an object (a sphere, 16 bytes, and a 4-byte id); \"peak\" is the most allocated at once during the build, the input handed to the library included.\n",
                    crate::OWN_BYTES,
                );
            }
        }
        if !self.notes.is_empty() {
            let _ = writeln!(s, "Notes:");
            for n in &self.notes {
                let _ = writeln!(s, "- {n}");
            }
            s.push('\n');
        }
        if !self.failures.is_empty() {
            let _ = writeln!(s, "DISAGREEMENTS:");
            for f in &self.failures {
                let _ = writeln!(s, "- {f}");
            }
        }
        s
    }

    fn csv(&self) -> String {
        let mut s = String::from("workload,n,implementation,sparti,unit,sample,value\n");
        for r in &self.rows {
            for (i, v) in r.samples.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "{},{},{},{},{},{},{}",
                    r.workload, r.n, r.name, r.sparti, r.unit, i, v
                );
            }
        }
        s
    }

    fn json(&self) -> String {
        let esc = |x: &str| x.replace('\\', "\\\\").replace('"', "\\\"");
        let mut s = String::from("{\n");
        let _ = writeln!(s, "  \"command\": \"{}\",", esc(&self.command));
        let _ = writeln!(s, "  \"machine\": \"{}\",", esc(&machine()));
        let _ = writeln!(s, "  \"commit\": \"{}\",", esc(&git_commit()));
        let _ = writeln!(s, "  \"quick\": {},", self.quick);
        let _ = writeln!(s, "  \"verified\": {},", self.failures.is_empty());
        s.push_str("  \"results\": [\n");
        for (i, r) in self.rows.iter().enumerate() {
            let _ = write!(
                s,
                "    {{\"workload\": \"{}\", \"n\": {}, \"implementation\": \"{}\", \"sparti\": {}, \"unit\": \"{}\", \"median\": {}, \"samples\": {}, \"check\": \"{}\"}}",
                r.workload,
                r.n,
                esc(&r.name),
                r.sparti,
                r.unit,
                r.median(),
                r.samples.len(),
                esc(&r.check)
            );
            s.push_str(if i + 1 < self.rows.len() { ",\n" } else { "\n" });
        }
        s.push_str("  ]\n}\n");
        s
    }

    fn plot(&self, workload: &str) -> Option<String> {
        let rows: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.workload == workload)
            .collect();
        if rows.is_empty() {
            return None;
        }
        let mut series: Vec<Series> = Vec::new();
        for r in &rows {
            // Peers by crate name only, so the legend fits.
            let label = if r.sparti {
                r.name.clone()
            } else {
                format!("{} (peer)", r.name.split(' ').next().unwrap_or(&r.name))
            };
            match series.iter_mut().find(|s| s.name == label) {
                Some(s) => s.points.push((r.n as f64, r.median())),
                None => series.push(Series {
                    name: label,
                    points: vec![(r.n as f64, r.median())],
                }),
            }
        }
        Some(
            Plot {
                title: format!("{workload}: cost per object per frame"),
                x_label: "objects (N)".into(),
                y_label: "ns per object per frame".into(),
                series,
            }
            .to_svg(),
        )
    }

    /// Writes results.md, results.csv, results.json and the plots.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("results.md"), self.markdown())?;
        std::fs::write(dir.join("results.csv"), self.csv())?;
        std::fs::write(dir.join("results.json"), self.json())?;
        for w in ["pairs3d", "pairs2d"] {
            if let Some(svg) = self.plot(w) {
                std::fs::write(dir.join(format!("{w}.svg")), svg)?;
            }
        }
        Ok(())
    }
}
