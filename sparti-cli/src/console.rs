//! The commands' side of the terminal: messages on stderr, output on
//! stdout that survives a closed pipe, progress bars, text tables, numbers
//! to three significant digits, and the exit code of a disagreement.

use std::io::Write as _;

use indicatif::{ProgressBar, ProgressStyle};

/// Exit code when a structure disagrees with the brute force.
pub const MISMATCH: u8 = 3;

/// Writes a message on stderr (never panicking on a closed pipe).
pub fn complain(message: &str) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

/// Writes text on stdout; false if it cannot be written (a closed pipe is
/// the reader's choice and counts as written).
pub fn print(text: &str) -> bool {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => true,
        Err(e) => {
            complain(&format!("sparti: cannot write the output: {e}"));
            false
        }
    }
}

/// A progress bar on stderr (drawn only on a terminal).
pub fn progress(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) =
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {wide_msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Lays out a text table: a header, a rule, the rows; columns padded to
/// their widest cell, left-aligned where `left[i]`, else right-aligned.
pub fn format_table(header: &[&str], rows: &[Vec<String>], left: &[bool]) -> String {
    let cols = header.len();
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(cols) {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut s = String::new();
        for (i, c) in cells.enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = width[i].saturating_sub(c.chars().count());
            if left.get(i).copied().unwrap_or(false) {
                s.push_str(c);
                if i + 1 < cols {
                    s.extend(std::iter::repeat_n(' ', pad));
                }
            } else {
                s.extend(std::iter::repeat_n(' ', pad));
                s.push_str(c);
            }
        }
        s.push('\n');
        s
    };
    let mut out = line(&mut header.iter().copied());
    let total: usize = width.iter().sum::<usize>() + 2 * cols.saturating_sub(1);
    out.push_str(&"-".repeat(total));
    out.push('\n');
    for r in rows {
        out.push_str(&line(&mut r.iter().map(String::as_str)));
    }
    out
}

/// A number with about three significant digits.
pub fn sig3(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.1 {
        format!("{v:.3}")
    } else if a >= 0.01 {
        format!("{v:.4}")
    } else {
        format!("{v:.5}")
    }
}
