//! # sparti: spatial partitioning for games
//!
//! sparti keeps thousands to millions of moving objects in a spatial
//! structure so that "which objects touch?", "what does this ray hit
//! first?", "what is in the camera frustum?" and "who is within this
//! grenade's radius?" cost far less than testing every object against every
//! other.
//!
//! Every structure implements one trait, [`SpatialIndex`], so switching
//! structure is a one-line change, and every structure is tested against
//! [`BruteForce`], the reference answer.
//!
//! | structure | dims | type |
//! |---|---|---|
//! | dynamic octree | 3D | [`Octree`] |
//! | quadtree | 2D | [`Quadtree`] |
//! | loose octree, loose quadtree | 3D, 2D | [`LooseOctree`], [`LooseQuadtree`] |
//! | axis-aligned BSP: splits across the largest side, for 2.5D worlds | 2D, 3D | [`Bsp2`], [`Bsp3`] ([`Bsp`]) |
//! | brute force | 2D, 3D | [`BruteForce`] |
//!
//! 2D and 3D share one source: every type is generic over a [`Vector`],
//! implemented for [`glam::Vec2`] and [`glam::Vec3`].
//!
//! Beside the structures, and working with any of them: the query regions
//! ([`Aabb`], [`Sphere`], [`Frustum`], [`Cone`] through [`Region`]), rays
//! ([`Ray`]), k-nearest ([`SpatialIndex::nearest_k`]), contact records
//! ([`SpatialIndex::contacts`]), the [`LayerMatrix`] and [`ContactEvents`].
//! Queries fill a `Vec` the caller keeps, or come as iterators of
//! `(handle, &object)` ([`SpatialIndex::objects_in`],
//! [`SpatialIndex::objects_within`], [`SpatialIndex::nearest`]); neither
//! allocates once warm.
//!
//! # Example
//! ```
//! use glam::Vec3;
//! use sparti::{Filter, ObjectDesc, Octree, Ray, Shape, SpatialIndex};
//!
//! let mut tree: Octree<&str> = Octree::new();
//! let hero = tree.insert(ObjectDesc::new(Shape::sphere(Vec3::ZERO, 1.0), "hero")).unwrap();
//! let crate_ = tree
//!     .insert(ObjectDesc::new(Shape::cuboid(Vec3::new(1.5, 0.0, 0.0), Vec3::splat(0.5)), "crate").with_static(true))
//!     .unwrap();
//!
//! // Who touches whom, with contact normal and depth.
//! let mut contacts = Vec::new();
//! tree.contacts(&mut contacts);
//! assert_eq!(contacts.len(), 1);
//! assert_eq!((contacts[0].a, contacts[0].b), (hero, crate_));
//!
//! // Move the hero away: no more contact.
//! tree.update(hero, Shape::sphere(Vec3::new(-5.0, 0.0, 0.0), 1.0)).unwrap();
//! tree.contacts(&mut contacts);
//! assert!(contacts.is_empty());
//!
//! // What does a ray from the origin along +x hit first?
//! let ray = Ray::new(Vec3::ZERO, Vec3::X).unwrap();
//! let hit = tree.ray_nearest(&ray, 100.0, Filter::ALL).unwrap();
//! assert_eq!(hit.handle, crate_);
//! assert_eq!(hit.distance, 1.0);
//! ```
//!
//! # Changes, the build step, and queries from many threads
//!
//! Changes ([`SpatialIndex::insert`], [`SpatialIndex::update`],
//! [`SpatialIndex::update_many`], [`SpatialIndex::remove`]) take `&mut self`;
//! every query takes `&self`, and every structure is `Send + Sync` (when
//! its values are), so one index can answer many threads at once.
//! Insertions are queued and filed into the tree in one pass by
//! [`SpatialIndex::flush`], the build step ([`SpatialIndex::end_frame`]
//! does it too). A query never gives a stale answer: one that meets queued
//! insertions tests them one by one beside the tree (exact, but linear;
//! [`Counters::pending_tests`] counts them). A move that keeps its object
//! in its node writes only the object's new shape; the first query that
//! walks the tree afterwards brings the boxes around the moved objects'
//! nodes up to date, once (the other threads' queries wait for it), and
//! the pair search does not need them. With the `rayon` feature,
//! `update_many` checks a frame's moves and applies those that keep their
//! node, and [`SpatialIndex::par_pairs`] searches pairs, on rayon's
//! threads, with the same results on any number of threads.
//!
//! # Adding a structure
//!
//! The tree families share one kernel (the `kernel` module, internal): the
//! object store, the node pool and its lifecycle (filing objects, lazy
//! pruning of empty branches with lifespans), the pending queue, the
//! counters, the boxes the queries prune by, the query traversals and the
//! one implementation of [`SpatialIndex`]. A family is a folder with a
//! type that holds the kernel's `Core` and its settings, a node type, and
//! an implementation of the internal `Family` trait: which node an object
//! belongs to (`build_pending`, `update_boxed`, `admit`), how a node splits
//! and how the root grows (its own insert code), its pair search
//! (`find_pairs`, optionally `par_collect` on threads), its statistics and
//! its invariants (`check_invariants`). `impl_spatial_index!(Family)` then
//! gives it the whole [`SpatialIndex`] API, and the shared test suite
//! (`tests/it/common`) checks it against the brute force.
//!
//! # Hostile input
//!
//! Malformed objects are refused with an [`Error`] and change nothing: NaN
//! or infinite coordinates ([`Error::NonFinite`]), negative sizes
//! ([`Error::NegativeSize`]), `min > max` ([`Error::InvertedBox`]),
//! coordinates beyond [`MAX_COORDINATE`] ([`Error::WorldTooLarge`]), stale or
//! double-removed handles ([`Error::StaleHandle`]). Degenerate queries have
//! defined answers (an empty structure, `k = 0`, a NaN radius or a negative
//! ray length find nothing). The full table, with the test behind each row,
//! is `docs/BAD_INPUT.md` in the repository.
#![warn(missing_docs)]

mod brute;
mod bsp;
mod error;
mod events;
mod found;
pub mod geometry;
mod index;
mod kernel;
mod layers;
mod loose;
mod orthtree;
mod store;
mod traverse;

pub use brute::BruteForce;
pub use bsp::{Bsp, Bsp2, Bsp3, BspConfig};
pub use error::{Error, ValidationError};
pub use events::ContactEvents;
pub use found::{Found, FoundItem};
pub use geometry::{
    Aabb, Cone, ContactPoint, Frustum, Overlap, Plane, Ray, RayIntersection, Region, Shape, Sphere,
    Vector,
};
pub use index::{
    Contact, Counters, Filter, Handle, MAX_COORDINATE, Neighbor, Object, ObjectDesc, Pair, RayHit,
    SpatialIndex, TreeStats,
};
pub use layers::LayerMatrix;
pub use loose::{LooseConfig, LooseOctree, LooseOrthtree, LooseQuadtree, LooseUpdateCounts};
pub use orthtree::{Octree, Orthtree, OrthtreeConfig, OutOfBounds, Quadtree};

pub use glam;

/// The README's examples, compiled and run as doctests so it never rots.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
