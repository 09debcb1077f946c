//! Opaque JS handles over the core's type-erased share vectors and material
//! (`service::erased`). They hold one party's shares or single-use material and never expose
//! their contents; `Debug` is redacted by the core types.

use ringfence_core::net::PartyId;
use ringfence_core::service::erased::{AnyBits, AnyShares, AnyStock};
use wasm_bindgen::prelude::*;

use super::error::{js_error, Code};

/// One party's shares of a vector over Z_2^64, in the party's scheme. Revealing consumes it.
///
/// The shares sit behind an `Rc` ([`AnyShares`]) so that an operation's future (which must own
/// its operands) shares them instead of copying them: for 10^6 elements a copy is 32 MB per
/// binary operation, measured as the largest cost in `Party::mul` after the PRG.
#[wasm_bindgen]
pub struct SharedVec {
    inner: Option<AnyShares>,
}

impl SharedVec {
    pub(crate) fn new(v: AnyShares) -> Self {
        Self { inner: Some(v) }
    }

    /// The shares, if they are `me`'s and not consumed (clone them to keep them: it shares).
    pub(crate) fn get(&self, me: PartyId, what: &str) -> Result<&AnyShares, JsValue> {
        let Some(v) = &self.inner else {
            return Err(js_error(
                Code::ApiMisuse,
                format!("{what}: the shares were already revealed or freed"),
            ));
        };
        if v.holder() != me {
            return Err(js_error(
                Code::ApiMisuse,
                format!("{what}: shares held by {} passed to {me}", v.holder()),
            ));
        }
        Ok(v)
    }

    /// Moves the shares out (after [`SharedVec::get`] checked them).
    pub(crate) fn take(&mut self) -> Option<AnyShares> {
        self.inner.take()
    }
}

#[wasm_bindgen]
impl SharedVec {
    /// Number of shared elements (0 once consumed).
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.inner.as_ref().map_or(0, AnyShares::len)
    }

    /// True once the shares were revealed or released.
    #[wasm_bindgen(getter)]
    pub fn consumed(&self) -> bool {
        self.inner.is_none()
    }

    /// Drops the shares now, as a reveal would (their memory is reused by the next operation;
    /// the garbage collector would free it only when it finalizes this handle). Idempotent.
    pub fn release(&mut self) {
        self.inner = None;
    }
}

/// One party's boolean shares of bits (a comparison result). Revealing consumes it.
#[wasm_bindgen]
pub struct SharedBitVec {
    inner: Option<AnyBits>,
}

impl SharedBitVec {
    pub(crate) fn new(b: AnyBits) -> Self {
        Self { inner: Some(b) }
    }

    pub(crate) fn take(&mut self, what: &str) -> Result<AnyBits, JsValue> {
        self.inner.take().ok_or_else(|| {
            js_error(Code::ApiMisuse, format!("{what}: the bits were already revealed or freed"))
        })
    }

    pub(crate) fn is_consumed(&self) -> bool {
        self.inner.is_none()
    }
}

#[wasm_bindgen]
impl SharedBitVec {
    /// Number of shared bits (0 once consumed).
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.inner.as_ref().map_or(0, AnyBits::len)
    }

    /// Drops the bits now, as a reveal would. Idempotent.
    pub fn release(&mut self) {
        self.inner = None;
    }
}

/// The material of ReLUs made in the setup phase (daBits: random bits shared both as booleans
/// and in Z_2^64); operations take what they need from the front, and nothing is ever used
/// twice.
#[wasm_bindgen]
pub struct DaBitStore {
    pub(crate) inner: AnyStock,
}

#[wasm_bindgen]
impl DaBitStore {
    /// Units left.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.inner.len()
    }
}

/// The material of fixed-point products for one shift (the format's fractional bits):
/// truncation pairs, and in mal3 the checked triples too.
#[wasm_bindgen]
pub struct TruncPairStore {
    pub(crate) inner: AnyStock,
    pub(crate) frac_bits: u32,
}

#[wasm_bindgen]
impl TruncPairStore {
    /// Outputs' material left.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.inner.len()
    }

    /// The number of bits these pairs truncate by.
    #[wasm_bindgen(getter, js_name = fracBits)]
    pub fn frac_bits(&self) -> u32 {
        self.frac_bits
    }
}
