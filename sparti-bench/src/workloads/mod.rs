//! The eight workloads, each run through sparti's structures and the
//! peers that support it.

mod build;
mod pairs;
mod queries;

pub use build::{build2d, build3d};
pub use pairs::{pairs2d, pairs3d};
pub use queries::{frustum, memory, nearest, ray_and_box};
