//! End-to-end Noise links over a JS byte link through the relay: the same handshake, records
//! and pairwise seeds as native parties (`ringfence-link`), so a wasm party and a native party
//! share identical links and seeds and the relay sees only ciphertext.
//!
//! The byte link is the SDK's relay connection in `noise-aesgcm` mode: `send(to, bytes)`
//! queues one relay message, `recv(from)` resolves with the next payload from that peer (any
//! slice of the peer's byte stream), rejecting with `code: "CLOSED"` / `"TIMEOUT"` as a
//! transport does. [`NoiseLinks`] itself is a frame transport (`send(to, frame)`,
//! `recv(from)`) to hand to `Party.join`; its errors are the byte link's, or a `TRANSPORT`
//! error for a record that fails to decrypt.
//!
//! Link establishment never waits before sending: every party first sends its hellos to the
//! parties above it, then answers the ones below, then reads the answers, so no order of
//! arrival can deadlock.

use core::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Object, Promise, Uint8Array};
use ringfence_core::net::frame::{HEADER_LEN, MAX_PAYLOAD};
use ringfence_core::net::{PartyId, SessionId};
use ringfence_core::prg::{Prg, Seed};
use ringfence_link::record::{FrameDecoder, FrameEncoder};
use ringfence_link::{Handshake, LinkEnds, PrivateKey, PublicKey, Security, StaticKeypair};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use zeroize::Zeroizing;

use super::args::{bytes, index, object};
use super::error::{js_error, Code};

/// Largest payload of one relay message (the native client uses the same).
const CHUNK: usize = 64 << 10;
/// PRG domain turning the caller's entropy into one key per handshake.
const ENTROPY_DOMAIN: u64 = u64::from_le_bytes(*b"rf-links");

#[wasm_bindgen]
extern "C" {
    /// A byte link to the relay (the SDK's relay connection in Noise mode).
    #[wasm_bindgen(typescript_type = "RawTransport")]
    pub type RawByteLink;

    #[wasm_bindgen(method, catch, js_name = send)]
    fn send_bytes(this: &RawByteLink, to: u32, bytes: Uint8Array) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(method, catch, js_name = recv)]
    fn recv_bytes(this: &RawByteLink, from: u32) -> Result<JsValue, JsValue>;
}

/// Encrypted links of one party to every other, over one byte link.
#[wasm_bindgen]
pub struct NoiseLinks {
    me: PartyId,
    state: Rc<State>,
}

struct State {
    raw: RawByteLink,
    peers: Vec<Option<RefCell<Peer>>>,
}

struct Peer {
    enc: FrameEncoder,
    dec: FrameDecoder,
    seed: Zeroizing<[u8; 32]>,
    cipher: &'static str,
}

/// A fresh x25519 static keypair from 32 bytes of fresh entropy:
/// `{privateKey, publicKey}`, 32-byte `Uint8Array`s.
#[wasm_bindgen(js_name = noiseKeypair)]
pub fn noise_keypair(entropy: JsValue) -> Result<Object, JsValue> {
    let entropy = bytes::<32>(&entropy, "entropy")?;
    let kp = StaticKeypair::from_entropy(&entropy)
        .map_err(|e| js_error(Code::Internal, e.to_string()))?;
    Ok(object(&[
        ("privateKey", Uint8Array::from(&kp.private.as_bytes()[..]).into()),
        ("publicKey", Uint8Array::from(&kp.public.0[..]).into()),
    ]))
}

#[wasm_bindgen]
impl NoiseLinks {
    /// Authenticates a link to every other party of `session` (16 bytes) over `link`:
    /// `me` of `parties`, this party's `privateKey` (32 bytes), every party's `publicKeys`
    /// (an array of 32-byte `Uint8Array`s, indexed by party, this party's own included) and
    /// 32 bytes of fresh `entropy`. Rejects if a peer fails authentication or the link fails.
    pub fn establish(
        me: JsValue,
        parties: JsValue,
        session: JsValue,
        private_key: JsValue,
        public_keys: JsValue,
        entropy: JsValue,
        link: RawByteLink,
    ) -> Result<Promise, JsValue> {
        let n = index(&parties, "parties", 255)?;
        if n < 2 {
            return Err(js_error(Code::InvalidArgument, "parties must be at least 2"));
        }
        let me = PartyId(index(&me, "party id", n as u64 - 1)? as u8);
        let session = SessionId(bytes::<16>(&session, "session id")?);
        let private = PrivateKey::from_bytes(bytes::<32>(&private_key, "privateKey")?);
        let Some(keys) = public_keys.dyn_ref::<Array>() else {
            return Err(js_error(Code::InvalidArgument, "publicKeys must be an array"));
        };
        if keys.length() as usize != n {
            return Err(js_error(
                Code::LengthMismatch,
                format!("{} public keys for {n} parties", keys.length()),
            ));
        }
        let public_keys = (0..n)
            .map(|i| bytes::<32>(&keys.get(i as u32), &format!("publicKeys[{i}]")).map(PublicKey))
            .collect::<Result<Vec<_>, _>>()?;
        let keypair = StaticKeypair { private, public: public_keys[me.index()] };
        let entropy = Seed::from_bytes(bytes::<32>(&entropy, "entropy")?);
        let security = Security::Noise { keypair, public_keys };
        Ok(future_to_promise(async move {
            let peers = establish(me, n, session, &security, &entropy, &link).await?;
            Ok(Self { me, state: Rc::new(State { raw: link, peers }) }.into())
        }))
    }

    /// The pairwise PRG seed shared with `peer` (32 bytes; secret), from the Noise handshake's
    /// split keys.
    #[wasm_bindgen(js_name = seedWith)]
    pub fn seed_with(&self, peer: JsValue) -> Result<Uint8Array, JsValue> {
        let p = self.peer(&peer)?;
        Ok(Uint8Array::from(&p.borrow().seed[..]))
    }

    /// The AEAD of the link with `peer`'s records, as both ends agreed: `"chacha20-poly1305"`
    /// from WebAssembly (no AES instructions here), `"aes-256-gcm"` between native ends.
    #[wasm_bindgen(js_name = cipherWith)]
    pub fn cipher_with(&self, peer: JsValue) -> Result<String, JsValue> {
        Ok(self.peer(&peer)?.borrow().cipher.to_string())
    }

    /// Encrypts `frame` for `to` and queues it on the byte link (never waits).
    pub fn send(&self, to: JsValue, frame: Uint8Array) -> Result<(), JsValue> {
        let to_id = index(&to, "to", 254)? as u32;
        let mut p = self.peer(&to)?.borrow_mut();
        let frame = frame.to_vec();
        let mut out = Vec::new();
        let mut off = None;
        p.enc
            .encode(&frame, &mut off, &mut out, usize::MAX)
            .map_err(|e| js_error(Code::Transport, format!("sealing a frame for P{to_id}: {e}")))?;
        drop(p);
        for chunk in out.chunks(CHUNK) {
            self.state.raw.send_bytes(to_id, Uint8Array::from(chunk))?;
        }
        Ok(())
    }

    /// The next frame from `from`, decrypted and checked.
    pub fn recv(&self, from: JsValue) -> Result<Promise, JsValue> {
        self.peer(&from)?;
        let from = index(&from, "from", 254)?;
        let state = self.state.clone();
        Ok(future_to_promise(async move {
            let frame = recv_frame(&state, from).await?;
            Ok(Uint8Array::from(&frame[..]).into())
        }))
    }
}

impl NoiseLinks {
    fn peer(&self, v: &JsValue) -> Result<&RefCell<Peer>, JsValue> {
        let i = index(v, "peer", 254)?;
        match self.state.peers.get(i).and_then(Option::as_ref) {
            Some(p) => Ok(p),
            None => {
                Err(js_error(Code::InvalidArgument, format!("{} has no link to P{i}", self.me)))
            }
        }
    }
}

async fn recv_frame(state: &State, from: usize) -> Result<Vec<u8>, JsValue> {
    let cell = state
        .peers
        .get(from)
        .and_then(Option::as_ref)
        .ok_or_else(|| js_error(Code::InvalidArgument, format!("no link to P{from}")))?;
    loop {
        // No borrow is held across the await below.
        let polled = cell.borrow_mut().dec.poll_frame();
        match polled {
            Ok(Some(frame)) => return Ok(frame),
            Ok(None) => {}
            Err(e) => return Err(js_error(Code::Transport, format!("from P{from}: {e}"))),
        }
        let chunk = recv_bytes(&state.raw, from).await?;
        cell.borrow_mut().dec.input(chunk.len()).extend_from_slice(&chunk);
    }
}

async fn recv_bytes(raw: &RawByteLink, from: usize) -> Result<Vec<u8>, JsValue> {
    let pending = raw.recv_bytes(from as u32)?;
    let v = JsFuture::from(Promise::resolve(&pending)).await?;
    match v.dyn_into::<Uint8Array>() {
        Ok(a) => Ok(a.to_vec()),
        Err(_) => Err(js_error(
            Code::Transport,
            format!("byte link recv({from}) did not give a Uint8Array"),
        )),
    }
}

async fn establish(
    me: PartyId,
    n: usize,
    session: SessionId,
    security: &Security,
    entropy: &Seed,
    raw: &RawByteLink,
) -> Result<Vec<Option<RefCell<Peer>>>, JsValue> {
    let ends = LinkEnds { me, session, security };
    let fail = |e: ringfence_link::LinkError| js_error(Code::PeerMisbehaved, e.to_string());
    let key = |j: usize| {
        let mut k = Zeroizing::new([0u8; 32]);
        Prg::new(entropy, ENTROPY_DOMAIN, j as u32).fill_bytes(&mut *k);
        k
    };
    let send = |j: usize, h: &mut Handshake| -> Result<(), JsValue> {
        let out = h.take_output();
        if !out.is_empty() {
            raw.send_bytes(j as u32, Uint8Array::from(&out[..]))?;
        }
        Ok(())
    };
    let mut hs: Vec<Option<Handshake>> = (0..n).map(|_| None).collect();
    let mut leftover: Vec<Vec<u8>> = vec![Vec::new(); n];
    // 1. Hellos to the parties above.
    for (j, slot) in hs.iter_mut().enumerate().skip(me.index() + 1) {
        let mut h = Handshake::dial(ends, PartyId(j as u8), &key(j)).map_err(fail)?;
        send(j, &mut h)?;
        *slot = Some(h);
    }
    // 2. Answers to the parties below, 3. then the answers from above.
    for j in (0..me.index()).chain(me.index() + 1..n) {
        let mut h = match hs[j].take() {
            Some(h) => h,
            None => Handshake::accept(ends, &key(j)).map_err(fail)?,
        };
        while !h.is_done() {
            let chunk = recv_bytes(raw, j).await?;
            let used = h.handle_input(&chunk).map_err(fail)?;
            leftover[j].extend_from_slice(&chunk[used..]);
            send(j, &mut h)?;
        }
        if h.peer() != Some(PartyId(j as u8)) {
            return Err(js_error(
                Code::PeerMisbehaved,
                format!("P{j}'s link carries another party's hello"),
            ));
        }
        hs[j] = Some(h);
    }
    let max_frame = MAX_PAYLOAD + HEADER_LEN;
    let mut peers = Vec::with_capacity(n);
    for (h, rest) in hs.into_iter().zip(leftover) {
        let Some(h) = h else {
            peers.push(None);
            continue;
        };
        let l = h.finish().map_err(fail)?;
        let mut dec = FrameDecoder::new(l.recv, max_frame);
        dec.input(rest.len()).extend_from_slice(&rest);
        peers.push(Some(RefCell::new(Peer {
            enc: FrameEncoder::new(l.send),
            dec,
            seed: l.seed_bytes,
            cipher: l.aead.map_or("plain", |a| a.name()),
        })));
    }
    Ok(peers)
}
