//! The core's integration tests, one binary: each file of this folder is a module (`spdz2k`,
//! `nn_schemes::rss7`, …), so the scheme generics they share are compiled once, not once per
//! file (20 binaries took about twice as long to build). One file's tests:
//! `cargo test -p ringfence-core --test all spdz2k::`.

mod common;

mod bin3;
mod circuits;
mod conformance;
mod mal3;
mod meteor;
mod nn_import;
mod nn_layers;
mod nn_meteor;
mod nn_quant;
mod nn_rep3;
mod nn_schemes;
mod nn_shape;
mod nn_trees;
mod ot;
mod rep3_arith;
mod rep3_prep;
mod rep3_security;
mod rss;
mod service;
mod spdz2k;
