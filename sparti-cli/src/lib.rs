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
pub mod queries;
pub mod replay;
pub mod scenarios;
pub mod scene;
pub mod tune;
