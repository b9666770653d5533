//! The `sparti` command-line tool as a library: scene files ([`scene`]),
//! query files ([`queries`]) and their replay through any sparti structure
//! ([`replay`]), and the demos ([`demo`]). The binary (`main.rs`) adds the
//! command line.
#![warn(missing_docs)]

pub mod demo;
pub mod queries;
pub mod replay;
pub mod scene;
