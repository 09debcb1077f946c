//! JS bindings (wasm32 only): a `rep3` compute party over a JS-provided transport, which can
//! also serve models ([`serve`]), and the input provider of a private classification
//! ([`Client`], `ringfence_core::service`).
//!
//! The SDK (`web/`, npm package `ringfence`) wraps these classes; they are not its public API.
//! Every method checks its arguments synchronously and throws before anything is sent; the
//! communicating ones return a `Promise` that rejects with a coded error (see [`error`]).
//! A party or client runs one operation at a time ([`slot`]): the three parties of a session
//! must call the same operations in the same order, each awaiting the previous one.

#![cfg(target_arch = "wasm32")]
// wasm-bindgen's macros expand to `unsafe` glue (ABI conversions) inside this module; the
// module's own code has no `unsafe` block.
#![allow(unsafe_code)]

mod args;
mod client;
mod error;
mod handles;
mod noise;
mod serve;
mod slot;
mod transport;

use std::rc::Rc;

use js_sys::{Object, Promise, Uint8Array};
use ringfence_core::net::{frame, Ctx, PartyId, Roster, SessionId, Stats};
use ringfence_core::prg::Seed;
use ringfence_core::rep3::{Rep3, Rep3Seeds, Rep3Vec};
use ringfence_core::ring::fixed::FixedPoint;
use ringfence_core::ring::Z64;
use ringfence_core::sharing::Boolean;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use args::{bytes, field, index, reals, ring_values, to_bigint64};
pub use client::Client;
use error::{from_core, js_error, Code};
pub use handles::{DaBitStore, SharedBitVec, SharedVec, TruncPairStore};
pub use noise::{noise_keypair, NoiseLinks, RawByteLink};
pub use serve::model_shape;
use slot::{stats_object, Counted, Slot};
use transport::JsTransport;
pub use transport::RawTransport;

/// The most elements one operation takes: one frame carries at most `MAX_PAYLOAD` bytes.
const MAX_ELEMS: u64 = (frame::MAX_PAYLOAD / 8) as u64;

/// A [`Party`]'s session: rep3's three compute parties, then the clients.
const ROSTER: Roster = Roster::THREE;
/// The highest compute party id.
const LAST_PARTY: u64 = ROSTER.n() as u64 - 1;

type Session = Rep3<JsTransport>;
/// One party's shares as held by a [`SharedVec`]; operations clone the `Rc`, not the shares.
type Shares = Rc<Rep3Vec<Z64>>;

impl Counted for Session {
    fn counters(&self) -> Stats {
        self.ctx().stats()
    }
}

/// A compute party P0, P1 or P2 of a `rep3` session over Z_2^64.
#[wasm_bindgen]
pub struct Party {
    me: PartyId,
    /// Participants of the session: the three parties, then clients (ids 3, 4, ...).
    participants: usize,
    session: Slot<Session>,
}

#[wasm_bindgen]
impl Party {
    /// Joins session `session` (16 bytes) as party `me` (0, 1 or 2) with `seeds`
    /// (`{prev, next, own}`, 32-byte `Uint8Array`s: the keys shared with P_{me−1} and P_{me+1}
    /// and a private one) over `transport`. Resolves once the three parties agreed their
    /// common key (1 round). `participants` is 3, or more when clients (ids 3, 4, ...) take
    /// part in the session, as in [`Party::serve`]; `undefined` means 3.
    pub fn join(
        me: JsValue,
        session: JsValue,
        seeds: JsValue,
        transport: RawTransport,
        participants: JsValue,
    ) -> Result<Promise, JsValue> {
        let me = PartyId(index(&me, "party id", LAST_PARTY)? as u8);
        let participants = match participants.is_undefined() {
            true => ROSTER.participants(0),
            false => index(&participants, "parties", 255)?,
        };
        if participants < ROSTER.n() {
            return Err(js_error(
                Code::InvalidArgument,
                format!(
                    "parties must be at least {} (the compute parties), got {participants}",
                    ROSTER.n()
                ),
            ));
        }
        let session = SessionId(bytes::<16>(&session, "session id")?);
        let seed = |k: &str| -> Result<Seed, JsValue> {
            Ok(Seed::from_bytes(bytes::<32>(&field(&seeds, k, "seeds")?, &format!("seeds.{k}"))?))
        };
        let seeds = Rep3Seeds { prev: seed("prev")?, next: seed("next")?, own: seed("own")? };
        if !transport.is_object() {
            return Err(js_error(Code::InvalidArgument, "transport must be an object"));
        }
        let ctx = Ctx::new(me, participants, session, JsTransport::new(transport));
        Ok(future_to_promise(async move {
            let rep = Rep3::setup(ctx, seeds).await.map_err(from_core)?;
            Ok(Self { me, participants, session: Slot::new(rep, "the party") }.into())
        }))
    }

    /// This party's index.
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> u8 {
        self.me.0
    }

    /// Communication counters so far: `{bytesSent, payloadBytesSent, framesSent, rounds}`
    /// (as of the last finished operation).
    pub fn stats(&self) -> Object {
        stats_object(self.session.stats())
    }

    /// A fresh random sharing of `n` elements (no communication).
    pub fn random(&self, n: JsValue) -> Result<SharedVec, JsValue> {
        let n = index(&n, "n", MAX_ELEMS)?;
        self.session.with(|rep| Ok(SharedVec::new(rep.random::<Z64>(n))))
    }

    /// Secret-shares `n` values owned by party `owner`: the owner passes them (a
    /// `BigInt64Array` or `BigUint64Array` of length `n`), the others pass `null` (1 round).
    pub fn input(&self, owner: JsValue, values: JsValue, n: JsValue) -> Result<Promise, JsValue> {
        let owner = PartyId(index(&owner, "owner", LAST_PARTY)? as u8);
        let n = index(&n, "n", MAX_ELEMS)?;
        let values = if values.is_null() || values.is_undefined() {
            None
        } else {
            Some(ring_values(&values, "values")?)
        };
        match (&values, owner == self.me) {
            (Some(v), true) if v.len() != n => {
                return Err(js_error(
                    Code::LengthMismatch,
                    format!("input: {} values for n = {n}", v.len()),
                ))
            }
            (None, true) => {
                return Err(js_error(
                    Code::ApiMisuse,
                    format!("input: the owner {owner} must pass its values"),
                ))
            }
            (Some(_), false) => {
                return Err(js_error(
                    Code::ApiMisuse,
                    format!("input from {owner}: {} must pass null, not values", self.me),
                ))
            }
            _ => {}
        }
        self.session.spawn(move |p| {
            Box::pin(async move {
                let x = p.input(owner, values.as_deref(), n).await.map_err(from_core)?;
                Ok(SharedVec::new(x).into())
            })
        })
    }

    /// `x + y` (local).
    pub fn add(&self, x: &SharedVec, y: &SharedVec) -> Result<SharedVec, JsValue> {
        let (x, y) = self.pair(x, y, "add")?;
        x.add(y).map(SharedVec::new).map_err(from_core)
    }

    /// `x − y` (local).
    pub fn sub(&self, x: &SharedVec, y: &SharedVec) -> Result<SharedVec, JsValue> {
        let (x, y) = self.pair(x, y, "sub")?;
        x.sub(y).map(SharedVec::new).map_err(from_core)
    }

    /// `−x` (local).
    pub fn neg(&self, x: &SharedVec) -> Result<SharedVec, JsValue> {
        Ok(SharedVec::new(x.get(self.me, "neg")?.neg()))
    }

    /// Elementwise `x·y` (1 round).
    pub fn mul(&self, x: &SharedVec, y: &SharedVec) -> Result<Promise, JsValue> {
        let (x, y) = self.pair(x, y, "mul")?;
        let (x, y) = (Rc::clone(x), Rc::clone(y));
        self.session.spawn(move |p| Box::pin(async move { shared(p.mul(&x, &y).await) }))
    }

    /// Matrix product of `a` (m×k) and `b` (k×n), row-major (1 round).
    pub fn matmul(
        &self,
        a: &SharedVec,
        b: &SharedVec,
        m: JsValue,
        k: JsValue,
        n: JsValue,
    ) -> Result<Promise, JsValue> {
        let (a, b, m, k, n) = self.matrices(a, b, &m, &k, &n, "matmul")?;
        self.session
            .spawn(move |p| Box::pin(async move { shared(p.matmul(&a, &b, m, k, n).await) }))
    }

    /// `[x < y]` as signed integers (9 rounds).
    pub fn lt(&self, x: &SharedVec, y: &SharedVec) -> Result<Promise, JsValue> {
        let (x, y) = self.pair(x, y, "lt")?;
        let (x, y) = (Rc::clone(x), Rc::clone(y));
        self.session.spawn(move |p| {
            Box::pin(async move {
                let c = p.lt(&x, &y).await.map_err(from_core)?;
                Ok(SharedBitVec::new(c).into())
            })
        })
    }

    /// Makes `n` daBits (setup phase, 2 rounds).
    pub fn dabits(&self, n: JsValue) -> Result<Promise, JsValue> {
        let n = index(&n, "n", MAX_ELEMS)?;
        self.session.spawn(move |p| {
            Box::pin(async move {
                let inner = p.dabits::<Z64>(n).await.map_err(from_core)?;
                Ok(DaBitStore { inner }.into())
            })
        })
    }

    /// `max(x, 0)` elementwise, taking `x.length` daBits from `store` (9 rounds).
    pub fn relu(&self, x: &SharedVec, store: &mut DaBitStore) -> Result<Promise, JsValue> {
        let x = Rc::clone(x.get(self.me, "relu")?);
        self.session.idle()?;
        let r = store.inner.take(x.len()).map_err(from_core)?;
        self.session.spawn(move |p| Box::pin(async move { shared(p.relu(&x, r).await) }))
    }

    /// Makes `n` truncation pairs for `fracBits`-bit fixed point (setup phase).
    #[wasm_bindgen(js_name = truncPairs)]
    pub fn trunc_pairs(&self, n: JsValue, frac_bits: JsValue) -> Result<Promise, JsValue> {
        let n = index(&n, "n", MAX_ELEMS)?;
        let d = index(&frac_bits, "fracBits", 62)? as u32;
        if d == 0 {
            return Err(js_error(Code::InvalidArgument, "fracBits must be in 1..=62"));
        }
        self.session.spawn(move |p| {
            Box::pin(async move {
                let inner = p.trunc_pairs::<Z64>(n, d).await.map_err(from_core)?;
                Ok(TruncPairStore { inner }.into())
            })
        })
    }

    /// Fixed-point `x·y`, truncated with `x.length` pairs from `pairs` (1 round).
    #[wasm_bindgen(js_name = mulFixed)]
    pub fn mul_fixed(
        &self,
        x: &SharedVec,
        y: &SharedVec,
        pairs: &mut TruncPairStore,
    ) -> Result<Promise, JsValue> {
        let (x, y) = self.pair(x, y, "mulFixed")?;
        let (x, y) = (Rc::clone(x), Rc::clone(y));
        self.session.idle()?;
        let t = pairs.inner.take(x.len()).map_err(from_core)?;
        self.session.spawn(move |p| Box::pin(async move { shared(p.mul_fixed(&x, &y, t).await) }))
    }

    /// Fixed-point matrix product, truncated with `m·n` pairs from `pairs` (1 round).
    #[wasm_bindgen(js_name = matmulFixed)]
    #[allow(clippy::too_many_arguments)]
    pub fn matmul_fixed(
        &self,
        a: &SharedVec,
        b: &SharedVec,
        m: JsValue,
        k: JsValue,
        n: JsValue,
        pairs: &mut TruncPairStore,
    ) -> Result<Promise, JsValue> {
        let (a, b, m, k, n) = self.matrices(a, b, &m, &k, &n, "matmulFixed")?;
        let t = pairs.inner.take(m * n).map_err(from_core)?;
        self.session.spawn(move |p| {
            Box::pin(async move { shared(p.matmul_fixed(&a, &b, (m, k, n), t).await) })
        })
    }

    /// Opens `x` to all three parties (1 round); consumes `x`. Resolves with a `BigInt64Array`.
    pub fn reveal(&self, x: &mut SharedVec) -> Result<Promise, JsValue> {
        x.get(self.me, "reveal")?;
        self.session.idle()?;
        let x = x.take().ok_or_else(|| self.session.busy())?;
        self.session.spawn(move |p| {
            Box::pin(async move {
                let v = p.reveal(x).await.map_err(from_core)?;
                Ok(to_bigint64(&v).into())
            })
        })
    }

    /// Opens shared bits to all three parties (1 round); consumes them. Resolves with a
    /// `Uint8Array` of 0/1.
    #[wasm_bindgen(js_name = revealBits)]
    pub fn reveal_bits(&self, b: &mut SharedBitVec) -> Result<Promise, JsValue> {
        if b.is_consumed() {
            return Err(js_error(
                Code::ApiMisuse,
                "revealBits: the bits were already revealed or freed",
            ));
        }
        self.session.idle()?;
        let b = b.take("revealBits")?;
        self.session.spawn(move |p| {
            Box::pin(async move {
                let v = p.reveal_bits(b).await.map_err(from_core)?;
                let bytes: Vec<u8> = v.into_iter().map(u8::from).collect();
                Ok(Uint8Array::from(bytes.as_slice()).into())
            })
        })
    }
}

impl Party {
    /// Two live share vectors of this party with equal lengths.
    fn pair<'a>(
        &self,
        x: &'a SharedVec,
        y: &'a SharedVec,
        what: &str,
    ) -> Result<(&'a Shares, &'a Shares), JsValue> {
        let (x, y) = (x.get(self.me, what)?, y.get(self.me, what)?);
        if x.len() != y.len() {
            return Err(js_error(
                Code::LengthMismatch,
                format!("{what}: operands have {} and {} elements", x.len(), y.len()),
            ));
        }
        Ok((x, y))
    }

    /// Checks matrix operands: `a` is m×k and `b` is k×n.
    fn matrices(
        &self,
        a: &SharedVec,
        b: &SharedVec,
        m: &JsValue,
        k: &JsValue,
        n: &JsValue,
        what: &str,
    ) -> Result<(Shares, Shares, usize, usize, usize), JsValue> {
        let (m, k, n) =
            (index(m, "m", MAX_ELEMS)?, index(k, "k", MAX_ELEMS)?, index(n, "n", MAX_ELEMS)?);
        let (a, b) = (a.get(self.me, what)?, b.get(self.me, what)?);
        let fits = |len: usize, r: usize, c: usize| r.checked_mul(c) == Some(len);
        if !fits(a.len(), m, k) || !fits(b.len(), k, n) || (m as u64) * (n as u64) > MAX_ELEMS {
            return Err(js_error(
                Code::LengthMismatch,
                format!(
                    "{what}: a has {} elements (m·k = {m}·{k}), b has {} (k·n = {k}·{n})",
                    a.len(),
                    b.len()
                ),
            ));
        }
        Ok((Rc::clone(a), Rc::clone(b), m, k, n))
    }
}

fn shared(r: Result<Rep3Vec<Z64>, ringfence_core::Error>) -> Result<JsValue, JsValue> {
    r.map(|v| SharedVec::new(v).into()).map_err(from_core)
}

/// Encodes reals (a `Float64Array`, `Float32Array` or `number[]`) as fixed point with
/// `fracBits` fractional bits in Z_2^64. Non-finite or too large values fail with
/// `OUT_OF_RANGE`.
#[wasm_bindgen(js_name = encodeFixed)]
pub fn encode_fixed(values: JsValue, frac_bits: JsValue) -> Result<js_sys::BigInt64Array, JsValue> {
    let fp = FixedPoint::new(index(&frac_bits, "fracBits", 62)? as u32);
    let xs = reals(&values, "values")?;
    let v: Vec<Z64> = fp.encode_slice(&xs).map_err(from_core)?;
    Ok(to_bigint64(&v))
}

/// Decodes fixed-point ring elements (`BigInt64Array`/`BigUint64Array`) to a `Float64Array`.
#[wasm_bindgen(js_name = decodeFixed)]
pub fn decode_fixed(values: JsValue, frac_bits: JsValue) -> Result<js_sys::Float64Array, JsValue> {
    let fp = FixedPoint::new(index(&frac_bits, "fracBits", 62)? as u32);
    let v = ring_values(&values, "values")?;
    let out: Vec<f64> = v.into_iter().map(|x| fp.decode(x)).collect();
    Ok(js_sys::Float64Array::from(out.as_slice()))
}

/// The default number of fractional bits in Z_2^64: the format of every served model (the
/// SDK's `DEFAULT_FRAC_BITS` is checked against it).
#[wasm_bindgen(js_name = defaultFracBits)]
pub fn default_frac_bits() -> u32 {
    FixedPoint::DEFAULT_64.frac_bits
}

/// The names of the protocol families the core serves (the SDK's `BACKENDS` is checked
/// against them).
#[wasm_bindgen]
pub fn backends() -> Vec<String> {
    ringfence_core::service::Backend::all().map(|b| b.name().to_string()).collect()
}

/// Whether this module was compiled with wasm SIMD (`simd128`).
#[wasm_bindgen(js_name = builtWithSimd)]
pub fn built_with_simd() -> bool {
    cfg!(target_feature = "simd128")
}
