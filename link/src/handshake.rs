//! Link establishment as a sans-IO state machine: the dialer's hello, then a Noise `KK`
//! handshake (or, insecurely, a nonce exchange), ending with the link's record ciphers and
//! pairwise seed. The native runtime drives it over TCP or a relay stream; the WebAssembly
//! bindings drive it over a JS relay connection. The bytes are the same everywhere.
//!
//! ```text
//! dialer → acceptor   hello = "RFNC2" ‖ mode ‖ dialer id ‖ acceptor id ‖ session (24 bytes)
//! Noise KK            → e, es, ss, [aead]   ← e, ee, se, [aead]   (messages: u16 BE length ‖ body)
//! key confirmation    → confirm (32)
//! plain (insecure)    → nonce_d (32)   ← nonce_a (32)
//! ```
//!
//! Each Noise message carries its sender's record preference as a one-byte payload (0 AES-GCM,
//! 1 ChaCha20-Poly1305, see [`Aead::preferred`]), encrypted and bound into the handshake hash.
//! The records use ChaCha20-Poly1305 when either end prefers it (a WebAssembly end has no AES
//! instructions: its software AES is several times slower), AES-256-GCM otherwise (native ↔
//! native links keep AES-NI); both keyed by the Noise split.
//!
//! The hello is bound into the Noise prologue, and the acceptor takes the static key it expects
//! from the id the dialer claims: a dialer that lies about its id, holds another key, or talks to
//! a different session fails the handshake.
//!
//! The pairwise seed is `HKDF-SHA256(ikm = k₁ ‖ k₂, salt = none, info = "ringfence pairwise
//! seed v2" ‖ h)`, equal at both ends: k₁, k₂ are the Noise split keys (initiator → responder
//! first) and h the handshake hash. The split keys come out of the DH secrets, so only the two
//! ends know the seed; h binds it to this transcript. Link v1 hashed h alone, but h absorbs
//! only public data (the hello, static and ephemeral public keys, handshake ciphertexts): the
//! relay could recompute every v1 seed. A v1 hello ("RFNC1") is therefore refused.
//!
//! Key confirmation: in `KK` the responder has its keys after writing message 2, but nothing yet
//! proves that the dialer is live: message 1 carries no freshness from the responder, so a
//! message 1 recorded from an earlier link of the same session (the servers' mesh reuses one
//! session id every epoch) replays verbatim and the responder would answer it. The dialer
//! therefore ends the handshake with `confirm = HKDF-SHA256(ikm = k₁ ‖ k₂, salt = none, info =
//! "ringfence key confirmation v2" ‖ h)`, which takes the ephemeral secret of message 1 to
//! compute, and the acceptor is done only once it has checked it: a replayed message 1 never
//! becomes a link. (The dialer needs no such proof: message 2 depends on its fresh ephemeral
//! key.) The insecure plain mode has no keys to confirm and skips it.
//!
//! Driving it: send [`Handshake::take_output`], feed received bytes to
//! [`Handshake::handle_input`] (it consumes only what the handshake needs, so bytes that follow
//! it belong to the record layer), repeat until [`Handshake::is_done`], then
//! [`Handshake::finish`].
//!
//! ```
//! use ringfence_core::net::{PartyId, SessionId};
//! use ringfence_link::{Handshake, LinkEnds, Security, StaticKeypair};
//! let keys = [StaticKeypair::from_entropy(&[1; 32])?, StaticKeypair::from_entropy(&[2; 32])?];
//! let sec = |i: usize| Security::Noise {
//!     keypair: keys[i].clone(),
//!     public_keys: keys.iter().map(|k| k.public).collect(),
//! };
//! let (s0, s1) = (sec(0), sec(1));
//! let ends = |me: u8, security| LinkEnds { me: PartyId(me), session: SessionId([3; 16]), security };
//! let mut d = Handshake::dial(ends(0, &s0), PartyId(1), &[5; 32])?;
//! let mut a = Handshake::accept(ends(1, &s1), &[6; 32])?;
//! while !(d.is_done() && a.is_done()) {
//!     let to_a = d.take_output();
//!     a.handle_input(&to_a)?;
//!     let to_d = a.take_output();
//!     d.handle_input(&to_d)?;
//! }
//! let (d, a) = (d.finish()?, a.finish()?);
//! assert_eq!(d.seed, a.seed);
//! assert_eq!(a.peer, PartyId(0));
//! # Ok::<(), ringfence_link::LinkError>(())
//! ```

use ringfence_core::net::{PartyId, SessionId};
use ringfence_core::prg::Seed;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::keys::PublicKey;
use crate::record::{Aead, Cipher, RecordKey};
use crate::rng::builder;
use crate::{LinkError, Security};

/// The hello's magic: "RFNC" and the link version.
const MAGIC: &[u8; 5] = b"RFNC2";
/// Link v1's magic, recognised only to refuse it with a reason.
const MAGIC_V1: &[u8; 5] = b"RFNC1";
/// HKDF info label of the pairwise seed. It separates the seed from the record keys: the
/// records use the split keys directly, the seed is a labelled HKDF output whose extract step
/// only hashes them (so no key serves two primitives).
const SEED_LABEL: &[u8] = b"ringfence pairwise seed v2";
/// HKDF info label of the dialer's key confirmation: another output of the same extract as the
/// seed, independent of it, so sending it in the clear reveals nothing about the seed.
const CONFIRM_LABEL: &[u8] = b"ringfence key confirmation v2";
/// Bytes of the key confirmation.
const CONFIRM_LEN: usize = 32;
/// Bytes of the dialer's hello.
pub const HELLO_LEN: usize = MAGIC.len() + 3 + 16;
/// Handshake messages of `KK` with our one-byte payloads are 49 bytes; anything far larger is
/// garbage.
const MAX_HANDSHAKE_MSG: usize = 1024;
const NONCE_LEN: usize = 32;

/// Who runs a handshake: this party's id and security, and the session bound into it.
#[derive(Clone, Copy, Debug)]
pub struct LinkEnds<'a> {
    /// This party.
    pub me: PartyId,
    /// The session bound into the handshake.
    pub session: SessionId,
    /// How the link is protected.
    pub security: &'a Security,
}

/// An authenticated link, ready for the record layer.
pub struct Established {
    /// The party at the other end.
    pub peer: PartyId,
    /// Seals records toward the peer.
    pub send: Cipher,
    /// Opens records from the peer.
    pub recv: Cipher,
    /// The pairwise PRG seed, equal at both ends.
    pub seed: Seed,
    /// The same seed as bytes, for APIs that take seeds as bytes (the SDK's `PartySeeds`).
    /// Secret: never log it. Zeroized on drop, as are `seed` and the `Noise` record keys of
    /// ChaCha20-Poly1305 (RustCrypto zeroizes its key); ring's AES-GCM keys are not (ring
    /// does not zeroize).
    pub seed_bytes: Zeroizing<[u8; 32]>,
    /// The Noise handshake hash `h` (`None` for insecure plain links). Public: anyone who saw
    /// the handshake bytes and knows both static public keys can compute it, so it must never
    /// key anything by itself; exposed for channel binding and for tests of that very fact.
    pub handshake_hash: Option<[u8; 32]>,
    /// Bytes this end produced during the handshake.
    pub bytes_sent: u64,
    /// The records' AEAD, as both ends agreed (`None` for insecure plain links).
    pub aead: Option<Aead>,
}

/// What the machine waits for next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Hello,
    Len,
    Msg(usize),
    /// The responder waits for the dialer's key confirmation.
    Confirm,
    Nonce,
    Done,
}

/// One end of a link handshake (see the module docs).
pub struct Handshake {
    me: PartyId,
    session: SessionId,
    security: Security,
    initiator: bool,
    peer: Option<PartyId>,
    step: Step,
    buf: Vec<u8>,
    out: Vec<u8>,
    sent: u64,
    noise: Option<(snow::HandshakeState, PublicKey)>,
    prologue: Vec<u8>,
    entropy: Zeroizing<[u8; 32]>,
    /// Plain mode: (dialer nonce, acceptor nonce) once known.
    nonces: ([u8; NONCE_LEN], [u8; NONCE_LEN]),
    /// This end's record preference, and the peer's once its Noise message is read.
    aead: (Aead, Option<Aead>),
}

impl core::fmt::Debug for Handshake {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Handshake")
            .field("me", &self.me)
            .field("peer", &self.peer)
            .field("initiator", &self.initiator)
            .finish_non_exhaustive()
    }
}

impl Handshake {
    /// The dialer's side toward `peer`; its first output (hello and message 1) is ready at
    /// once. `entropy` (32 fresh random bytes) keys the ephemeral key or the nonce.
    pub fn dial(ends: LinkEnds<'_>, peer: PartyId, entropy: &[u8; 32]) -> Result<Self, LinkError> {
        Self::dial_preferring(ends, peer, entropy, Aead::preferred())
    }

    fn dial_preferring(
        ends: LinkEnds<'_>,
        peer: PartyId,
        entropy: &[u8; 32],
        aead: Aead,
    ) -> Result<Self, LinkError> {
        let mut h = Self::new(ends, true, entropy, aead)?;
        let hello = hello(ends.security.mode_byte(), ends.me, peer, ends.session);
        h.peer = Some(peer);
        h.prologue = prologue(&hello);
        h.out.extend_from_slice(&hello);
        match ends.security {
            Security::Noise { keypair, public_keys } => {
                let expected = public_keys[peer.index()];
                let mut hs = noise_state(keypair, &expected, &h.prologue, true, entropy)?;
                write_msg(&mut h.out, |buf| hs.write_message(&[aead.to_byte()], buf))
                    .map_err(|e| LinkError::handshake(peer, format!("writing message 1: {e}")))?;
                h.noise = Some((hs, expected));
                h.step = Step::Len;
            }
            _ => {
                h.nonces.0 = *entropy;
                h.out.extend_from_slice(entropy);
                h.step = Step::Nonce;
            }
        }
        h.sent = h.out.len() as u64;
        Ok(h)
    }

    /// The acceptor's side; the peer is whoever the hello names, provided the handshake
    /// proves it.
    pub fn accept(ends: LinkEnds<'_>, entropy: &[u8; 32]) -> Result<Self, LinkError> {
        Self::new(ends, false, entropy, Aead::preferred())
    }

    fn new(
        ends: LinkEnds<'_>,
        initiator: bool,
        entropy: &[u8; 32],
        aead: Aead,
    ) -> Result<Self, LinkError> {
        if let Security::DangerInsecureTestSeeds { .. } = ends.security {
            return Err(LinkError::Config(
                "DangerInsecureTestSeeds links have no handshake (relay only)".into(),
            ));
        }
        Ok(Self {
            me: ends.me,
            session: ends.session,
            security: ends.security.clone(),
            initiator,
            peer: None,
            step: Step::Hello,
            buf: Vec::new(),
            out: Vec::new(),
            sent: 0,
            noise: None,
            prologue: Vec::new(),
            entropy: Zeroizing::new(*entropy),
            nonces: ([0; NONCE_LEN], [0; NONCE_LEN]),
            aead: (aead, None),
        })
    }

    /// The peer: known at once when dialling, after the hello when accepting.
    pub fn peer(&self) -> Option<PartyId> {
        self.peer
    }

    /// Whether the handshake is complete (take its last output, then [`finish`](Self::finish)):
    /// for a Noise acceptor, only once the dialer has confirmed the keys (see the module docs).
    pub fn is_done(&self) -> bool {
        self.step == Step::Done
    }

    /// Bytes needed before the handshake can make progress (0 when done).
    pub fn wants(&self) -> usize {
        let need = match self.step {
            Step::Hello => HELLO_LEN,
            Step::Len => 2,
            Step::Msg(n) => n,
            Step::Confirm => CONFIRM_LEN,
            Step::Nonce => NONCE_LEN,
            Step::Done => return 0,
        };
        need - self.buf.len()
    }

    /// Bytes to send to the peer now (possibly none).
    pub fn take_output(&mut self) -> Vec<u8> {
        core::mem::take(&mut self.out)
    }

    /// Consumes bytes received from the peer, at most what the handshake needs; returns how
    /// many were consumed. Malformed or unauthenticated input is an error.
    pub fn handle_input(&mut self, mut data: &[u8]) -> Result<usize, LinkError> {
        let total = data.len();
        while !data.is_empty() && self.step != Step::Done {
            let take = self.wants().min(data.len());
            self.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.wants() == 0 {
                let item = core::mem::take(&mut self.buf);
                self.process(&item)?;
            }
        }
        Ok(total - data.len())
    }

    fn fail(&self, reason: impl Into<String>) -> LinkError {
        LinkError::handshake(self.peer.unwrap_or(PartyId(u8::MAX)), reason)
    }

    fn process(&mut self, item: &[u8]) -> Result<(), LinkError> {
        match self.step {
            Step::Hello => {
                if item[..MAGIC_V1.len()] == *MAGIC_V1 {
                    // Before the other checks: the peer's id is all that is known of it.
                    return Err(LinkError::handshake(
                        PartyId(item[6]),
                        "the peer speaks ringfence link v1, whose pairwise seeds are derivable \
                         from public data (the relay could recompute them); upgrade it to link v2",
                    ));
                }
                let peer = self.check_hello(item).map_err(|r| self.fail(r))?;
                self.peer = Some(peer);
                self.prologue = prologue_of(item);
                self.step = match &self.security {
                    Security::Noise { keypair, public_keys } => {
                        let expected = public_keys[peer.index()];
                        let hs =
                            noise_state(keypair, &expected, &self.prologue, false, &self.entropy)?;
                        self.noise = Some((hs, expected));
                        Step::Len
                    }
                    _ => Step::Nonce,
                };
            }
            Step::Len => {
                let len = usize::from(u16::from_be_bytes([item[0], item[1]]));
                if len == 0 || len > MAX_HANDSHAKE_MSG {
                    return Err(self.fail(format!("handshake message of {len} bytes")));
                }
                self.step = Step::Msg(len);
            }
            Step::Msg(_) => self.noise_message(item)?,
            Step::Confirm => self.check_confirmation(item)?,
            Step::Nonce => {
                let theirs: [u8; NONCE_LEN] = item.try_into().map_err(|_| self.fail("nonce"))?;
                if self.initiator {
                    self.nonces.1 = theirs;
                } else {
                    self.nonces = (theirs, *self.entropy);
                    self.out.extend_from_slice(&self.entropy[..]);
                    self.sent += NONCE_LEN as u64;
                }
                self.step = Step::Done;
            }
            Step::Done => {}
        }
        Ok(())
    }

    fn noise_message(&mut self, msg: &[u8]) -> Result<(), LinkError> {
        let peer = self.peer.unwrap_or(PartyId(u8::MAX));
        let Some((hs, _)) = self.noise.as_mut() else {
            return Err(self.fail("no Noise state"));
        };
        let which = if self.initiator { "message 2" } else { "message 1" };
        let mut payload = [0u8; MAX_HANDSHAKE_MSG];
        let n = hs.read_message(msg, &mut payload).map_err(|e| {
            LinkError::handshake(
                peer,
                format!("{which} rejected ({e}): the peer does not hold {peer}'s key"),
            )
        })?;
        let theirs = match payload[..n] {
            [b] => Aead::from_byte(b),
            _ => None,
        };
        let Some(theirs) = theirs else {
            return Err(LinkError::handshake(
                peer,
                format!(
                    "{which} names no known record cipher ({n}-byte payload): a ringfence link \
                     of another version?"
                ),
            ));
        };
        self.aead.1 = Some(theirs);
        let before = self.out.len();
        if self.initiator {
            let confirm = Keys::of(hs)?.derive(CONFIRM_LABEL)?;
            self.out.extend_from_slice(&*confirm);
            self.step = Step::Done;
        } else {
            let mine = self.aead.0.to_byte();
            write_msg(&mut self.out, |buf| hs.write_message(&[mine], buf))
                .map_err(|e| LinkError::handshake(peer, format!("writing message 2: {e}")))?;
            self.step = Step::Confirm;
        }
        self.sent += (self.out.len() - before) as u64;
        Ok(())
    }

    /// Checks the dialer's key confirmation (see the module docs).
    fn check_confirmation(&mut self, theirs: &[u8]) -> Result<(), LinkError> {
        let Some((hs, _)) = self.noise.as_mut() else {
            return Err(self.fail("no Noise state"));
        };
        let expected = Keys::of(hs)?.derive(CONFIRM_LABEL)?;
        if !bool::from(expected[..].ct_eq(theirs)) {
            return Err(self.fail(
                "key confirmation failed: the dialer does not hold this handshake's keys (a \
                 replayed message 1?)",
            ));
        }
        self.step = Step::Done;
        Ok(())
    }

    /// Validates a hello received by this party and returns the dialer's claimed id.
    fn check_hello(&self, h: &[u8]) -> Result<PartyId, String> {
        if &h[..5] != MAGIC {
            return Err("not a ringfence link (bad magic)".into());
        }
        if h[5] != self.security.mode_byte() {
            return Err(format!("link mode {} but this party runs {}", h[5], self.security.name()));
        }
        let (dialer, acceptor) = (PartyId(h[6]), PartyId(h[7]));
        if acceptor != self.me {
            return Err(format!("hello addressed to {acceptor}, this is {}", self.me));
        }
        if dialer >= self.me {
            return Err(format!("{dialer} may not dial {} (lower ids dial higher ones)", self.me));
        }
        if h[8..] != self.session.0 {
            return Err(format!("{dialer} is in another session"));
        }
        Ok(dialer)
    }

    /// The established link, once [`is_done`](Self::is_done).
    pub fn finish(self) -> Result<Established, LinkError> {
        let peer = self.peer.unwrap_or(PartyId(u8::MAX));
        if self.step != Step::Done {
            return Err(LinkError::handshake(peer, "handshake incomplete"));
        }
        let bytes_sent = self.sent;
        let Some((mut hs, expected)) = self.noise else {
            let mut h = Sha256::new();
            h.update(b"ringfence INSECURE plain pairwise seed v1");
            h.update(&self.prologue);
            h.update(self.nonces.0);
            h.update(self.nonces.1);
            let seed_bytes = Zeroizing::new(h.finalize().into());
            let seed = Seed::from_bytes(*seed_bytes);
            let (send, recv) = (Cipher::DangerPlain, Cipher::DangerPlain);
            return Ok(Established {
                peer,
                send,
                recv,
                seed,
                seed_bytes,
                handshake_hash: None,
                bytes_sent,
                aead: None,
            });
        };
        if hs.get_remote_static() != Some(&expected.0[..]) {
            return Err(LinkError::handshake(peer, "remote static key is not the expected one"));
        }
        if !hs.is_handshake_finished() {
            return Err(LinkError::handshake(peer, "Noise handshake incomplete"));
        }
        let keys = Keys::of(&mut hs)?;
        let seed_bytes = keys.derive(SEED_LABEL)?;
        let seed = Seed::from_bytes(*seed_bytes);
        let (send, recv) = if hs.is_initiator() {
            (&keys.to_responder, &keys.to_initiator)
        } else {
            (&keys.to_initiator, &keys.to_responder)
        };
        let (mine, theirs) = self.aead;
        let theirs = theirs.ok_or_else(|| LinkError::handshake(peer, "handshake incomplete"))?;
        let aead = Aead::agree(mine, theirs);
        let key = |k: &[u8; 32]| {
            RecordKey::new(aead, k).map_err(|e| LinkError::handshake(peer, e.to_string()))
        };
        Ok(Established {
            peer,
            send: Cipher::Noise { key: key(send)?, nonce: 0 },
            recv: Cipher::Noise { key: key(recv)?, nonce: 0 },
            seed,
            seed_bytes,
            handshake_hash: Some(keys.hash),
            bytes_sent,
            aead: Some(aead),
        })
    }
}

/// What a finished Noise handshake yields: its split keys and hash.
struct Keys {
    /// The split's first key, which protects initiator → responder (Noise §5.2), as in snow's
    /// transport state; the records then are exactly its transport messages.
    to_responder: [u8; 32],
    to_initiator: [u8; 32],
    /// The handshake hash `h`.
    hash: [u8; 32],
}

impl Drop for Keys {
    fn drop(&mut self) {
        self.to_responder.zeroize();
        self.to_initiator.zeroize();
    }
}

impl ZeroizeOnDrop for Keys {}

impl Keys {
    /// The keys of `hs`, once its last message is written or read.
    fn of(hs: &mut snow::HandshakeState) -> Result<Self, LinkError> {
        let hash = hs
            .get_handshake_hash()
            .try_into()
            .map_err(|_| LinkError::Crypto("the handshake hash is not 32 bytes".into()))?;
        let (to_responder, to_initiator) = hs.dangerously_get_raw_split();
        Ok(Self { to_responder, to_initiator, hash })
    }

    /// `HKDF-SHA256(ikm = k₁ ‖ k₂, info = label ‖ h)` (see the module docs): keyed by the split
    /// keys, in the same order at both ends, which only the two ends can compute; the handshake
    /// hash binds it to this transcript and the label to its one use.
    fn derive(&self, label: &[u8]) -> Result<Zeroizing<[u8; 32]>, LinkError> {
        let mut ikm = Zeroizing::new([0u8; 64]);
        ikm[..32].copy_from_slice(&self.to_responder);
        ikm[32..].copy_from_slice(&self.to_initiator);
        let mut info = label.to_vec();
        info.extend_from_slice(&self.hash);
        let mut out = Zeroizing::new([0u8; 32]);
        hkdf::Hkdf::<Sha256>::new(None, &*ikm)
            .expand(&info, &mut *out)
            .map_err(|e| LinkError::Crypto(format!("HKDF: {e}")))?;
        Ok(out)
    }
}

/// The Noise KK state for one side of a link: our static key, the peer's expected key, and the
/// hello bound in as prologue.
fn noise_state(
    keypair: &crate::StaticKeypair,
    expected: &PublicKey,
    prologue: &[u8],
    initiator: bool,
    entropy: &[u8; 32],
) -> Result<snow::HandshakeState, LinkError> {
    let b = builder(entropy)?
        .local_private_key(keypair.private.as_bytes())
        .and_then(|b| b.remote_public_key(&expected.0))
        .and_then(|b| b.prologue(prologue));
    b.and_then(|b| if initiator { b.build_initiator() } else { b.build_responder() })
        .map_err(|e| LinkError::Crypto(format!("Noise setup: {e}")))
}

fn hello(mode: u8, dialer: PartyId, acceptor: PartyId, session: SessionId) -> [u8; HELLO_LEN] {
    let mut h = [0u8; HELLO_LEN];
    h[..5].copy_from_slice(MAGIC);
    h[5] = mode;
    h[6] = dialer.0;
    h[7] = acceptor.0;
    h[8..].copy_from_slice(&session.0);
    h
}

fn prologue(hello: &[u8; HELLO_LEN]) -> Vec<u8> {
    prologue_of(hello)
}

fn prologue_of(hello: &[u8]) -> Vec<u8> {
    let mut p = b"ringfence link v2".to_vec();
    p.extend_from_slice(hello);
    p
}

/// Appends one handshake message (u16 BE length ‖ body) produced by `write`.
fn write_msg(
    out: &mut Vec<u8>,
    write: impl FnOnce(&mut [u8]) -> Result<usize, snow::Error>,
) -> Result<(), snow::Error> {
    let mut buf = [0u8; MAX_HANDSHAKE_MSG];
    let n = write(&mut buf)?;
    // n ≤ MAX_HANDSHAKE_MSG < 2^16.
    out.extend_from_slice(&(n as u16).to_be_bytes());
    out.extend_from_slice(&buf[..n]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{FrameDecoder, FrameEncoder, RecordError};
    use crate::StaticKeypair;

    fn keys() -> [StaticKeypair; 2] {
        [1, 2].map(|b| StaticKeypair::from_entropy(&[b; 32]).unwrap())
    }

    fn security(keys: &[StaticKeypair], i: usize) -> Security {
        Security::Noise {
            keypair: keys[i].clone(),
            public_keys: keys.iter().map(|k| k.public).collect(),
        }
    }

    /// Runs a P0 → P1 handshake with the given record preferences.
    fn link(dialer: Aead, acceptor: Aead) -> (Established, Established) {
        let keys = keys();
        let (s0, s1) = (security(&keys, 0), security(&keys, 1));
        let session = SessionId([9; 16]);
        let ends = |me: u8, security| LinkEnds { me: PartyId(me), session, security };
        let mut d = Handshake::dial_preferring(ends(0, &s0), PartyId(1), &[5; 32], dialer).unwrap();
        let mut a = Handshake::new(ends(1, &s1), false, &[6; 32], acceptor).unwrap();
        while !(d.is_done() && a.is_done()) {
            a.handle_input(&d.take_output()).unwrap();
            d.handle_input(&a.take_output()).unwrap();
        }
        (d.finish().unwrap(), a.finish().unwrap())
    }

    /// Two frames sealed by `from` open at `to`, and the plaintext is not on the wire.
    fn check_records(from: Cipher, to: Cipher) {
        let frame: Vec<u8> = (0..100_000u32).map(|i| (i * 31) as u8).collect();
        let mut enc = FrameEncoder::new(from);
        let mut wire = Vec::new();
        for f in [&frame[..], &frame[..10]] {
            assert!(enc.encode(f, &mut None, &mut wire, usize::MAX).unwrap());
        }
        assert!(!wire.windows(64).any(|w| w == &frame[1000..1064]));
        let mut dec = FrameDecoder::new(to, 1 << 20);
        dec.input(wire.len()).extend_from_slice(&wire);
        assert_eq!(dec.poll_frame().unwrap().unwrap(), frame);
        assert_eq!(dec.poll_frame().unwrap().unwrap(), &frame[..10]);
    }

    #[test]
    fn records_use_chacha_when_either_end_prefers_it() {
        use Aead::{AesGcm, ChaChaPoly};
        for (dialer, acceptor, want) in [
            (AesGcm, AesGcm, AesGcm),
            (ChaChaPoly, AesGcm, ChaChaPoly),
            (AesGcm, ChaChaPoly, ChaChaPoly),
            (ChaChaPoly, ChaChaPoly, ChaChaPoly),
        ] {
            let (d, a) = link(dialer, acceptor);
            assert_eq!((d.aead, a.aead), (Some(want), Some(want)), "{dialer:?} → {acceptor:?}");
            assert_eq!(d.seed_bytes, a.seed_bytes);
            check_records(d.send, a.recv);
            check_records(a.send, d.recv);
        }
    }

    #[test]
    fn a_tampered_chacha_record_is_refused() {
        let (d, a) = link(Aead::ChaChaPoly, Aead::AesGcm);
        let mut enc = FrameEncoder::new(d.send);
        let mut wire = Vec::new();
        assert!(enc.encode(b"a frame of shares", &mut None, &mut wire, usize::MAX).unwrap());
        let last = wire.len() - 1;
        wire[last] ^= 0x80;
        let mut dec = FrameDecoder::new(a.recv, 1 << 20);
        dec.input(wire.len()).extend_from_slice(&wire);
        assert_eq!(dec.poll_frame(), Err(RecordError::Decrypt));
    }

    #[test]
    fn an_unknown_record_preference_fails_the_handshake() {
        let keys = keys();
        let (s0, s1) = (security(&keys, 0), security(&keys, 1));
        let session = SessionId([9; 16]);
        // A dialer whose message 1 carries a payload byte no version knows.
        let hello = hello(s0.mode_byte(), PartyId(0), PartyId(1), session);
        let mut hs =
            noise_state(&keys[0], &keys[1].public, &prologue(&hello), true, &[5; 32]).unwrap();
        let mut wire = hello.to_vec();
        write_msg(&mut wire, |buf| hs.write_message(&[7], buf)).unwrap();
        let ends = LinkEnds { me: PartyId(1), session, security: &s1 };
        let mut a = Handshake::accept(ends, &[6; 32]).unwrap();
        let e = a.handle_input(&wire).unwrap_err();
        assert!(e.to_string().contains("no known record cipher"), "{e}");
    }

    #[test]
    fn a_replayed_message_1_and_confirmation_never_complete_the_acceptor() {
        let keys = keys();
        let (s0, s1) = (security(&keys, 0), security(&keys, 1));
        let session = SessionId([9; 16]);
        let ends = |me: u8, security| LinkEnds { me: PartyId(me), session, security };
        // A genuine link, with every byte the dialer sent captured.
        let mut d = Handshake::dial(ends(0, &s0), PartyId(1), &[5; 32]).unwrap();
        let mut a = Handshake::accept(ends(1, &s1), &[6; 32]).unwrap();
        let first = d.take_output();
        a.handle_input(&first).unwrap();
        assert!(!a.is_done(), "message 1 alone does not finish the acceptor");
        assert!(matches!(a.finish(), Err(LinkError::Handshake { .. })));
        let mut a = Handshake::accept(ends(1, &s1), &[6; 32]).unwrap();
        a.handle_input(&first).unwrap();
        d.handle_input(&a.take_output()).unwrap();
        assert!(d.is_done());
        let confirm = d.take_output();
        assert_eq!(confirm.len(), CONFIRM_LEN);
        assert_eq!(a.handle_input(&confirm).unwrap(), CONFIRM_LEN);
        assert!(a.is_done());
        let (d, a) = (d.finish().unwrap(), a.finish().unwrap());
        assert_eq!(d.seed_bytes, a.seed_bytes);
        assert_eq!(d.bytes_sent, (first.len() + CONFIRM_LEN) as u64);
        // A later acceptor of the same session answers the replayed message 1 (it cannot tell),
        // but neither the captured confirmation nor any other completes it: its fresh ephemeral
        // key changed the keys, which the replayer does not hold.
        let mut later = Handshake::accept(ends(1, &s1), &[7; 32]).unwrap();
        assert_eq!(later.handle_input(&first).unwrap(), first.len());
        assert!(!later.take_output().is_empty(), "message 2 goes out");
        assert!(!later.is_done());
        assert_eq!(later.wants(), CONFIRM_LEN);
        let e = later.handle_input(&confirm).unwrap_err();
        assert!(e.to_string().contains("key confirmation failed"), "{e}");
        assert!(!later.is_done());
        assert!(later.finish().is_err());
    }

    /// Checked by the compiler: every secret a handshake holds or hands out zeroizes itself on
    /// drop (the record keys: see [`RecordKey`]).
    #[test]
    fn secrets_zeroize_on_drop() {
        fn zeroizes<T: ZeroizeOnDrop>(_: &T) {}
        let keys = keys();
        zeroizes(&keys[0]);
        zeroizes(&keys[0].private);
        let s0 = security(&keys, 0);
        let ends = LinkEnds { me: PartyId(0), session: SessionId([9; 16]), security: &s0 };
        zeroizes(&Handshake::dial(ends, PartyId(1), &[5; 32]).unwrap().entropy);
        let (d, _) = link(Aead::ChaChaPoly, Aead::ChaChaPoly);
        zeroizes(&d.seed);
        zeroizes(&d.seed_bytes);
        let Cipher::Noise { key: RecordKey::ChaCha(key), .. } = &d.send else { panic!() };
        zeroizes(&**key);
        fn zeroizes_type<T: ZeroizeOnDrop>() {}
        zeroizes_type::<Keys>();
    }

    #[test]
    fn a_link_v1_hello_is_refused_with_the_reason() {
        let keys = keys();
        let (s0, s1) = (security(&keys, 0), security(&keys, 1));
        let session = SessionId([9; 16]);
        let ends = |me: u8, security| LinkEnds { me: PartyId(me), session, security };
        let mut wire = Handshake::dial(ends(0, &s0), PartyId(1), &[5; 32]).unwrap().take_output();
        assert_eq!(&wire[..5], b"RFNC2", "the dialer speaks v2");
        // What a v1 dialer sends: the same hello under the old magic.
        wire[..5].copy_from_slice(b"RFNC1");
        let mut a = Handshake::accept(ends(1, &s1), &[6; 32]).unwrap();
        let e = a.handle_input(&wire).unwrap_err();
        let LinkError::Handshake { peer, reason } = &e else { panic!("{e:?}") };
        assert_eq!(*peer, PartyId(0));
        assert!(reason.contains("link v1") && reason.contains("public data"), "{e}");
        assert!(reason.contains("upgrade"), "{e}");
        assert!(!a.is_done());
    }
}
