//! Line plots written as SVG by hand: log-scale axes with tick labels, a
//! polyline with point markers per series, and a legend.
//!
//! # Example
//! ```
//! use sparti_cli::plot::{Plot, Series};
//! let plot = Plot {
//!     title: "3D uniform".into(),
//!     x_label: "objects".into(),
//!     y_label: "ms per frame".into(),
//!     series: vec![Series { name: "octree".into(), points: vec![(1e3, 0.2), (1e4, 2.5)] }],
//! };
//! let svg = plot.to_svg();
//! assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
//! assert_eq!(svg.matches("<polyline").count(), 1);
//! ```

use std::fmt::Write;

/// One line of a plot.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Its name in the legend.
    pub name: String,
    /// `(x, y)` points, in the order to join them. Points with a coordinate
    /// that is not finite and positive are left out (the axes are
    /// logarithmic).
    pub points: Vec<(f64, f64)>,
}

/// A plot with logarithmic axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Plot {
    /// The title above the plot.
    pub title: String,
    /// The horizontal axis' label.
    pub x_label: String,
    /// The vertical axis' label.
    pub y_label: String,
    /// The lines, one colour each (in order).
    pub series: Vec<Series>,
}

/// Line colours, in series order (then again).
const COLOURS: [&str; 8] = [
    "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

const WIDTH: f64 = 680.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 160.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 52.0;

/// Escapes text for XML.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// A number for a tick label: `1k`, `20k`, `1M` from a thousand up, else
/// the shortest decimal (`0.05`, `2`, `500`).
pub fn tick_label(v: f64) -> String {
    let trim = |x: f64| {
        let s = format!("{x:.3}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    };
    if v >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if v >= 1e3 {
        format!("{}k", trim(v / 1e3))
    } else if v >= 1e-3 {
        trim(v)
    } else {
        format!("{v:.0e}")
    }
}

/// A logarithmic axis: its domain (log10) and ticks.
struct Axis {
    lo: f64,
    hi: f64,
}

impl Axis {
    fn new(values: impl Iterator<Item = f64>) -> Axis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            lo = lo.min(v.log10());
            hi = hi.max(v.log10());
        }
        if !lo.is_finite() || !hi.is_finite() {
            return Axis { lo: 0.0, hi: 1.0 };
        }
        if hi - lo < 1e-9 {
            return Axis {
                lo: lo - 0.5,
                hi: hi + 0.5,
            };
        }
        let pad = (hi - lo) * 0.06;
        Axis {
            lo: lo - pad,
            hi: hi + pad,
        }
    }

    /// Where `log10(v)` falls in `[0, 1]`.
    fn frac(&self, v: f64) -> f64 {
        (v.log10() - self.lo) / (self.hi - self.lo)
    }

    /// Tick values: 1, 2, 5 times the powers of ten in the domain (every
    /// integer multiple when that gives fewer than three; only the powers
    /// of ten when it gives more than twelve).
    fn ticks(&self) -> Vec<f64> {
        let pick = |ms: &[f64]| -> Vec<f64> {
            let mut t = Vec::new();
            for e in (self.lo.floor() as i32)..=(self.hi.ceil() as i32) {
                for &m in ms {
                    let v = m * 10f64.powi(e);
                    let l = v.log10();
                    if l >= self.lo && l <= self.hi {
                        t.push(v);
                    }
                }
            }
            t
        };
        let t = pick(&[1.0, 2.0, 5.0]);
        if t.len() < 3 {
            pick(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
        } else if t.len() > 12 {
            pick(&[1.0])
        } else {
            t
        }
    }
}

impl Plot {
    /// The plot as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let ok = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite() && x > 0.0 && y > 0.0;
        let points = || {
            self.series
                .iter()
                .flat_map(|s| s.points.iter())
                .filter(|p| ok(p))
        };
        let xa = Axis::new(points().map(|p| p.0));
        let ya = Axis::new(points().map(|p| p.1));
        let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
        let px = |x: f64| LEFT + xa.frac(x) * pw;
        let py = |y: f64| TOP + (1.0 - ya.frac(y)) * ph;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, "<title>{}</title>", escape(&self.title));
        let _ = writeln!(
            s,
            r#"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
            LEFT + pw / 2.0,
            escape(&self.title)
        );
        // Grid and ticks.
        for t in xa.ticks() {
            let x = px(t);
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/>"##,
                TOP + ph
            );
            let _ = writeln!(
                s,
                r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                TOP + ph + 16.0,
                tick_label(t)
            );
        }
        for t in ya.ticks() {
            let y = py(t);
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/>"##,
                LEFT + pw
            );
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                LEFT - 6.0,
                y + 4.0,
                tick_label(t)
            );
        }
        let _ = writeln!(
            s,
            r#"<rect x="{LEFT}" y="{TOP}" width="{pw:.1}" height="{ph:.1}" fill="none" stroke="black"/>"#
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{} (log scale)</text>"#,
            LEFT + pw / 2.0,
            HEIGHT - 12.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            s,
            r#"<text x="16" y="{:.1}" text-anchor="middle" transform="rotate(-90 16 {:.1})">{} (log scale)</text>"#,
            TOP + ph / 2.0,
            TOP + ph / 2.0,
            escape(&self.y_label)
        );
        // Lines, markers and legend.
        for (i, series) in self.series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let pts: Vec<String> = series
                .points
                .iter()
                .filter(|p| ok(p))
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"><title>{}</title></polyline>"#,
                pts.join(" "),
                escape(&series.name)
            );
            for p in series.points.iter().filter(|p| ok(p)) {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"/>"#,
                    px(p.0),
                    py(p.1)
                );
            }
            let ly = TOP + 10.0 + 20.0 * i as f64;
            let lx = LEFT + pw + 14.0;
            let _ = writeln!(
                s,
                r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{colour}" stroke-width="2"/>"#,
                lx + 22.0
            );
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                lx + 28.0,
                ly + 4.0,
                escape(&series.name)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_labels() {
        assert_eq!(tick_label(1000.0), "1k");
        assert_eq!(tick_label(20000.0), "20k");
        assert_eq!(tick_label(1e6), "1M");
        assert_eq!(tick_label(0.05), "0.05");
        assert_eq!(tick_label(2.0), "2");
        let a = Axis::new([1e3, 1e5].into_iter());
        let t = a.ticks();
        assert!(t.contains(&1e3) && t.contains(&1e4) && t.contains(&1e5));
        // A single value still gets a domain and ticks.
        let a = Axis::new([7.0].into_iter());
        assert!(a.ticks().len() >= 3);
    }

    #[test]
    fn svg_has_one_polyline_per_series_and_escapes_names() {
        let plot = Plot {
            title: "a < b & c".into(),
            x_label: "N".into(),
            y_label: "ms".into(),
            series: vec![
                Series {
                    name: "x".into(),
                    points: vec![(1e3, 1.0), (1e4, 10.0), (1e5, f64::NAN)],
                },
                Series {
                    name: "y".into(),
                    points: vec![(1e3, 0.5)],
                },
            ],
        };
        let svg = plot.to_svg();
        assert!(svg.starts_with("<svg"));
        assert!(svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("a &lt; b &amp; c"));
        assert!(!svg.contains("NaN"));
    }
}
