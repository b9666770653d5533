//! The layer matrix: which layers collide with which.

/// Which collision layers collide with which: a symmetric 32 x 32 bit
/// matrix, applied inside the pair search (before the exact shape test), on
/// top of each object's own `mask` bits.
///
/// Two objects pair up when some layer bit of the one collides, in the
/// matrix, with some layer bit of the other (and their masks allow it).
///
/// # Example
/// ```
/// use sparti::LayerMatrix;
/// const HERO: u32 = 0;
/// const ROCKET: u32 = 1;
/// const BONUS: u32 = 2;
/// let mut m = LayerMatrix::ALL;
/// m.set(ROCKET, BONUS, false); // a rocket flies through bonus items
/// assert!(!m.collides(1 << ROCKET, 1 << BONUS));
/// assert!(m.collides(1 << HERO, 1 << BONUS)); // the hero picks them up
/// assert!(m.collides(1 << HERO | 1 << ROCKET, 1 << BONUS)); // any bit will do
///
/// // In a structure: the rocket passes through the bonus, the hero meets it.
/// use glam::Vec2;
/// use sparti::{ObjectDesc, Quadtree, Shape, SpatialIndex};
/// let mut world = Quadtree::<&str>::new();
/// world.set_layer_matrix(m);
/// let at = |x: f32| Shape::sphere(Vec2::new(x, 0.0), 1.0);
/// world.insert(ObjectDesc::new(at(0.0), "bonus").with_layer(1 << BONUS)).unwrap();
/// world.insert(ObjectDesc::new(at(1.0), "rocket").with_layer(1 << ROCKET)).unwrap();
/// world.insert(ObjectDesc::new(at(-1.0), "hero").with_layer(1 << HERO)).unwrap();
/// let mut contacts = Vec::new();
/// world.contacts(&mut contacts);
/// let names: Vec<_> = contacts
///     .iter()
///     .map(|c| (world.get(c.a).unwrap().value, world.get(c.b).unwrap().value))
///     .collect();
/// // bonus-hero and rocket-hero (they touch at x = 0), never bonus-rocket.
/// assert_eq!(names, vec![("bonus", "hero"), ("rocket", "hero")]);
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LayerMatrix {
    /// `rows[i]` has bit `j` set when layer `i` collides with layer `j`.
    rows: [u32; 32],
}

impl LayerMatrix {
    /// Every layer collides with every layer (the default).
    pub const ALL: LayerMatrix = LayerMatrix {
        rows: [u32::MAX; 32],
    };
    /// No layer collides with any.
    pub const NONE: LayerMatrix = LayerMatrix { rows: [0; 32] };

    /// Sets whether layers `a` and `b` (indices `0..32`) collide, both ways.
    /// Indices of 32 and above are ignored.
    pub fn set(&mut self, a: u32, b: u32, collide: bool) {
        if a >= 32 || b >= 32 {
            return;
        }
        if collide {
            self.rows[a as usize] |= 1 << b;
            self.rows[b as usize] |= 1 << a;
        } else {
            self.rows[a as usize] &= !(1 << b);
            self.rows[b as usize] &= !(1 << a);
        }
    }

    /// The layers that layer `a` (an index) collides with, as bits.
    pub fn row(&self, a: u32) -> u32 {
        self.rows.get(a as usize).copied().unwrap_or(0)
    }

    /// True when some bit of `layers_a` collides with some bit of `layers_b`.
    #[inline]
    pub fn collides(&self, layers_a: u32, layers_b: u32) -> bool {
        // One row per bit of `layers_a`; objects are usually on one layer.
        // (Comparing with `ALL` first cost a 128-byte comparison a pair.)
        let mut bits = layers_a;
        while bits != 0 {
            let i = bits.trailing_zeros();
            if self.rows[i as usize] & layers_b != 0 {
                return true;
            }
            bits &= bits - 1;
        }
        false
    }
}

impl Default for LayerMatrix {
    fn default() -> Self {
        Self::ALL
    }
}
