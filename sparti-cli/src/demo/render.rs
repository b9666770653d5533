//! A small software rasterizer: filled discs and rectangles, rectangle
//! outlines, on a `u32` framebuffer (`0x00RRGGBB`, the layout `minifb`
//! shows), saved as PNG frames and as an animated GIF.
//!
//! The colours are fixed and documented so that tests can count pixels:
//! [`BACKGROUND`], [`DISC`], [`OUTLINE`], [`OBSTACLE`], [`BULLET`],
//! [`IDLE`], [`LABEL`] on [`LABEL_BACK`]. Node outlines are drawn last,
//! over the objects, then the caption.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// Background colour, `#101820` (near black).
pub const BACKGROUND: u32 = 0x10_18_20;
/// Disc fill colour, `#F0A020` (orange).
pub const DISC: u32 = 0xF0_A0_20;
/// Node outline colour, `#30C0F0` (cyan), one pixel wide.
pub const OUTLINE: u32 = 0x30_C0_F0;
/// Static obstacle fill colour (bullets demo), `#808080` (grey).
pub const OBSTACLE: u32 = 0x80_80_80;
/// Bullet fill colour (bullets demo), `#FF3030` (red).
pub const BULLET: u32 = 0xFF_30_30;

/// Outline of an empty leaf kept alive by lazy pruning (it is pruned once
/// idle for its lifespan), `#306078` (dim blue), one pixel wide.
pub const IDLE: u32 = 0x30_60_78;
/// Caption text, `#F0F0F0` (near white).
pub const LABEL: u32 = 0xF0_F0_F0;
/// Caption background, `#000000`.
pub const LABEL_BACK: u32 = 0x00_00_00;

/// The GIF palette: every colour the demos draw, in this order.
pub const PALETTE: [u32; 8] = [
    BACKGROUND, DISC, OUTLINE, OBSTACLE, BULLET, IDLE, LABEL, LABEL_BACK,
];

/// A 3x5 pixel glyph, one row of three bits a byte (top row first, high
/// bit left); letters in capitals; an unknown character is blank.
fn glyph(c: char) -> [u8; 5] {
    match c.to_ascii_uppercase() {
        'A' => [2, 5, 7, 5, 5],
        'B' => [6, 5, 6, 5, 6],
        'C' => [3, 4, 4, 4, 3],
        'D' => [6, 5, 5, 5, 6],
        'E' => [7, 4, 6, 4, 7],
        'F' => [7, 4, 6, 4, 4],
        'G' => [3, 4, 5, 5, 3],
        'H' => [5, 5, 7, 5, 5],
        'I' => [7, 2, 2, 2, 7],
        'J' => [1, 1, 1, 5, 2],
        'K' => [5, 5, 6, 5, 5],
        'L' => [4, 4, 4, 4, 7],
        'M' => [5, 7, 7, 5, 5],
        'N' => [6, 5, 5, 5, 5],
        'O' => [2, 5, 5, 5, 2],
        'P' => [6, 5, 6, 4, 4],
        'Q' => [2, 5, 5, 6, 3],
        'R' => [6, 5, 6, 5, 5],
        'S' => [3, 4, 2, 1, 6],
        'T' => [7, 2, 2, 2, 2],
        'U' => [5, 5, 5, 5, 7],
        'V' => [5, 5, 5, 5, 2],
        'W' => [5, 5, 7, 7, 5],
        'X' => [5, 5, 2, 5, 5],
        'Y' => [5, 5, 2, 2, 2],
        'Z' => [7, 1, 2, 4, 7],
        '0' => [7, 5, 5, 5, 7],
        '1' => [2, 6, 2, 2, 7],
        '2' => [6, 1, 2, 4, 7],
        '3' => [6, 1, 2, 1, 6],
        '4' => [5, 5, 7, 1, 1],
        '5' => [7, 4, 6, 1, 6],
        '6' => [3, 4, 7, 5, 7],
        '7' => [7, 1, 2, 2, 2],
        '8' => [7, 5, 7, 5, 7],
        '9' => [7, 5, 7, 1, 6],
        '-' => [0, 0, 7, 0, 0],
        ':' => [0, 2, 0, 2, 0],
        '(' => [1, 2, 2, 2, 1],
        ')' => [4, 2, 2, 2, 4],
        ',' => [0, 0, 0, 2, 4],
        '.' => [0, 0, 0, 0, 2],
        '/' => [1, 1, 2, 4, 4],
        _ => [0; 5],
    }
}

/// `(r, g, b)` of a `0x00RRGGBB` colour.
pub fn rgb(c: u32) -> [u8; 3] {
    [(c >> 16) as u8, (c >> 8) as u8, c as u8]
}

/// A framebuffer of `width * height` pixels, row by row from the top.
#[derive(Clone, Debug)]
pub struct Canvas {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// The pixels, `0x00RRGGBB`, row-major from the top-left corner.
    pub pixels: Vec<u32>,
}

impl Canvas {
    /// A canvas filled with [`BACKGROUND`].
    pub fn new(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            pixels: vec![BACKGROUND; width * height],
        }
    }

    /// Fills the whole canvas with one colour.
    pub fn clear(&mut self, colour: u32) {
        self.pixels.fill(colour);
    }

    /// Sets one pixel; coordinates outside the canvas are ignored.
    pub fn put(&mut self, x: i64, y: i64, colour: u32) {
        if x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height {
            self.pixels[y as usize * self.width + x as usize] = colour;
        }
    }

    /// The pixel at `(x, y)`.
    pub fn get(&self, x: usize, y: usize) -> u32 {
        self.pixels[y * self.width + x]
    }

    /// Fills the disc of centre `(cx, cy)` and radius `r` (pixels whose
    /// centre lies inside it), clipped to the canvas.
    pub fn fill_disc(&mut self, cx: f32, cy: f32, r: f32, colour: u32) {
        let (x0, x1) = ((cx - r).floor() as i64, (cx + r).ceil() as i64);
        let (y0, y1) = ((cy - r).floor() as i64, (cy + r).ceil() as i64);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (dx, dy) = (x as f32 + 0.5 - cx, y as f32 + 0.5 - cy);
                if dx * dx + dy * dy <= r * r {
                    self.put(x, y, colour);
                }
            }
        }
    }

    /// Fills the rectangle `[x0, x1) x [y0, y1)` (in pixels, rounded),
    /// clipped to the canvas.
    pub fn fill_rect(&mut self, x0: f32, y0: f32, x1: f32, y1: f32, colour: u32) {
        let (xa, xb) = (x0.round() as i64, x1.round() as i64);
        let (ya, yb) = (y0.round() as i64, y1.round() as i64);
        for y in ya.max(0)..yb.min(self.height as i64) {
            for x in xa.max(0)..xb.min(self.width as i64) {
                self.put(x, y, colour);
            }
        }
    }

    /// Draws the one-pixel outline of the rectangle from `(x0, y0)` to
    /// `(x1, y1)`: its edges fall on the pixels `x0`, `x1 - 1`, `y0` and
    /// `y1 - 1` (rounded, clamped to the canvas so that a node's border on
    /// the canvas edge stays visible).
    pub fn outline_rect(&mut self, x0: f32, y0: f32, x1: f32, y1: f32, colour: u32) {
        let (w, h) = (self.width as i64, self.height as i64);
        let xa = (x0.round() as i64).clamp(0, w - 1);
        let xb = (x1.round() as i64 - 1).clamp(0, w - 1);
        let ya = (y0.round() as i64).clamp(0, h - 1);
        let yb = (y1.round() as i64 - 1).clamp(0, h - 1);
        if x1 < 0.0 || y1 < 0.0 || x0 > w as f32 || y0 > h as f32 {
            return;
        }
        for x in xa..=xb {
            self.put(x, ya, colour);
            self.put(x, yb, colour);
        }
        for y in ya..=yb {
            self.put(xa, y, colour);
            self.put(xb, y, colour);
        }
    }

    /// Writes `text` with its top-left corner at `(x, y)`, each glyph
    /// pixel a square of `scale` pixels, 4 glyph pixels a character.
    pub fn text(&mut self, x: i64, y: i64, scale: i64, text: &str, colour: u32) {
        for (i, c) in text.chars().enumerate() {
            let left = x + i as i64 * 4 * scale;
            for (row, bits) in glyph(c).iter().enumerate() {
                for col in 0..3 {
                    if bits & (4 >> col) != 0 {
                        for dy in 0..scale {
                            for dx in 0..scale {
                                self.put(
                                    left + col * scale + dx,
                                    y + row as i64 * scale + dy,
                                    colour,
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// A caption in the top-left corner: [`LABEL`] text on a
    /// [`LABEL_BACK`] band, one line a string.
    pub fn caption(&mut self, lines: &[&str]) {
        let scale = 2;
        let width = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0) as i64 * 4 * scale;
        let height = lines.len() as i64 * 6 * scale;
        self.fill_rect(
            0.0,
            0.0,
            (width + 2 * scale) as f32,
            (height + scale) as f32,
            LABEL_BACK,
        );
        for (i, l) in lines.iter().enumerate() {
            self.text(scale, scale + i as i64 * 6 * scale, scale, l, LABEL);
        }
    }

    /// How many pixels have exactly this colour.
    pub fn count(&self, colour: u32) -> usize {
        self.pixels.iter().filter(|&&p| p == colour).count()
    }

    /// The pixels as RGB bytes.
    pub fn to_rgb(&self) -> Vec<u8> {
        self.pixels.iter().flat_map(|&p| rgb(p)).collect()
    }

    /// Writes the canvas as an 8-bit RGB PNG.
    ///
    /// # Errors
    /// The file cannot be created or written.
    pub fn save_png(&self, path: &Path) -> Result<(), String> {
        let what = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let file = File::create(path).map_err(|e| what(&e))?;
        let mut enc =
            png::Encoder::new(BufWriter::new(file), self.width as u32, self.height as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(|e| what(&e))?;
        writer
            .write_image_data(&self.to_rgb())
            .map_err(|e| what(&e))?;
        writer.finish().map_err(|e| what(&e))
    }
}

/// An animated GIF on the fixed [`PALETTE`], looping forever.
pub struct GifWriter {
    encoder: gif::Encoder<BufWriter<File>>,
    path: String,
    width: u16,
    height: u16,
    /// Delay between frames, in hundredths of a second.
    delay: u16,
}

impl GifWriter {
    /// Creates the file; `delay` is the time each frame shows, in
    /// hundredths of a second.
    ///
    /// # Errors
    /// The file cannot be created, or the canvas is larger than 65535.
    pub fn create(path: &Path, width: usize, height: usize, delay: u16) -> Result<Self, String> {
        let name = path.display().to_string();
        let what = |e: &dyn std::fmt::Display| format!("{name}: {e}");
        let (w, h) = (
            u16::try_from(width).map_err(|e| what(&e))?,
            u16::try_from(height).map_err(|e| what(&e))?,
        );
        let palette: Vec<u8> = PALETTE.iter().flat_map(|&c| rgb(c)).collect();
        let file = File::create(path).map_err(|e| what(&e))?;
        let mut encoder =
            gif::Encoder::new(BufWriter::new(file), w, h, &palette).map_err(|e| what(&e))?;
        encoder
            .set_repeat(gif::Repeat::Infinite)
            .map_err(|e| what(&e))?;
        Ok(Self {
            encoder,
            path: name,
            width: w,
            height: h,
            delay,
        })
    }

    /// Appends a frame; a colour outside the palette shows as the
    /// background.
    ///
    /// # Errors
    /// The canvas has another size, or the file cannot be written.
    pub fn add(&mut self, canvas: &Canvas) -> Result<(), String> {
        if canvas.width != self.width as usize || canvas.height != self.height as usize {
            return Err(format!("{}: frame of another size", self.path));
        }
        let indices: Vec<u8> = canvas
            .pixels
            .iter()
            .map(|p| PALETTE.iter().position(|c| c == p).unwrap_or(0) as u8)
            .collect();
        let frame = gif::Frame {
            width: self.width,
            height: self.height,
            delay: self.delay,
            buffer: std::borrow::Cow::Owned(indices),
            ..Default::default()
        };
        self.encoder
            .write_frame(&frame)
            .map_err(|e| format!("{}: {e}", self.path))
    }
}
