//! The structures the tool knows, in one place: their names on the
//! command line, their Rust types, their settings ([`Config`]), the Rust
//! code that builds them (for `tune`'s recommendation), and building one
//! from its settings for any work ([`Config::build`] with an
//! [`IndexJob`]), and the settings `tune` tries ([`grid`]). The `pairs`
//! and `query` commands, `bench`, `tune`, the measurements, the demos and
//! `sparti-bench` all build their structures here; a new structure is one
//! more variant of [`Structure`] and [`Config`].

use sparti::{
    Aabb, BruteForce, Bsp, BspConfig, LooseConfig, LooseOrthtree, Orthtree, OrthtreeConfig,
    OutOfBounds, SpatialIndex, Vector,
};

/// Work to do with a structure of any type: [`Config::build`] builds the
/// structure and hands it to [`IndexJob::run`].
pub trait IndexJob<V: Vector, T> {
    /// What the work gives.
    type Output;
    /// Does the work with `index`.
    fn run<S: SpatialIndex<V, T> + 'static>(self, index: S) -> Self::Output;
}

/// The structures, independent of their settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Structure {
    /// [`BruteForce`]: every object against every other.
    Brute,
    /// [`Orthtree`]: the octree (3D) or quadtree (2D).
    Orthtree,
    /// [`LooseOrthtree`]: the loose octree or loose quadtree.
    Loose,
    /// [`Bsp`]: the axis-aligned BSP tree.
    Bsp,
}

impl Structure {
    /// Every structure, brute force first.
    pub const ALL: [Structure; 4] = [
        Structure::Brute,
        Structure::Orthtree,
        Structure::Loose,
        Structure::Bsp,
    ];

    /// The command-line name in dimension `dim` (2 or 3), as `--index`.
    pub fn name(self, dim: usize) -> &'static str {
        match (self, dim) {
            (Structure::Brute, _) => "brute",
            (Structure::Orthtree, 2) => "quadtree",
            (Structure::Orthtree, _) => "octree",
            (Structure::Loose, 2) => "loose-quadtree",
            (Structure::Loose, _) => "loose-octree",
            (Structure::Bsp, _) => "bsp",
        }
    }

    /// The Rust type in dimension `dim`.
    pub fn type_name(self, dim: usize) -> &'static str {
        match (self, dim) {
            (Structure::Brute, _) => "BruteForce",
            (Structure::Orthtree, 2) => "Quadtree",
            (Structure::Orthtree, _) => "Octree",
            (Structure::Loose, 2) => "LooseQuadtree",
            (Structure::Loose, _) => "LooseOctree",
            (Structure::Bsp, 2) => "Bsp2",
            (Structure::Bsp, _) => "Bsp3",
        }
    }
}

/// A structure with its settings (the world region aside).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Config {
    /// The brute force (no settings).
    Brute,
    /// An octree or quadtree ([`OrthtreeConfig`]).
    Orthtree {
        /// Nodes at most this large do not split.
        min_node_size: f32,
    },
    /// A loose octree or quadtree ([`LooseConfig`]).
    Loose {
        /// The side of the smallest cells.
        min_node_size: f32,
        /// Loose bounds over cell size.
        looseness: f32,
        /// Objects a leaf holds before it splits (0: classic loose tree).
        leaf_capacity: usize,
    },
    /// A BSP tree ([`BspConfig`]).
    Bsp {
        /// Nodes split only while their largest side exceeds this.
        min_dimension: f32,
        /// Objects a leaf keeps before it splits (0: sink as deep as fits).
        leaf_capacity: u32,
    },
}

/// The settings `sparti tune` tries for a scene whose typical object size
/// is `typical`: the brute force, then each tree family over sizes around
/// it (powers of two), loosenesses and leaf capacities.
pub fn grid(typical: f32, quick: bool) -> Vec<Config> {
    let p = 2f32.powi(typical.max(f32::MIN_POSITIVE).log2().round() as i32);
    let sizes: Vec<f32> = if quick {
        vec![p / 2.0, p, p * 2.0]
    } else {
        vec![p / 4.0, p / 2.0, p, p * 2.0, p * 4.0]
    };
    let loosenesses: &[f32] = if quick {
        &[1.5, 2.0]
    } else {
        &[1.25, 1.5, 2.0, 3.0]
    };
    let capacities: &[u32] = if quick { &[0, 2, 8] } else { &[0, 1, 2, 4, 8] };
    let mut out = vec![Config::Brute];
    for &m in &sizes {
        out.push(Config::Orthtree { min_node_size: m });
    }
    for &m in &sizes {
        for &l in loosenesses {
            for &c in capacities {
                out.push(Config::Loose {
                    min_node_size: m,
                    looseness: l,
                    leaf_capacity: c as usize,
                });
            }
        }
    }
    for &m in &sizes {
        for &c in capacities {
            out.push(Config::Bsp {
                min_dimension: m,
                leaf_capacity: c,
            });
        }
    }
    out
}

impl Config {
    /// The library's default settings of a structure.
    pub fn default_of(s: Structure) -> Config {
        match s {
            Structure::Brute => Config::Brute,
            Structure::Orthtree => {
                let d = OrthtreeConfig::<sparti::glam::Vec3>::default();
                Config::Orthtree {
                    min_node_size: d.min_node_size,
                }
            }
            Structure::Loose => {
                let d = LooseConfig::<sparti::glam::Vec3>::default();
                Config::Loose {
                    min_node_size: d.min_node_size,
                    looseness: d.looseness,
                    leaf_capacity: d.leaf_capacity,
                }
            }
            Structure::Bsp => {
                let d = BspConfig::<sparti::glam::Vec3>::default();
                Config::Bsp {
                    min_dimension: d.min_dimension,
                    leaf_capacity: d.leaf_capacity,
                }
            }
        }
    }

    /// The structure.
    pub fn structure(&self) -> Structure {
        match self {
            Config::Brute => Structure::Brute,
            Config::Orthtree { .. } => Structure::Orthtree,
            Config::Loose { .. } => Structure::Loose,
            Config::Bsp { .. } => Structure::Bsp,
        }
    }

    /// The size setting (a tree's minimum node size, a BSP's minimum
    /// dimension; `None` for the brute force).
    pub fn size(&self) -> Option<f32> {
        match *self {
            Config::Brute => None,
            Config::Orthtree { min_node_size } | Config::Loose { min_node_size, .. } => {
                Some(min_node_size)
            }
            Config::Bsp { min_dimension, .. } => Some(min_dimension),
        }
    }

    /// The same settings with another size setting (see [`Config::size`]).
    pub fn with_size(self, size: f32) -> Config {
        match self {
            Config::Brute => Config::Brute,
            Config::Orthtree { .. } => Config::Orthtree {
                min_node_size: size,
            },
            Config::Loose {
                looseness,
                leaf_capacity,
                ..
            } => Config::Loose {
                min_node_size: size,
                looseness,
                leaf_capacity,
            },
            Config::Bsp { leaf_capacity, .. } => Config::Bsp {
                min_dimension: size,
                leaf_capacity,
            },
        }
    }

    /// The settings as `name value` pairs, e.g. `min_node_size 2, looseness 1.5`
    /// (`-` for the brute force).
    pub fn params(&self) -> String {
        // 0: the library chooses it at the first build.
        let size = |m: f32| {
            if m == 0.0 {
                "automatic".to_string()
            } else {
                m.to_string()
            }
        };
        match *self {
            Config::Brute => "-".to_string(),
            Config::Orthtree { min_node_size } => format!("min_node_size {}", size(min_node_size)),
            Config::Loose {
                min_node_size,
                looseness,
                leaf_capacity,
            } => format!(
                "min_node_size {}, looseness {looseness}, leaf_capacity {leaf_capacity}",
                size(min_node_size)
            ),
            Config::Bsp {
                min_dimension,
                leaf_capacity,
            } => format!("min_dimension {min_dimension}, leaf_capacity {leaf_capacity}"),
        }
    }

    /// The settings that differ from the structure's defaults, as Rust
    /// field initialisers (`min_node_size: 2.0`), in declaration order.
    pub fn changed_fields(&self) -> Vec<String> {
        let d = Config::default_of(self.structure());
        match (*self, d) {
            (Config::Orthtree { min_node_size: m }, Config::Orthtree { min_node_size: dm }) => {
                [(m != dm).then(|| format!("min_node_size: {m:?}"))]
                    .into_iter()
                    .flatten()
                    .collect()
            }
            (
                Config::Loose {
                    min_node_size: m,
                    looseness: l,
                    leaf_capacity: c,
                },
                Config::Loose {
                    min_node_size: dm,
                    looseness: dl,
                    leaf_capacity: dc,
                },
            ) => [
                (m != dm).then(|| format!("min_node_size: {m:?}")),
                (l != dl).then(|| format!("looseness: {l:?}")),
                (c != dc).then(|| format!("leaf_capacity: {c}")),
            ]
            .into_iter()
            .flatten()
            .collect(),
            (
                Config::Bsp {
                    min_dimension: m,
                    leaf_capacity: c,
                },
                Config::Bsp {
                    min_dimension: dm,
                    leaf_capacity: dc,
                },
            ) => [
                (m != dm).then(|| format!("min_dimension: {m:?}")),
                (c != dc).then(|| format!("leaf_capacity: {c}")),
            ]
            .into_iter()
            .flatten()
            .collect(),
            _ => Vec::new(),
        }
    }

    /// The Rust expression that builds this structure in dimension `dim`
    /// (settings equal to the defaults left out), ready to paste: a value
    /// of the structure's type, not a `Result`.
    pub fn code(&self, dim: usize) -> String {
        let ty = self.structure().type_name(dim);
        let fields = self.changed_fields();
        if fields.is_empty() {
            return format!("{ty}::new()");
        }
        let cfg = match self.structure() {
            Structure::Orthtree => "OrthtreeConfig",
            Structure::Loose => "LooseConfig",
            _ => "BspConfig",
        };
        format!(
            "{ty}::with_config({cfg} {{ {}, ..Default::default() }}).expect(\"valid settings\")",
            fields.join(", ")
        )
    }
}

impl Config {
    /// Builds the structure these settings describe, its root enclosing
    /// `world` if given (growing to hold what leaves it), and hands it to
    /// `job`.
    ///
    /// # Errors
    /// The library refuses the settings.
    pub fn build<V: Vector, T: 'static, J: IndexJob<V, T>>(
        self,
        world: Option<Aabb<V>>,
        job: J,
    ) -> Result<J::Output, sparti::Error> {
        self.make(world, OutOfBounds::default(), job)
    }

    /// As [`Config::build`] over a fixed `world`: the trees refuse or evict
    /// what leaves it, as `policy` says (the brute force has no world).
    ///
    /// # Errors
    /// The library refuses the settings.
    pub fn build_bounded<V: Vector, T: 'static, J: IndexJob<V, T>>(
        self,
        world: Aabb<V>,
        policy: OutOfBounds,
        job: J,
    ) -> Result<J::Output, sparti::Error> {
        self.make(Some(world), policy, job)
    }

    fn make<V: Vector, T: 'static, J: IndexJob<V, T>>(
        self,
        world: Option<Aabb<V>>,
        out_of_bounds: OutOfBounds,
        job: J,
    ) -> Result<J::Output, sparti::Error> {
        Ok(match self {
            Config::Brute => job.run(BruteForce::<V, T>::new()),
            Config::Orthtree { min_node_size } => {
                job.run(Orthtree::<V, T>::with_config(OrthtreeConfig {
                    world,
                    min_node_size,
                    out_of_bounds,
                })?)
            }
            Config::Loose {
                min_node_size,
                looseness,
                leaf_capacity,
            } => job.run(LooseOrthtree::<V, T>::with_config(LooseConfig {
                world,
                min_node_size,
                looseness,
                leaf_capacity,
                out_of_bounds,
            })?),
            Config::Bsp {
                min_dimension,
                leaf_capacity,
            } => job.run(Bsp::<V, T>::with_config(BspConfig {
                world,
                min_dimension,
                leaf_capacity,
                out_of_bounds,
            })?),
        })
    }
}
