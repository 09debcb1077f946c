//! Join tokens: who may join which relay session as which party.
//!
//! A deployment (the operator of three server parties) holds an Ed25519 signing key; the relay
//! and the server parties know its public key. A token names the deployment, the party index,
//! the session it is good for (or any session of the deployment: server parties get those,
//! since they join every session a client opens), optionally the client's Noise static public
//! key it is bound to, and an expiry, and carries the deployment's signature over them:
//!
//! ```text
//! rf1.{deployment}.{session: 32 hex | any}.{party}.{expires: unix seconds}.{signature: 128 hex}
//! rf2.{deployment}.{session: 32 hex | any}.{party}.{client key: 64 hex}.{expires}.{signature}
//! ```
//!
//! `rf1` has no client key (server parties' tokens); `rf2` binds the token to one client key
//! (a client inviting a deployment's server parties): the relay forwards the client's token
//! with the invitation and the server parties check it themselves (signature, session, key;
//! [`crate::ws::InvitationCheck`]), so a relay can neither open sessions without a token nor
//! put its own key in place of the client's. The two versions sign under different contexts.
//!
//! The relay admits a connection only with a valid token for exactly that session and party
//! index, so a client holding a token for session A cannot join session B, and nobody can speak
//! as another party id. Tokens protect the relay's rooms; the parties' data is protected end to
//! end by the Noise links whatever the relay does.
//!
//! ```
//! use ringfence_core::net::{PartyId, SessionId};
//! use ringfence_relay::token::{DeploymentKey, Token, Trusted};
//! let key = DeploymentKey::generate().unwrap();
//! let t = Token { deployment: "acme".into(), session: Some(SessionId([1; 16])),
//!                 party: PartyId(3), client_key: None, expires: 4_000_000_000 };
//! let s = t.sign(&key);
//! let mut trusted = Trusted::default();
//! trusted.add("acme", key.public());
//! assert_eq!(trusted.verify(&s, 1_800_000_000), Ok(t));
//! assert!(trusted.verify(&s.replace(".3.", ".2."), 1_800_000_000).is_err());
//! ```

use std::collections::HashMap;
use std::fmt;

use ring::signature::{Ed25519KeyPair, KeyPair, UnparsedPublicKey, ED25519};
use ringfence_core::net::{PartyId, SessionId};
use zeroize::Zeroizing;

use crate::error::RelayError;
use crate::keys::PublicKey;
use crate::ws::parse_session_hex;

/// Domain separation of the signed text of `rf1` tokens.
const CONTEXT: &[u8] = b"ringfence join token v1\0";

/// Domain separation of the signed text of `rf2` tokens (bound to a client key).
const CONTEXT_V2: &[u8] = b"ringfence join token v2\0";

/// A deployment's signing key (an Ed25519 seed). `Debug` never shows it. The seed is zeroized
/// on drop; ring's expanded key pair is not (ring does not zeroize, and the pair is opaque).
pub struct DeploymentKey {
    seed: Zeroizing<[u8; 32]>,
    pair: Ed25519KeyPair,
}

impl fmt::Debug for DeploymentKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeploymentKey(public {})", self.public())
    }
}

impl DeploymentKey {
    /// A fresh key from the OS random source.
    pub fn generate() -> Result<Self, RelayError> {
        let mut seed = Zeroizing::new([0u8; 32]);
        getrandom::fill(&mut *seed).map_err(|e| RelayError::Crypto(format!("OS random: {e}")))?;
        Self::from_seed(*seed)
    }

    /// The key with this 32-byte seed.
    pub fn from_seed(seed: [u8; 32]) -> Result<Self, RelayError> {
        let pair = Ed25519KeyPair::from_seed_unchecked(&seed)
            .map_err(|e| RelayError::Crypto(format!("Ed25519 key: {e}")))?;
        Ok(Self { seed: Zeroizing::new(seed), pair })
    }

    /// Parses the seed written as 64 hex digits (surrounding whitespace ignored).
    pub fn from_hex(s: &str) -> Result<Self, RelayError> {
        let seed = hex32(s.trim())
            .map(Zeroizing::new)
            .ok_or_else(|| RelayError::Config("a deployment key is 64 hex digits".into()))?;
        Self::from_seed(*seed)
    }

    /// The seed as 64 hex digits (for the key file).
    pub fn to_hex(&self) -> String {
        hex(&*self.seed)
    }

    /// The public key the relay is configured with.
    pub fn public(&self) -> DeploymentPublicKey {
        let mut p = [0u8; 32];
        p.copy_from_slice(self.pair.public_key().as_ref());
        DeploymentPublicKey(p)
    }
}

/// A deployment's public key: 32 bytes, written as 64 hex digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct DeploymentPublicKey(pub [u8; 32]);

impl fmt::Display for DeploymentPublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex(&self.0))
    }
}

impl fmt::Debug for DeploymentPublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeploymentPublicKey({self})")
    }
}

impl DeploymentPublicKey {
    /// Parses 64 hex digits.
    pub fn from_hex(s: &str) -> Result<Self, RelayError> {
        hex32(s.trim())
            .map(Self)
            .ok_or_else(|| RelayError::Config("a deployment public key is 64 hex digits".into()))
    }
}

/// What a token grants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// The deployment's name, `[a-z0-9-]{1,32}`.
    pub deployment: String,
    /// The one session it is good for; `None`: every session of the deployment.
    pub session: Option<SessionId>,
    /// The party index it may join as.
    pub party: PartyId,
    /// The client's Noise static public key it is bound to (an `rf2` token); `None`: an `rf1`
    /// token, bound to no key (server parties' tokens).
    pub client_key: Option<PublicKey>,
    /// Unix time (seconds) after which it is refused.
    pub expires: u64,
}

impl Token {
    fn body(&self) -> String {
        let session = self.session.map_or_else(|| "any".to_string(), |s| hex(&s.0));
        let (d, p, e) = (&self.deployment, self.party.0, self.expires);
        match &self.client_key {
            None => format!("rf1.{d}.{session}.{p}.{e}"),
            Some(k) => format!("rf2.{d}.{session}.{p}.{}.{e}", k.to_hex()),
        }
    }

    fn context(&self) -> &'static [u8] {
        if self.client_key.is_some() {
            CONTEXT_V2
        } else {
            CONTEXT
        }
    }

    /// The token string, signed with `key`.
    pub fn sign(&self, key: &DeploymentKey) -> String {
        let body = self.body();
        let sig = key.pair.sign(&[self.context(), body.as_bytes()].concat());
        format!("{body}.{}", hex(sig.as_ref()))
    }

    /// Parses a token string without checking its signature.
    fn parse(s: &str) -> Result<(Self, &str, [u8; 64]), String> {
        let bad = |what: &str| Err(format!("malformed token: {what}"));
        let Some((body, sig)) = s.rsplit_once('.') else { return bad("no signature") };
        let f: Vec<&str> = body.split('.').collect();
        let (dep, session, party, client_key, expires) = match f[..] {
            ["rf1", dep, session, party, expires] => (dep, session, party, None, expires),
            ["rf2", dep, session, party, key, expires] => (dep, session, party, Some(key), expires),
            _ => {
                return bad("expected rf1.DEPLOYMENT.SESSION.PARTY.EXPIRES.SIGNATURE or \
                     rf2.DEPLOYMENT.SESSION.PARTY.CLIENT_KEY.EXPIRES.SIGNATURE")
            }
        };
        if !valid_name(dep) {
            return bad("deployment name must be [a-z0-9-]{1,32}");
        }
        let session = match session {
            "any" => None,
            h => Some(parse_session_hex(h)?),
        };
        let Ok(party) = party.parse::<u8>() else { return bad("party index") };
        // Lower case only: the signed text must have one spelling per key.
        let client_key = match client_key {
            None => None,
            Some(k) if k.bytes().all(|b| !b.is_ascii_uppercase()) => match hex32(k) {
                Some(k) => Some(PublicKey(k)),
                None => return bad("client key must be 64 lower-case hex digits"),
            },
            Some(_) => return bad("client key must be 64 lower-case hex digits"),
        };
        let Ok(expires) = expires.parse::<u64>() else { return bad("expiry") };
        let mut signature = [0u8; 64];
        if sig.len() != 128 || !decode_hex(sig, &mut signature) {
            return bad("signature must be 128 hex digits");
        }
        let t = Self {
            deployment: dep.to_string(),
            session,
            party: PartyId(party),
            client_key,
            expires,
        };
        Ok((t, body, signature))
    }
}

/// The deployments a relay trusts, by name. Empty: an open relay (no tokens needed).
#[derive(Clone, Debug, Default)]
pub struct Trusted {
    keys: HashMap<String, DeploymentPublicKey>,
}

impl Trusted {
    /// Trusts `name`'s tokens signed by `key`.
    pub fn add(&mut self, name: &str, key: DeploymentPublicKey) {
        self.keys.insert(name.to_string(), key);
    }

    /// Whether `name` is one of the trusted deployments.
    pub fn knows(&self, name: &str) -> bool {
        self.keys.contains_key(name)
    }

    /// Whether tokens are required (some deployment is configured).
    pub fn required(&self) -> bool {
        !self.keys.is_empty()
    }

    /// Checks the signature and expiry (`now`: unix seconds) and returns what the token grants.
    pub fn verify(&self, token: &str, now: u64) -> Result<Token, String> {
        let (t, body, sig) = Token::parse(token)?;
        let key = self
            .keys
            .get(&t.deployment)
            .ok_or_else(|| format!("unknown deployment {:?}", t.deployment))?;
        UnparsedPublicKey::new(&ED25519, key.0)
            .verify(&[t.context(), body.as_bytes()].concat(), &sig)
            .map_err(|_| format!("token signature is not {:?}'s", t.deployment))?;
        if t.expires < now {
            return Err(format!("token expired {} s ago", now - t.expires));
        }
        Ok(t)
    }
}

/// Whether `s` is a valid deployment name: `[a-z0-9-]{1,32}`.
pub fn valid_name(s: &str) -> bool {
    (1..=32).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn hex32(s: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    decode_hex(s, &mut out).then_some(out)
}

fn decode_hex(s: &str, out: &mut [u8]) -> bool {
    if s.len() != 2 * out.len() || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return false;
    }
    for (o, pair) in out.iter_mut().zip(s.as_bytes().chunks_exact(2)) {
        let digit = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
        *o = digit(pair[0]) << 4 | digit(pair[1]);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (DeploymentKey, Trusted, Token) {
        let key = DeploymentKey::from_seed([9; 32]).unwrap();
        let mut trusted = Trusted::default();
        trusted.add("acme", key.public());
        let t = Token {
            deployment: "acme".into(),
            session: None,
            party: PartyId(1),
            client_key: None,
            expires: 100,
        };
        (key, trusted, t)
    }

    #[test]
    fn forged_altered_foreign_and_expired_tokens_are_refused() {
        let (key, trusted, t) = setup();
        let good = t.sign(&key);
        assert_eq!(trusted.verify(&good, 100), Ok(t.clone()));
        assert!(trusted.verify(&good, 101).unwrap_err().contains("expired"));
        let other = DeploymentKey::from_seed([8; 32]).unwrap();
        assert!(trusted.verify(&t.sign(&other), 50).unwrap_err().contains("signature"));
        let altered = good.replacen(".1.", ".0.", 1);
        assert!(trusted.verify(&altered, 50).unwrap_err().contains("signature"));
        let foreign = Token { deployment: "evil".into(), ..t }.sign(&key);
        assert!(trusted.verify(&foreign, 50).unwrap_err().contains("unknown deployment"));
        for junk in ["", "rf1", "rf1.acme.any.1.100", "rf2.acme.any.1.100.00", "x.y.z.w.v.u.t"] {
            assert!(trusted.verify(junk, 50).is_err(), "{junk}");
        }
    }

    #[test]
    fn a_client_key_is_signed_into_an_rf2_token_and_cannot_be_swapped() {
        let (key, trusted, t) = setup();
        let bound = Token { client_key: Some(PublicKey([0xab; 32])), ..t };
        let good = bound.sign(&key);
        assert!(good.starts_with("rf2.acme.any.1.abab"), "{good}");
        assert_eq!(trusted.verify(&good, 50), Ok(bound.clone()));
        let swapped = good.replace(&"ab".repeat(32), &"cd".repeat(32));
        assert!(trusted.verify(&swapped, 50).unwrap_err().contains("signature"));
        // The same fields as rf1 (no key) do not verify: the versions sign different contexts.
        let (body, sig) = good.rsplit_once('.').unwrap();
        let as_rf1 = format!(
            "{}.{sig}",
            body.replacen("rf2", "rf1", 1).replace(&format!(".{}", "ab".repeat(32)), "")
        );
        assert!(trusted.verify(&as_rf1, 50).unwrap_err().contains("signature"), "{as_rf1}");
        let upper = good.replace(&"ab".repeat(32), &"AB".repeat(32));
        assert!(trusted.verify(&upper, 50).unwrap_err().contains("lower-case"));
    }

    #[test]
    fn key_round_trips_through_hex_and_debug_hides_the_seed() {
        let (key, _, _) = setup();
        let again = DeploymentKey::from_hex(&key.to_hex()).unwrap();
        assert_eq!(again.public(), key.public());
        assert!(!format!("{key:?}").contains(&key.to_hex()));
        assert!(DeploymentKey::from_hex("12").is_err());
    }

    /// Checked by the compiler: the signing key's seed zeroizes itself on drop.
    #[test]
    fn the_seed_zeroizes_on_drop() {
        fn zeroizes<T: zeroize::ZeroizeOnDrop>(_: &T) {}
        zeroizes(&setup().0.seed);
    }
}
