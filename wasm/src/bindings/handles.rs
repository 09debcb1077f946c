//! Opaque JS handles over the core's share vectors and preprocessing stores. They hold one
//! party's shares or single-use material and never expose their contents; `Debug` is redacted
//! by the core types.

use std::rc::Rc;

use ringfence_core::net::PartyId;
use ringfence_core::rep3::{DaBits, Rep3Vec, SharedBits, TruncPairs};
use ringfence_core::ring::Z64;
use wasm_bindgen::prelude::*;

use super::error::{js_error, Code};

/// One party's shares of a vector over Z_2^64. Revealing consumes it.
///
/// The shares sit behind an `Rc` so that an operation's future (which must own its operands)
/// shares them instead of copying them: for 10^6 elements a copy is 32 MB per binary operation,
/// measured as the largest cost in `Party::mul` after the PRG.
#[wasm_bindgen]
pub struct SharedVec {
    inner: Option<Rc<Rep3Vec<Z64>>>,
}

impl SharedVec {
    pub(crate) fn new(v: Rep3Vec<Z64>) -> Self {
        Self { inner: Some(Rc::new(v)) }
    }

    /// The shares, if they are `me`'s and not consumed (clone the `Rc` to keep them).
    pub(crate) fn get(&self, me: PartyId, what: &str) -> Result<&Rc<Rep3Vec<Z64>>, JsValue> {
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

    /// Moves the shares out (after [`SharedVec::get`] checked them). Copies them only if a
    /// finished operation's future still holds them, which one-at-a-time operations rule out.
    pub(crate) fn take(&mut self) -> Option<Rep3Vec<Z64>> {
        self.inner.take().map(|v| Rc::try_unwrap(v).unwrap_or_else(|v| (*v).clone()))
    }
}

#[wasm_bindgen]
impl SharedVec {
    /// Number of shared elements (0 once consumed).
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.inner.as_ref().map_or(0, |v| v.len())
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
    inner: Option<SharedBits>,
}

impl SharedBitVec {
    pub(crate) fn new(b: SharedBits) -> Self {
        Self { inner: Some(b) }
    }

    pub(crate) fn take(&mut self, what: &str) -> Result<SharedBits, JsValue> {
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
        self.inner.as_ref().map_or(0, SharedBits::len)
    }

    /// Drops the bits now, as a reveal would. Idempotent.
    pub fn release(&mut self) {
        self.inner = None;
    }
}

/// A store of daBits (random bits shared both as booleans and in Z_2^64), made in the setup
/// phase; operations take what they need from the front, and nothing is ever used twice.
#[wasm_bindgen]
pub struct DaBitStore {
    pub(crate) inner: DaBits<Z64>,
}

#[wasm_bindgen]
impl DaBitStore {
    /// daBits left.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.inner.len()
    }
}

/// A store of truncation pairs for one shift (the fixed-point format's fractional bits).
#[wasm_bindgen]
pub struct TruncPairStore {
    pub(crate) inner: TruncPairs<Z64>,
}

#[wasm_bindgen]
impl TruncPairStore {
    /// Pairs left.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.inner.len()
    }

    /// The number of bits these pairs truncate by.
    #[wasm_bindgen(getter, js_name = fracBits)]
    pub fn frac_bits(&self) -> u32 {
        self.inner.frac_bits()
    }
}
