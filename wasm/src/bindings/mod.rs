//! JS bindings (wasm32 only): a compute party of any registered scheme over a JS-provided
//! transport, which can also serve models ([`serve`]), and the input provider of a private classification
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

use js_sys::{Object, Promise, Uint8Array};
use ringfence_core::net::{frame, Ctx, PartyId, Roster, SessionId, Stats};
use ringfence_core::prg::Seed;
use ringfence_core::rep3::Rep3Seeds;
use ringfence_core::ring::fixed::FixedPoint;
use ringfence_core::ring::Z64;
use ringfence_core::service::erased::{AnyParty, AnyShares};
use ringfence_core::service::Backend;
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

/// A [`Party`]'s session by default: the three compute parties, then the clients.
const ROSTER: Roster = Roster::THREE;

/// A [`Party`]'s scheme on its session; operations dispatch to the scheme's own protocols.
type Session = Box<dyn AnyParty<JsTransport>>;

impl Counted for Session {
    fn counters(&self) -> Stats {
        self.stats()
    }
}

/// A compute party over Z_2^64, of any scheme the core registers (`backends()`): P0, P1 or P2,
/// or among 5 or 7 for rss, or 2 or more for spdz2k.
#[wasm_bindgen]
pub struct Party {
    me: PartyId,
    /// The session's compute parties.
    roster: Roster,
    /// Participants of the session: the compute parties, then clients.
    participants: usize,
    backend: Backend,
    session: Slot<Session>,
}

#[wasm_bindgen]
impl Party {
    /// Joins session `session` (16 bytes) as party `me` (0 to `servers − 1`) with `seeds`
    /// (`{prev, next, own}`, 32-byte `Uint8Array`s: the keys shared with P_{me−1} and P_{me+1}
    /// and a private one; rss uses only `own`) over `transport`, running `scheme` (a name from
    /// `backends()`; `undefined` means `'rep3'`) among `servers` compute parties (3, or 5 or 7
    /// for rss, 2 or more for spdz2k; `undefined` means 3). Resolves once the parties agreed
    /// their keys (1 round; spdz2k makes its base OTs with its first material).
    /// `participants` is `servers`, or more when clients (ids `servers`, `servers + 1`, ...)
    /// take part in the session, as in [`Party::serve`]; `undefined` means `servers`.
    pub fn join(
        me: JsValue,
        session: JsValue,
        seeds: JsValue,
        transport: RawTransport,
        participants: JsValue,
        scheme: JsValue,
        servers: JsValue,
    ) -> Result<Promise, JsValue> {
        let servers = match servers.is_undefined() {
            true => ROSTER.n(),
            false => index(&servers, "servers", 255)?,
        };
        let backend = match (scheme.is_undefined(), scheme.as_string()) {
            (true, _) => Backend::Rep3,
            (false, Some(name)) => name
                .parse::<Backend>()
                .map_err(|e| js_error(Code::InvalidArgument, format!("scheme: {e}")))?,
            (false, None) => {
                return Err(js_error(Code::InvalidArgument, "scheme must be a string"));
            }
        };
        let roster = backend.party_roster(servers).map_err(|e| {
            js_error(Code::InvalidArgument, format!("scheme {}: servers: {e}", backend.name()))
        })?;
        let me = PartyId(index(&me, "party id", servers.saturating_sub(1) as u64)? as u8);
        let participants = match participants.is_undefined() {
            true => roster.participants(0),
            false => index(&participants, "parties", 255)?,
        };
        if participants < roster.n() {
            return Err(js_error(
                Code::InvalidArgument,
                format!(
                    "parties must be at least {} (the compute parties), got {participants}",
                    roster.n()
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
            let party = backend.join(ctx, roster.n(), seeds).await.map_err(from_core)?;
            let session = Slot::new(party, "the party");
            Ok(Self { me, roster, participants, backend, session }.into())
        }))
    }

    /// This party's index.
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> u8 {
        self.me.0
    }

    /// The scheme's name.
    #[wasm_bindgen(getter)]
    pub fn scheme(&self) -> String {
        self.backend.name().into()
    }

    /// Communication counters so far: `{bytesSent, payloadBytesSent, framesSent, rounds}`
    /// (as of the last finished operation).
    pub fn stats(&self) -> Object {
        stats_object(self.session.stats())
    }

    /// A fresh random sharing of `n` elements (no communication; rep3 and mal3).
    pub fn random(&self, n: JsValue) -> Result<SharedVec, JsValue> {
        let n = index(&n, "n", MAX_ELEMS)?;
        self.session.with(|p| p.random(n).map(SharedVec::new).map_err(from_core))
    }

    /// Secret-shares `n` values owned by party `owner`: the owner passes them (a
    /// `BigInt64Array` or `BigUint64Array` of length `n`), the others pass `null` (1 round).
    pub fn input(&self, owner: JsValue, values: JsValue, n: JsValue) -> Result<Promise, JsValue> {
        let owner = PartyId(index(&owner, "owner", self.roster.n() as u64 - 1)? as u8);
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
        self.session
            .spawn(move |p| Box::pin(async move { shared(p.input(owner, values, n).await) }))
    }

    /// `x + y` (local).
    pub fn add(&self, x: &SharedVec, y: &SharedVec) -> Result<SharedVec, JsValue> {
        let (x, y) = self.pair(x, y, "add")?;
        x.add(&y).map(SharedVec::new).map_err(from_core)
    }

    /// `x − y` (local).
    pub fn sub(&self, x: &SharedVec, y: &SharedVec) -> Result<SharedVec, JsValue> {
        let (x, y) = self.pair(x, y, "sub")?;
        x.sub(&y).map(SharedVec::new).map_err(from_core)
    }

    /// `−x` (local).
    pub fn neg(&self, x: &SharedVec) -> Result<SharedVec, JsValue> {
        Ok(SharedVec::new(x.get(self.me, "neg")?.neg()))
    }

    /// Elementwise `x·y`, truncated by `fracBits` (`undefined` or 0: the exact ring product)
    /// with material made now (1 round in rep3).
    pub fn mul(
        &self,
        x: &SharedVec,
        y: &SharedVec,
        frac_bits: JsValue,
    ) -> Result<Promise, JsValue> {
        let (x, y) = self.pair(x, y, "mul")?;
        let f = shift(&frac_bits, true)?;
        self.session.spawn(move |p| Box::pin(async move { shared(p.mul(x, y, f, None).await) }))
    }

    /// Matrix product of `a` (m×k) and `b` (k×n), row-major, truncated by `fracBits` as
    /// [`Party::mul`] (1 round in rep3).
    pub fn matmul(
        &self,
        a: &SharedVec,
        b: &SharedVec,
        m: JsValue,
        k: JsValue,
        n: JsValue,
        frac_bits: JsValue,
    ) -> Result<Promise, JsValue> {
        let (a, b, dims) = self.matrices(a, b, &m, &k, &n, "matmul")?;
        let f = shift(&frac_bits, true)?;
        self.session
            .spawn(move |p| Box::pin(async move { shared(p.matmul(a, b, dims, f, None).await) }))
    }

    /// `[x < y]` as signed integers (9 rounds in rep3).
    pub fn lt(&self, x: &SharedVec, y: &SharedVec) -> Result<Promise, JsValue> {
        let (x, y) = self.pair(x, y, "lt")?;
        self.session.spawn(move |p| {
            Box::pin(async move {
                let c = p.lt(x, y).await.map_err(from_core)?;
                Ok(SharedBitVec::new(c).into())
            })
        })
    }

    /// Makes the material of `n` ReLUs (setup phase; daBits in rep3 and mal3).
    pub fn dabits(&self, n: JsValue) -> Result<Promise, JsValue> {
        let n = index(&n, "n", MAX_ELEMS)?;
        self.session.spawn(move |p| {
            Box::pin(async move {
                let inner = p.bits(n).await.map_err(from_core)?;
                Ok(DaBitStore { inner }.into())
            })
        })
    }

    /// `max(x, 0)` elementwise, taking `x.length` units from `store` (9 rounds in rep3).
    pub fn relu(&self, x: &SharedVec, store: &mut DaBitStore) -> Result<Promise, JsValue> {
        let x = x.get(self.me, "relu")?.clone();
        self.session.idle()?;
        let r = store.inner.take(x.len()).map_err(from_core)?;
        self.session.spawn(move |p| Box::pin(async move { shared(p.relu(x, Some(r)).await) }))
    }

    /// Makes the material of `n` fixed-point products' outputs truncated by `fracBits` (setup
    /// phase; truncation pairs in rep3, and checked triples in mal3).
    #[wasm_bindgen(js_name = truncPairs)]
    pub fn trunc_pairs(&self, n: JsValue, frac_bits: JsValue) -> Result<Promise, JsValue> {
        let n = index(&n, "n", MAX_ELEMS)?;
        let d = shift(&frac_bits, false)?;
        self.session.spawn(move |p| {
            Box::pin(async move {
                let inner = p.products(n, d).await.map_err(from_core)?;
                Ok(TruncPairStore { inner, frac_bits: d }.into())
            })
        })
    }

    /// Fixed-point `x·y`, truncated with `x.length` units from `pairs` (1 round in rep3).
    #[wasm_bindgen(js_name = mulFixed)]
    pub fn mul_fixed(
        &self,
        x: &SharedVec,
        y: &SharedVec,
        pairs: &mut TruncPairStore,
    ) -> Result<Promise, JsValue> {
        let (x, y) = self.pair(x, y, "mulFixed")?;
        self.session.idle()?;
        let (t, f) = (pairs.inner.take(x.len()).map_err(from_core)?, pairs.frac_bits);
        self.session.spawn(move |p| Box::pin(async move { shared(p.mul(x, y, f, Some(t)).await) }))
    }

    /// Fixed-point matrix product, truncated with `m·n` units from `pairs` (1 round in rep3).
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
        let (a, b, dims) = self.matrices(a, b, &m, &k, &n, "matmulFixed")?;
        self.session.idle()?;
        let (t, f) = (pairs.inner.take(dims.0 * dims.2).map_err(from_core)?, pairs.frac_bits);
        self.session
            .spawn(move |p| Box::pin(async move { shared(p.matmul(a, b, dims, f, Some(t)).await) }))
    }

    /// Opens `x` to all three parties (1 round); consumes `x`. Resolves with a `BigInt64Array`.
    pub fn reveal(&self, x: &mut SharedVec) -> Result<Promise, JsValue> {
        x.get(self.me, "reveal")?;
        self.session.idle()?;
        let x = x.take().ok_or_else(|| self.session.busy())?;
        self.session.spawn(move |p| {
            Box::pin(async move {
                let v = p.open(x).await.map_err(from_core)?;
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
                let v = p.open_bits(b).await.map_err(from_core)?;
                let bytes: Vec<u8> = v.into_iter().map(u8::from).collect();
                Ok(Uint8Array::from(bytes.as_slice()).into())
            })
        })
    }
}

impl Party {
    /// Two live share vectors of this party with equal lengths.
    fn pair(
        &self,
        x: &SharedVec,
        y: &SharedVec,
        what: &str,
    ) -> Result<(AnyShares, AnyShares), JsValue> {
        let (x, y) = (x.get(self.me, what)?, y.get(self.me, what)?);
        if x.len() != y.len() {
            return Err(js_error(
                Code::LengthMismatch,
                format!("{what}: operands have {} and {} elements", x.len(), y.len()),
            ));
        }
        Ok((x.clone(), y.clone()))
    }

    /// Checks matrix operands: `a` is m×k and `b` is k×n.
    #[allow(clippy::type_complexity)]
    fn matrices(
        &self,
        a: &SharedVec,
        b: &SharedVec,
        m: &JsValue,
        k: &JsValue,
        n: &JsValue,
        what: &str,
    ) -> Result<(AnyShares, AnyShares, (usize, usize, usize)), JsValue> {
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
        Ok((a.clone(), b.clone(), (m, k, n)))
    }
}

/// A truncation: `fracBits` in 1..=62, or also 0 (and `undefined` for 0) where `exact` is
/// allowed.
fn shift(v: &JsValue, exact: bool) -> Result<u32, JsValue> {
    if exact && v.is_undefined() {
        return Ok(0);
    }
    let d = index(v, "fracBits", 62)? as u32;
    if d == 0 && !exact {
        return Err(js_error(Code::InvalidArgument, "fracBits must be in 1..=62"));
    }
    Ok(d)
}

fn shared(r: Result<AnyShares, ringfence_core::Error>) -> Result<JsValue, JsValue> {
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
    Backend::all().map(|b| b.name().to_string()).collect()
}

/// Whether this module was compiled with wasm SIMD (`simd128`).
#[wasm_bindgen(js_name = builtWithSimd)]
pub fn built_with_simd() -> bool {
    cfg!(target_feature = "simd128")
}
