//! Recorded scenes: the scene-file and query-file formats of the `sparti`
//! tool, and the replay of a scene through any sparti structure.
//!
//! - [`scene`]: a CSV recording of a game's objects, frame by frame
//!   ([`scene::parse_scene`]).
//! - [`queries`]: one query per line ([`queries::parse_queries`]).
//! - [`replay`]: a scene's frames applied to a structure, its pairs and
//!   its answers to the queries in a canonical order
//!   ([`replay::Replayer`]).
//!
//! They live here, beside the generated scenes, rather than in the tool,
//! so that what checks them (the fuzz targets, the tool's tests) builds
//! without the tool's window, image and terminal dependencies.
//!
//! ```
//! use sparti::glam::Vec2;
//! use sparti::{BruteForce, Quadtree};
//! use sparti_scenes::files::replay::Replayer;
//! use sparti_scenes::files::scene::parse_scene;
//!
//! let scene = parse_scene(b"frame,id,kind,x,y,r\n0,1,circle,0,0,1\n0,2,circle,1.5,0,1\n")
//!     .expect("a valid scene");
//! let mut tree = Replayer::<Vec2, _>::new(Quadtree::<u64>::new(), "tree");
//! let mut brute = Replayer::<Vec2, _>::new(BruteForce::<Vec2, u64>::new(), "brute");
//! for frame in &scene.frames {
//!     tree.apply(frame).expect("inside sparti's limits");
//!     brute.apply(frame).expect("inside sparti's limits");
//!     assert_eq!(tree.pairs(), brute.pairs());
//!     tree.end_frame();
//!     brute.end_frame();
//! }
//! ```

pub mod queries;
pub mod replay;
pub mod scene;
