//! Static identity keys (x25519) of the parties (from `ringfence-link`, shared with the
//! WebAssembly bindings).
//!
//! A party's [`PrivateKey`] never prints: its `Debug` is redacted and it has no `Display`. Keys
//! travel between processes as lowercase hex ([`PublicKey::to_hex`], [`PrivateKey::to_hex`]),
//! private keys only over pipes, never on a command line.

pub use ringfence_link::keys::*;
