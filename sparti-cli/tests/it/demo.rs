//! `sparti demo`: headless images decoded and their pixels counted, and
//! the live window run for real under Xvfb and screenshotted (xwd).
//!
//! The colours are the documented ones of `sparti_cli::demo::render`:
//! discs `#F0A020`, node outlines `#30C0F0`, obstacles `#808080`, bullets
//! `#FF3030`, background `#101820`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use sparti_cli::demo::render::{BULLET, DISC, IDLE, LABEL, OBSTACLE, OUTLINE};

use crate::util::sparti;

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sparti-demo-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Decodes a PNG into `(width, height, 0x00RRGGBB pixels)`.
fn decode_png(path: &Path) -> (usize, usize, Vec<u32>) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("png data");
    let channels = info.color_type.samples();
    let pixels = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| match channels {
            1 | 2 => u32::from(p[0]) * 0x01_01_01,
            _ => (u32::from(p[0]) << 16) | (u32::from(p[1]) << 8) | u32::from(p[2]),
        })
        .collect();
    (info.width as usize, info.height as usize, pixels)
}

fn count(pixels: &[u32], colour: u32) -> usize {
    pixels.iter().filter(|&&p| p == colour).count()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn headless_discs_writes_pngs_and_a_gif_with_discs_and_outlines() {
    let dir = scratch("discs");
    let out = sparti(&[
        "demo",
        "discs",
        "--headless",
        "--frames",
        "30",
        "--every",
        "10",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    for needle in [
        "100 discs",
        "%N(N-1)/2",
        "objects per node",
        "quadtree",
        "loose-quadtree",
        "bsp",
        "octree",
        "brute",
        "on all 30 frames",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    for f in [
        "frame-0000.png",
        "frame-0010.png",
        "frame-0020.png",
        "frame-0029.png",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    // The GIF: every other frame and the last (0, 2, ..., 28, 29: 16),
    // 640x480, each with discs, outlines and the caption in the
    // palette's colours.
    let file = std::fs::File::open(dir.join("discs.gif")).expect("discs.gif");
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options.read_info(file).expect("GIF header");
    let mut frames = 0;
    while let Some(frame) = decoder.read_next_frame().expect("GIF frame") {
        assert_eq!((frame.width, frame.height), (640, 480));
        let px: Vec<u32> = frame
            .buffer
            .chunks(4)
            .map(|p| (u32::from(p[0]) << 16) | (u32::from(p[1]) << 8) | u32::from(p[2]))
            .collect();
        assert!(count(&px, DISC) > 5_000, "GIF frame {frames}: discs");
        assert!(count(&px, OUTLINE) > 2_500, "GIF frame {frames}: outlines");
        assert!(count(&px, LABEL) > 200, "GIF frame {frames}: caption");
        frames += 1;
    }
    assert_eq!(frames, 16, "GIF frames");

    let (w, h, px) = decode_png(&dir.join("frame-0029.png"));
    assert_eq!((w, h), (640, 480));
    // 100 discs of radius 4 to 10: about 100 * pi * 7^2 = 15,000 pixels,
    // fewer where outlines cross them.
    let discs = count(&px, DISC);
    assert!((5_000..40_000).contains(&discs), "{discs} disc pixels");
    // The quadtree's outlines: the root's border alone is 2,236 pixels.
    let outlines = count(&px, OUTLINE);
    assert!(
        (2_500..60_000).contains(&outlines),
        "{outlines} outline pixels"
    );

    for s in ["quadtree", "loose-quadtree", "bsp", "octree", "brute"] {
        let (_, _, px) = decode_png(&dir.join(format!("last-{s}.png")));
        assert!(count(&px, DISC) > 5_000, "{s}: no discs");
        let outlines = count(&px, OUTLINE);
        if s == "brute" {
            assert_eq!(outlines, 0, "the brute force has no node");
        } else {
            assert!(outlines > 2_500, "{s}: {outlines} outline pixels");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn headless_bullets_draws_obstacles_bullets_and_outlines_and_reports_churn() {
    let dir = scratch("bullets");
    let out = sparti(&[
        "demo",
        "bullets",
        "--headless",
        "--frames",
        "60",
        "--every",
        "30",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    for needle in [
        "idle",
        "created",
        "pruned",
        "eager",
        "%N(N-1)/2",
        "objects per node",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    assert!(dir.join("bullets.gif").is_file());
    let (w, h, px) = decode_png(&dir.join("frame-0059.png"));
    assert_eq!((w, h), (640, 480));
    assert!(count(&px, OBSTACLE) > 2_000, "obstacles");
    let bullets = count(&px, BULLET);
    assert!((50..5_000).contains(&bullets), "{bullets} bullet pixels");
    assert!(count(&px, OUTLINE) > 1_000, "outlines");
    // The bullets' trail leaves empty leaves that lazy pruning keeps: drawn
    // dim, and the caption says how many.
    assert!(count(&px, IDLE) > 100, "empty leaves kept alive");
    assert!(count(&px, LABEL) > 200, "caption");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn demo_rejects_a_structure_of_the_other_dimension() {
    let out = sparti(&["demo", "bullets", "--structure", "quadtree", "--headless"]);
    assert_eq!(out.status.code(), Some(2));
    // The error names the values the demo takes (as `--help` lists them).
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("possible values: octree, loose-octree, bsp, brute"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(tool).is_file()))
}

/// Kills (and reaps) a child process when dropped.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A screenshot of the whole X display as PNG: `xwd -root | xwdtopnm |
/// pnmtopng`.
fn screenshot(display: &str, png: &Path) -> bool {
    let cmd = format!(
        "xwd -root -display {display} -silent | xwdtopnm 2>/dev/null | pnmtopng > '{}'",
        png.display()
    );
    Command::new("sh")
        .args(["-c", &cmd])
        .status()
        .is_ok_and(|s| s.success())
        && std::fs::metadata(png).is_ok_and(|m| m.len() > 0)
}

#[test]
fn live_window_under_xvfb_shows_discs_and_outlines() {
    let tools = ["Xvfb", "xwd", "xwdtopnm", "pnmtopng"];
    let missing: Vec<_> = tools.iter().filter(|t| !on_path(t)).collect();
    if !missing.is_empty() {
        if std::env::var_os("CI").is_some() {
            panic!("CI is set but {missing:?} are missing: run .ci/demo-deps.sh");
        }
        eprintln!("SKIPPED live_window_under_xvfb: {missing:?} not on PATH (run .ci/demo-deps.sh)");
        return;
    }
    let dir = scratch("live");
    // A display number of our own, so parallel runs do not collide.
    let display = format!(":{}", 100 + std::process::id() % 800);
    let _xvfb = Reaped(
        Command::new("Xvfb")
            .args([&display, "-screen", "0", "800x600x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Xvfb"),
    );
    // Xvfb is ready once xwd can read the root window.
    let start = Instant::now();
    while !screenshot(&display, &dir.join("probe.png")) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "Xvfb did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut demo = Reaped(
        Command::new(env!("CARGO_BIN_EXE_sparti"))
            .args(["demo", "discs", "--frames", "180"])
            .env("DISPLAY", &display)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the demo"),
    );
    // Screenshots until the window shows discs and outlines.
    let shot = dir.join("screenshot.png");
    let mut seen = (0, 0);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if let Some(status) = demo.0.try_wait().expect("wait") {
            let mut err = String::new();
            if let Some(mut e) = demo.0.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            panic!("the demo ended ({status}) before a screenshot showed it: {err}");
        }
        if screenshot(&display, &shot) {
            let (w, h, px) = decode_png(&shot);
            assert_eq!((w, h), (800, 600));
            seen = (count(&px, DISC), count(&px, OUTLINE));
            if seen.0 > 5_000 && seen.1 > 2_500 {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        seen.0 > 5_000 && seen.1 > 2_500,
        "the screenshot shows {} disc and {} outline pixels",
        seen.0,
        seen.1
    );
    assert!(seen.0 < 40_000 && seen.1 < 60_000, "implausible: {seen:?}");
    eprintln!(
        "live window under Xvfb {display}: {} disc and {} outline pixels in the screenshot",
        seen.0, seen.1
    );
    // The demo still quits on its own after --frames and prints its report.
    let out = std::mem::replace(&mut demo.0, Command::new("true").spawn().expect("true"))
        .wait_with_output()
        .expect("demo output");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout(&out).contains("on all 180 frames"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn live_demo_without_a_display_fails_cleanly() {
    let out = Command::new(env!("CARGO_BIN_EXE_sparti"))
        .args(["demo", "discs", "--frames", "5"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("run sparti");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot open a window") && err.contains("--headless"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}
