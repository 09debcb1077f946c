//! # ringfence-core
//!
//! Secure multi-party computation over the rings Z_2^32 and Z_2^64 (Z_2^128 is there as a ring
//! type, for protocols to come), sans-IO: no sockets, no clock and no OS randomness. Time,
//! randomness and transport are injected, so the same code runs natively under tokio, in a
//! browser under `wasm-bindgen-futures`, and in the deterministic in-memory harness of the
//! `testing` module (feature `test-utils`).
//!
//! ```text
//!  ring     Z64, Z32, Z128, Bits; ring-generic batch kernels and their backends; fixed point
//!  circuit  boolean circuits with ℓ-input ANDs: layered schedule, plaintext evaluation, Bristol
//!           Fashion, passes, generators (adders, comparators, AES); knows no scheme
//!  prg      the one PRG (ChaCha12) and seeds
//!  net      PartyId, Roster (n, t, clients), frames, Transport (injected), Ctx (framing
//!           checks, counters, op numbers)
//!  ot       oblivious transfer: base OTs (Ristretto), correlated OT extension (IKNP + KOS)
//!  sharing  the traits every scheme implements: Linear (local operations), Arith (inputs,
//!           openings, products; setup and online phases), Session, InputClient
//!  rep3     3-party replicated secret sharing: arithmetic, boolean, conversions, comparisons,
//!           and its inference layers (rep3/nn.rs)
//!  meteor   METEOR's masked sharing ⟦x⟧ = (m, ⟨ψ⟩): setup/online MULT, MatMul, MSB, ReLU, pool;
//!           its field F_67 and kernels (MeteorRing: the N-MULT sum per ring), and its
//!           inference layers (meteor/nn.rs)
//!  nn       models: ONNX import, fixed-point plans, and the one inference walk (nn::exec) that
//!           every scheme runs through its `Inference` implementation
//!  spdz2k   SPDZ2k: authenticated additive sharing over Z_2^(k+s) against a dishonest
//!           majority (n ≥ 2), Beaver products, the batched MAC check before any release
//!  service  private classification: a client asks the parties to run a served model; written
//!           once over the sharing traits, with the served families listed in its registry
//!  testing  in-memory multi-party network with drop/delay/tamper hooks, and the conformance
//!           suites every scheme runs (feature test-utils)
//! ```
//!
//! ## Run loop
//! A protocol is an `async fn` over [`rep3::Rep3`] (which owns a [`net::Ctx`]). Each party runs the
//! same sequence of operations; every communication round is opened by all parties, sends only
//! queue, and receives await the peer's frame for that step. Invariants: every operation is
//! batched (one frame per peer per round whatever the length), and all randomness comes from
//! seeded PRG streams named by the operation counter, so parties never drift out of step.

pub mod bin3;
pub mod circuit;
pub mod error;
pub mod mal3;
pub mod meteor;
pub mod net;
pub mod nn;
pub mod ot;
pub mod prg;
pub mod progress;
pub mod rep3;
pub mod ring;
pub mod rss;
pub mod service;
pub mod sharing;
pub mod spdz2k;

#[cfg(any(test, feature = "test-utils"))]
pub mod testing;

pub use error::Error;
