//! Link establishment: the dialer's hello, then a Noise `KK` handshake (or, insecurely, a nonce
//! exchange), ending with the link's record ciphers and pairwise seed.
//!
//! ```text
//! dialer → acceptor   hello = "RFNC1" ‖ mode ‖ dialer id ‖ acceptor id ‖ session (24 bytes)
//! Noise KK            → e, es, ss   ← e, ee, se      (messages: u16 BE length ‖ body)
//! plain (insecure)    → nonce_d (32)   ← nonce_a (32)
//! ```
//!
//! The hello is bound into the Noise prologue, and the acceptor takes the static key it expects
//! from the id the dialer claims: a dialer that lies about its id, holds another key, or talks to
//! a different session fails the handshake. The pairwise seed is
//! `SHA-256("ringfence pairwise seed v1" ‖ handshake hash)`, equal at both ends.

use std::sync::Arc;

use ringfence_core::net::{PartyId, SessionId};
use ringfence_core::prg::Seed;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::config::{Security, TransportConfig};
use crate::error::RelayError;
use crate::keys::PublicKey;
use crate::noise_params;
use crate::record::Cipher;

const MAGIC: &[u8; 5] = b"RFNC1";
const HELLO_LEN: usize = MAGIC.len() + 3 + 16;
/// Handshake messages of `KK` with empty payloads are 48 bytes; anything far larger is garbage.
const MAX_HANDSHAKE_MSG: usize = 1024;
const NONCE_LEN: usize = 32;

/// An authenticated link, ready for the record layer.
pub(crate) struct Handshaken {
    pub(crate) peer: PartyId,
    pub(crate) stream: TcpStream,
    pub(crate) send: Cipher,
    pub(crate) recv: Cipher,
    pub(crate) seed: Seed,
    /// Bytes this end wrote during the handshake.
    pub(crate) bytes_sent: u64,
}

/// The Noise KK state for one side of a link: our static key, the peer's expected key, and the
/// hello bound in as prologue.
fn noise_builder(
    keypair: &crate::StaticKeypair,
    expected: &crate::PublicKey,
    prologue: &[u8],
    initiator: bool,
) -> Result<snow::HandshakeState, RelayError> {
    let b = snow::Builder::new(noise_params()?)
        .local_private_key(keypair.private.as_bytes())
        .and_then(|b| b.remote_public_key(&expected.0))
        .and_then(|b| b.prologue(prologue));
    b.and_then(|b| if initiator { b.build_initiator() } else { b.build_responder() })
        .map_err(|e| RelayError::Crypto(format!("Noise setup: {e}")))
}

/// Runs the dialer's side with `peer` over a freshly connected `stream`.
pub(crate) async fn dial(
    cfg: &TransportConfig,
    peer: PartyId,
    mut stream: TcpStream,
) -> Result<Handshaken, RelayError> {
    let fail = |r: String| RelayError::handshake(peer, r);
    let hello = hello(cfg.security.mode_byte(), cfg.me, peer, cfg.session);
    let prologue = prologue(&hello);
    match &cfg.security {
        Security::Noise { keypair, public_keys } => {
            let expected = public_keys[peer.index()];
            let mut hs = noise_builder(keypair, &expected, &prologue, true)?;
            let mut out = hello.to_vec();
            write_msg(&mut out, |buf| hs.write_message(&[], buf))
                .map_err(|e| fail(format!("writing message 1: {e}")))?;
            stream.write_all(&out).await.map_err(|e| fail(format!("sending message 1: {e}")))?;
            let msg = read_msg(&mut stream).await.map_err(fail)?;
            hs.read_message(&msg, &mut [0u8; MAX_HANDSHAKE_MSG]).map_err(|e| {
                fail(format!("message 2 rejected ({e}): the peer does not hold {peer}'s key"))
            })?;
            finish_noise(peer, hs, &expected, stream, out.len())
        }
        Security::DangerInsecurePlain => {
            let mine = nonce()?;
            let mut out = hello.to_vec();
            out.extend_from_slice(&mine);
            stream.write_all(&out).await.map_err(|e| fail(format!("sending hello: {e}")))?;
            let mut theirs = [0u8; NONCE_LEN];
            stream
                .read_exact(&mut theirs)
                .await
                .map_err(|e| fail(format!("reading nonce: {e}")))?;
            Ok(finish_plain(peer, stream, &prologue, &mine, &theirs, out.len()))
        }
    }
}

/// Runs the acceptor's side over an accepted `stream`; the peer is whoever the hello names,
/// provided the handshake proves it.
pub(crate) async fn accept(
    cfg: Arc<TransportConfig>,
    mut stream: TcpStream,
) -> Result<Handshaken, RelayError> {
    let mut hello = [0u8; HELLO_LEN];
    let unknown = PartyId(u8::MAX);
    stream
        .read_exact(&mut hello)
        .await
        .map_err(|e| RelayError::handshake(unknown, format!("reading hello: {e}")))?;
    let peer = check_hello(&cfg, &hello).map_err(|r| RelayError::handshake(unknown, r))?;
    let fail = |r: String| RelayError::handshake(peer, r);
    let prologue = prologue(&hello);
    match &cfg.security {
        Security::Noise { keypair, public_keys } => {
            let expected = public_keys[peer.index()];
            let mut hs = noise_builder(keypair, &expected, &prologue, false)?;
            let msg = read_msg(&mut stream).await.map_err(fail)?;
            hs.read_message(&msg, &mut [0u8; MAX_HANDSHAKE_MSG]).map_err(|e| {
                fail(format!("message 1 rejected ({e}): the dialer does not hold {peer}'s key"))
            })?;
            let mut out = Vec::new();
            write_msg(&mut out, |buf| hs.write_message(&[], buf))
                .map_err(|e| fail(format!("writing message 2: {e}")))?;
            stream.write_all(&out).await.map_err(|e| fail(format!("sending message 2: {e}")))?;
            finish_noise(peer, hs, &expected, stream, out.len())
        }
        Security::DangerInsecurePlain => {
            let mut theirs = [0u8; NONCE_LEN];
            stream
                .read_exact(&mut theirs)
                .await
                .map_err(|e| fail(format!("reading nonce: {e}")))?;
            let mine = nonce()?;
            stream.write_all(&mine).await.map_err(|e| fail(format!("sending nonce: {e}")))?;
            Ok(finish_plain(peer, stream, &prologue, &theirs, &mine, NONCE_LEN))
        }
    }
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

/// Validates a hello received by `cfg.me` and returns the dialer's claimed id.
fn check_hello(cfg: &TransportConfig, h: &[u8; HELLO_LEN]) -> Result<PartyId, String> {
    if &h[..5] != MAGIC {
        return Err("not a ringfence link (bad magic)".into());
    }
    if h[5] != cfg.security.mode_byte() {
        return Err(format!("link mode {} but this party runs {}", h[5], cfg.security.name()));
    }
    let (dialer, acceptor) = (PartyId(h[6]), PartyId(h[7]));
    if acceptor != cfg.me {
        return Err(format!("hello addressed to {acceptor}, this is {}", cfg.me));
    }
    if dialer >= cfg.me {
        return Err(format!("{dialer} may not dial {} (lower ids dial higher ones)", cfg.me));
    }
    if h[8..] != cfg.session.0 {
        return Err(format!("{dialer} is in another session"));
    }
    Ok(dialer)
}

fn prologue(hello: &[u8; HELLO_LEN]) -> Vec<u8> {
    let mut p = b"ringfence link v1".to_vec();
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

async fn read_msg(stream: &mut TcpStream) -> Result<Vec<u8>, String> {
    let mut len = [0u8; 2];
    stream.read_exact(&mut len).await.map_err(|e| format!("reading handshake: {e}"))?;
    let len = usize::from(u16::from_be_bytes(len));
    if len > MAX_HANDSHAKE_MSG {
        return Err(format!("handshake message of {len} bytes"));
    }
    let mut msg = vec![0u8; len];
    stream.read_exact(&mut msg).await.map_err(|e| format!("reading handshake: {e}"))?;
    Ok(msg)
}

fn finish_noise(
    peer: PartyId,
    hs: snow::HandshakeState,
    expected: &PublicKey,
    stream: TcpStream,
    bytes_sent: usize,
) -> Result<Handshaken, RelayError> {
    if hs.get_remote_static() != Some(&expected.0[..]) {
        return Err(RelayError::handshake(peer, "remote static key is not the expected one"));
    }
    let mut h = Sha256::new();
    h.update(b"ringfence pairwise seed v1");
    h.update(hs.get_handshake_hash());
    let seed = Seed::from_bytes(h.finalize().into());
    let state = Arc::new(
        hs.into_stateless_transport_mode()
            .map_err(|e| RelayError::handshake(peer, format!("handshake incomplete: {e}")))?,
    );
    Ok(Handshaken {
        peer,
        stream,
        send: Cipher::Noise { state: state.clone(), nonce: 0 },
        recv: Cipher::Noise { state, nonce: 0 },
        seed,
        bytes_sent: bytes_sent as u64,
    })
}

fn finish_plain(
    peer: PartyId,
    stream: TcpStream,
    prologue: &[u8],
    dialer_nonce: &[u8; NONCE_LEN],
    acceptor_nonce: &[u8; NONCE_LEN],
    bytes_sent: usize,
) -> Handshaken {
    let mut h = Sha256::new();
    h.update(b"ringfence INSECURE plain pairwise seed v1");
    h.update(prologue);
    h.update(dialer_nonce);
    h.update(acceptor_nonce);
    Handshaken {
        peer,
        stream,
        send: Cipher::DangerPlain,
        recv: Cipher::DangerPlain,
        seed: Seed::from_bytes(h.finalize().into()),
        bytes_sent: bytes_sent as u64,
    }
}

fn nonce() -> Result<[u8; NONCE_LEN], RelayError> {
    let mut n = [0u8; NONCE_LEN];
    getrandom::fill(&mut n).map_err(|e| RelayError::Crypto(format!("OS random source: {e}")))?;
    Ok(n)
}
