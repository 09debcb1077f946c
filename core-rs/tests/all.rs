//! The core's integration tests, as one test binary: each file here is a module of it, so the
//! protocols' generic code is compiled once for all of them instead of once per file (most of
//! `cargo test`'s build time went to those copies). Run one file's tests with
//! `cargo test -p ringfence-core --test core FILE::`, e.g. `nn_rep3::`.

mod common;

mod conformance;
mod mal3;
mod meteor;
mod nn_import;
mod nn_layers;
mod nn_meteor;
mod nn_rep3;
mod nn_schemes;
mod nn_shape;
mod nn_trees;
mod rep3_arith;
mod rep3_prep;
mod rep3_security;
mod service;
