//! The `sparti` command-line tool as a library: scene files ([`scene`]),
//! query files ([`queries`]) and their replay through any sparti structure
//! ([`replay`]), the demos ([`demo`]), and the `bench` and `tune` commands ([`bench`], [`tune`]). The binary (`main.rs`) adds the
//! command line.
#![warn(missing_docs)]

pub mod bench;
pub mod demo;
pub mod measure;
pub mod plot;
pub mod queries;
pub mod replay;
pub mod scenarios;
pub mod scene;
pub mod tune;
