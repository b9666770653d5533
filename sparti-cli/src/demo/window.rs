//! The live window (`minifb`: pure Rust, draws the `u32` framebuffer of a
//! [`Canvas`] as is; on Linux it opens libX11 at run time).
//!
//! Keys: Tab (or Space) shows the next structure's nodes, 1 to 9 picks a
//! structure, Esc or closing the window quits.

use minifb::{Key, KeyRepeat, Window, WindowOptions};

use super::render::Canvas;
use super::{Demo, Options};

/// Runs a demo in a window at 60 frames per second until Esc, the window
/// closes, or `opts.frames` frames have run. Returns the frames run.
///
/// # Errors
/// No window could be opened (no display), or the demo failed.
pub fn run_live(demo: &mut dyn Demo, mut lane: usize, opts: &Options) -> Result<usize, String> {
    let (w, h) = demo.size();
    let names: Vec<&str> = demo.lanes().iter().map(|l| l.name()).collect();
    let demo_name = demo.name();
    let title = |lane: usize| {
        format!(
            "sparti demo {}: {} ({}; Tab or 1-{} to switch, Esc to quit)",
            demo_name,
            names[lane],
            names
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{} {n}", i + 1))
                .collect::<Vec<_>>()
                .join(", "),
            names.len()
        )
    };
    let mut window = Window::new(&title(lane), w, h, WindowOptions::default())
        .map_err(|e| format!("cannot open a window ({e}); use --headless without a display"))?;
    window.set_target_fps(60);
    let mut canvas = Canvas::new(w, h);
    let digits = [
        Key::Key1,
        Key::Key2,
        Key::Key3,
        Key::Key4,
        Key::Key5,
        Key::Key6,
        Key::Key7,
        Key::Key8,
        Key::Key9,
    ];
    let mut frames = 0;
    while window.is_open() && !window.is_key_down(Key::Escape) {
        if opts.frames.is_some_and(|n| frames >= n) {
            break;
        }
        let before = lane;
        for k in window.get_keys_pressed(KeyRepeat::No) {
            if k == Key::Tab || k == Key::Space {
                lane = (lane + 1) % names.len();
            } else if let Some(i) = digits.iter().position(|&d| d == k)
                && i < names.len()
            {
                lane = i;
            }
        }
        if lane != before {
            window.set_title(&title(lane));
        }
        demo.step()?;
        frames += 1;
        demo.draw(lane, &mut canvas);
        window
            .update_with_buffer(&canvas.pixels, w, h)
            .map_err(|e| format!("window: {e}"))?;
    }
    Ok(frames)
}
