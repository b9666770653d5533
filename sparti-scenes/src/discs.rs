//! The bouncing discs of the BSP article (`sparti demo discs`): discs in a
//! 640x480 window, bouncing off the walls and off each other.

use rand::Rng as _;
use sparti::glam::Vec2;

use crate::rng;

/// Window width in pixels (and world units).
pub const WIDTH: f32 = 640.0;
/// Window height in pixels (and world units).
pub const HEIGHT: f32 = 480.0;
/// Disc radii are drawn from this range.
pub const RADIUS: (f32, f32) = (4.0, 10.0);
/// Disc speeds (pixels per frame) are drawn from this range.
pub const SPEED: (f32, f32) = (0.5, 3.0);

/// A disc of the scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Disc {
    /// Centre.
    pub pos: Vec2,
    /// Velocity, per frame.
    pub vel: Vec2,
    /// Radius.
    pub radius: f32,
}

/// `n` random discs inside the window (seeded), not overlapping where room
/// allows.
///
/// # Example
/// ```
/// use sparti_scenes::discs;
/// let mut d = discs::scatter(50, 1);
/// let before = d.clone();
/// discs::step(&mut d);
/// assert_ne!(d, before);
/// assert!(d.iter().all(|d| d.pos.x > d.radius && d.pos.x < discs::WIDTH - d.radius));
/// ```
pub fn scatter(n: usize, seed: u64) -> Vec<Disc> {
    let mut rng = rng(seed);
    let mut discs: Vec<Disc> = Vec::with_capacity(n);
    for _ in 0..n {
        let radius = rng.random_range(RADIUS.0..RADIUS.1);
        let mut pos = Vec2::ZERO;
        for _ in 0..1000 {
            pos = Vec2::new(
                rng.random_range(radius..WIDTH - radius),
                rng.random_range(radius..HEIGHT - radius),
            );
            if discs
                .iter()
                .all(|d| d.pos.distance(pos) > d.radius + radius)
            {
                break;
            }
        }
        let angle = rng.random_range(0.0..std::f32::consts::TAU);
        let speed = rng.random_range(SPEED.0..SPEED.1);
        discs.push(Disc {
            pos,
            vel: Vec2::from_angle(angle) * speed,
            radius,
        });
    }
    discs
}

/// Moves every disc by its velocity and bounces it off the walls.
pub fn step(discs: &mut [Disc]) {
    for d in discs {
        d.pos += d.vel;
        // A hair inside the walls: `WIDTH - r + r` may round above WIDTH,
        // and a tree built over the window refuses what leaves it.
        let margin = d.radius + 0.01;
        let (lo, hi) = (Vec2::splat(margin), Vec2::new(WIDTH, HEIGHT) - margin);
        for i in 0..2 {
            if d.pos[i] < lo[i] {
                d.pos[i] = lo[i];
                d.vel[i] = d.vel[i].abs();
            } else if d.pos[i] > hi[i] {
                d.pos[i] = hi[i];
                d.vel[i] = -d.vel[i].abs();
            }
        }
    }
}

/// Two touching discs of equal mass exchange their velocity components
/// along the contact normal (from `a` towards `b`), if they are
/// approaching.
pub fn collide(discs: &mut [Disc], a: usize, b: usize, normal: Vec2) {
    let closing = (discs[b].vel - discs[a].vel).dot(normal);
    if closing < 0.0 {
        discs[a].vel += normal * closing;
        discs[b].vel -= normal * closing;
    }
}

/// The discs' kinetic energy (unit masses): conserved by [`step`] and
/// [`collide`].
pub fn energy(discs: &[Disc]) -> f32 {
    discs.iter().map(|d| d.vel.length_squared()).sum::<f32>() / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_collision_keeps_the_energy_and_parts_the_discs() {
        let mut d = vec![
            Disc {
                pos: Vec2::new(100.0, 100.0),
                vel: Vec2::new(2.0, 0.0),
                radius: 5.0,
            },
            Disc {
                pos: Vec2::new(109.0, 100.0),
                vel: Vec2::new(-1.0, 0.5),
                radius: 5.0,
            },
        ];
        let e = energy(&d);
        collide(&mut d, 0, 1, Vec2::X);
        assert_eq!(d[0].vel, Vec2::new(-1.0, 0.0));
        assert_eq!(d[1].vel, Vec2::new(2.0, 0.5));
        assert!((energy(&d) - e).abs() < 1e-6);
        // Moving apart: no change.
        collide(&mut d, 0, 1, Vec2::X);
        assert_eq!(d[0].vel, Vec2::new(-1.0, 0.0));
    }

    #[test]
    fn discs_stay_in_the_window() {
        let mut d = scatter(200, 9);
        for _ in 0..500 {
            step(&mut d);
            for x in &d {
                assert!(x.pos.x - x.radius > 0.0 && x.pos.x + x.radius < WIDTH);
                assert!(x.pos.y - x.radius > 0.0 && x.pos.y + x.radius < HEIGHT);
            }
        }
    }
}
