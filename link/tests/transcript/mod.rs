//! The observer of a link handshake: someone who sees the bytes of a link's handshake as they
//! cross the wire (the relay does) and knows every party's static public key (every client is
//! given them), but no private key and no ephemeral secret.
//!
//! It follows the Noise transcript hash from public data alone, written here from the Noise
//! specification (rev. 34, §5.2–5.3, §7) rather than through snow, so that a test which finds
//! the parties' hash equal to the observer's checks the observer model, not snow against itself.

#![allow(dead_code, unreachable_pub)]

use ringfence_core::net::{PartyId, SessionId};
use ringfence_link::{Established, Handshake, LinkEnds, PublicKey, Security, StaticKeypair};
use sha2::{Digest, Sha256};

/// The bytes of one link handshake as they crossed the wire.
pub struct Wire {
    /// Dialer → acceptor: hello, message 1 (u16 BE length ‖ body), then the key confirmation.
    pub to_acceptor: Vec<u8>,
    /// Acceptor → dialer: message 2 (u16 BE length ‖ body).
    pub to_dialer: Vec<u8>,
}

/// `n` parties' keypairs, from fixed entropy (distinct per party).
pub fn keypairs(n: u8) -> Vec<StaticKeypair> {
    (0..n).map(|i| StaticKeypair::from_entropy(&[0x40 + i; 32]).unwrap()).collect()
}

/// Party `me`'s Noise security among `keys`.
pub fn security(keys: &[StaticKeypair], me: u8) -> Security {
    Security::Noise {
        keypair: keys[usize::from(me)].clone(),
        public_keys: keys.iter().map(|k| k.public).collect(),
    }
}

/// Runs the link `dialer` → `acceptor` in memory, recording every byte each end sends.
/// `entropy` keys the two ends' ephemeral keys (distinct per end).
pub fn record_link(
    keys: &[StaticKeypair],
    session: SessionId,
    (dialer, acceptor): (u8, u8),
    entropy: u8,
) -> (Established, Established, Wire) {
    let (sd, sa) = (security(keys, dialer), security(keys, acceptor));
    let ends = |me: u8, security| LinkEnds { me: PartyId(me), session, security };
    let mut d = Handshake::dial(ends(dialer, &sd), PartyId(acceptor), &[entropy; 32]).unwrap();
    let mut a = Handshake::accept(ends(acceptor, &sa), &[entropy ^ 0xff; 32]).unwrap();
    let mut wire = Wire { to_acceptor: Vec::new(), to_dialer: Vec::new() };
    while !(d.is_done() && a.is_done()) {
        let out = d.take_output();
        assert_eq!(a.handle_input(&out).unwrap(), out.len());
        wire.to_acceptor.extend_from_slice(&out);
        let out = a.take_output();
        assert_eq!(d.handle_input(&out).unwrap(), out.len());
        wire.to_dialer.extend_from_slice(&out);
    }
    (d.finish().unwrap(), a.finish().unwrap(), wire)
}

/// What the observer learns from a recorded handshake.
pub struct Observed {
    /// The cleartext hello.
    pub hello: Vec<u8>,
    /// Both ephemeral public keys (dialer's, acceptor's).
    pub ephemerals: [[u8; 32]; 2],
    /// The Noise handshake hash `h` after both messages.
    pub h: [u8; 32],
    /// The dialer's key confirmation, sent in the clear after message 2.
    pub confirm: [u8; 32],
}

/// Noise's `MixHash`: h = HASH(h ‖ data).
fn mix_hash(h: &mut [u8; 32], data: &[u8]) {
    *h = Sha256::new().chain_update(*h).chain_update(data).finalize().into();
}

/// Splits one `u16 BE length ‖ body` handshake message off the front of `wire`.
fn message(wire: &[u8]) -> (&[u8], &[u8]) {
    let len = usize::from(u16::from_be_bytes([wire[0], wire[1]]));
    wire[2..].split_at(len)
}

/// Follows the Noise `KK` transcript of a recorded link from public data only.
///
/// `protocol` is the Noise protocol name, `prologue_label` the text the link puts before the
/// hello in the prologue (both public: they are in the source), `dialer` and `acceptor` the two
/// static public keys.
pub fn observe(
    wire: &Wire,
    protocol: &str,
    prologue_label: &[u8],
    dialer: &PublicKey,
    acceptor: &PublicKey,
) -> Observed {
    const HELLO: usize = 24;
    let hello = &wire.to_acceptor[..HELLO];
    let (msg1, rest) = message(&wire.to_acceptor[HELLO..]);
    let confirm: [u8; 32] =
        rest.try_into().expect("the dialer sends only its key confirmation after message 1");
    let (msg2, rest) = message(&wire.to_dialer);
    assert!(rest.is_empty(), "the acceptor sends nothing after message 2");

    // InitializeSymmetric (§5.2): a name of at most HASHLEN bytes is zero-padded, else hashed.
    let mut h = [0u8; 32];
    if protocol.len() <= 32 {
        h[..protocol.len()].copy_from_slice(protocol.as_bytes());
    } else {
        h = Sha256::digest(protocol.as_bytes()).into();
    }
    let mut prologue = prologue_label.to_vec();
    prologue.extend_from_slice(hello);
    mix_hash(&mut h, &prologue);
    // KK's pre-messages (§7.2): -> s, <- s, initiator's first.
    mix_hash(&mut h, &dialer.0);
    mix_hash(&mut h, &acceptor.0);
    // Message 1 is `e, es, ss` + payload and message 2 `e, ee, se` + payload: the `e` token mixes
    // the ephemeral public key, DH tokens touch only the chaining key, and the payload, encrypted
    // once a key is set, is mixed as ciphertext (EncryptAndHash).
    let mut ephemerals = [[0u8; 32]; 2];
    for (msg, e) in [msg1, msg2].into_iter().zip(&mut ephemerals) {
        let (epub, ciphertext) = msg.split_at(32);
        e.copy_from_slice(epub);
        mix_hash(&mut h, epub);
        mix_hash(&mut h, ciphertext);
    }
    Observed { hello: hello.to_vec(), ephemerals, h, confirm }
}

/// Link v1's pairwise seed: SHA-256("ringfence pairwise seed v1" ‖ h), as `Handshake::finish`
/// computed it before link v2.
pub fn v1_seed(h: &[u8; 32]) -> [u8; 32] {
    Sha256::new().chain_update(b"ringfence pairwise seed v1").chain_update(h).finalize().into()
}

/// Every seed the observer can make of what it saw: v1's derivation, v2's label over public
/// inputs (with the hash, the transcript, the public keys and the ephemerals standing in for
/// the secret split keys), the plain hashes, and the key confirmation (an HKDF output of the
/// same keys as the seed, under another label).
pub fn public_derivations(o: &Observed, wire: &Wire, keys: [&PublicKey; 2]) -> Vec<[u8; 32]> {
    let v2_info = [b"ringfence pairwise seed v2".as_slice(), &o.h].concat();
    let transcript = [wire.to_acceptor.as_slice(), &wire.to_dialer].concat();
    let publics: Vec<Vec<u8>> = vec![
        o.h.to_vec(),
        [o.h, o.h].concat(),
        transcript.clone(),
        [keys[0].0, keys[1].0].concat(),
        [o.ephemerals[0], o.ephemerals[1]].concat(),
        o.hello.clone(),
    ];
    let mut out = vec![
        v1_seed(&o.h),
        o.h,
        Sha256::digest(o.h).into(),
        Sha256::digest(&transcript).into(),
        o.confirm,
    ];
    out.push(
        Sha256::new()
            .chain_update(b"ringfence pairwise seed v2")
            .chain_update(o.h)
            .finalize()
            .into(),
    );
    for ikm in &publics {
        let mut seed = [0u8; 32];
        hkdf::Hkdf::<Sha256>::new(None, ikm).expand(&v2_info, &mut seed).unwrap();
        out.push(seed);
        hkdf::Hkdf::<Sha256>::new(Some(&o.h), ikm)
            .expand(b"ringfence pairwise seed v2", &mut seed)
            .unwrap();
        out.push(seed);
    }
    out
}
