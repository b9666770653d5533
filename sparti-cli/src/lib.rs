//! The `sparti` command-line tool as a library: the structures it knows
//! ([`catalogue`]), scene files ([`scene`]),
//! query files ([`queries`]) and their replay through any sparti structure
//! ([`replay`]), the demos ([`demo`]), and the `bench` and `tune` commands
//! ([`bench`](mod@bench), [`tune`](mod@tune)), which measure through
//! [`measure`] and share [`inputs`] and [`console`]. The binary
//! (`main.rs`) adds the command line.
#![warn(missing_docs)]

pub mod bench;
pub mod catalogue;
pub mod console;
pub mod demo;
pub mod inputs;
pub mod measure;
pub mod plot;
pub mod scenarios;
pub mod tune;

// Scene files, query files and their replay, which live in the scene kit
// (so that the fuzz targets build without the tool's dependencies), under
// the names the tool has always given them.
pub use sparti_scenes::files::{queries, replay, scene};
