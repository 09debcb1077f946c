//! WebAssembly bindings of `ringfence-core` (bindings only; the SDK issue fills this crate).
//!
//! Today it proves that the core builds for `wasm32-unknown-unknown` unchanged.

pub use ringfence_core as core;
