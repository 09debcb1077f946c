//! Records: how frames are cut into Noise messages on a byte stream (from `ringfence-link`,
//! shared with the WebAssembly bindings).

pub use ringfence_link::record::*;
