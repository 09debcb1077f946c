//! Static identity keys (x25519) of the parties.
//!
//! A party's [`PrivateKey`] never prints: its `Debug` is redacted and it has no `Display`. Keys
//! travel between processes as lowercase hex ([`PublicKey::to_hex`], [`PrivateKey::to_hex`]),
//! private keys only over pipes, never on a command line.

use core::fmt;

use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::rng::builder;
use crate::LinkError;

/// Bytes in an x25519 key.
pub const KEY_LEN: usize = 32;

/// A party's x25519 static public key.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PublicKey(pub [u8; KEY_LEN]);

impl PublicKey {
    /// The key as 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        to_hex(&self.0)
    }

    /// Parses 64 hex digits.
    pub fn from_hex(s: &str) -> Result<Self, LinkError> {
        from_hex(s).map(Self)
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.to_hex())
    }
}

/// A party's x25519 static private key. `Debug` is redacted; there is no `Display`; the key is
/// zeroized on drop.
#[derive(Clone, PartialEq, Eq)]
pub struct PrivateKey([u8; KEY_LEN]);

impl Drop for PrivateKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl ZeroizeOnDrop for PrivateKey {}

impl PrivateKey {
    /// Wraps raw key bytes.
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        Self(bytes)
    }

    /// The raw key bytes (for the Noise handshake).
    pub fn as_bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    /// The key as hex, for handing it to a child process over a pipe. Never log the result.
    pub fn to_hex(&self) -> String {
        to_hex(&self.0)
    }

    /// Parses 64 hex digits.
    pub fn from_hex(s: &str) -> Result<Self, LinkError> {
        from_hex(s).map(Self)
    }
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PrivateKey(<redacted>)")
    }
}

/// A static keypair: the private key and its public key (the private key zeroized on drop).
#[derive(Clone, PartialEq, Eq)]
pub struct StaticKeypair {
    /// The private half (redacted in `Debug`).
    pub private: PrivateKey,
    /// The public half.
    pub public: PublicKey,
}

/// Its only secret is the [`PrivateKey`], which zeroizes itself.
impl ZeroizeOnDrop for StaticKeypair {}

impl StaticKeypair {
    /// Generates a fresh keypair from the OS random source.
    #[cfg(feature = "os-rng")]
    pub fn generate() -> Result<Self, LinkError> {
        let mut entropy = zeroize::Zeroizing::new([0u8; 32]);
        getrandom::fill(&mut *entropy)
            .map_err(|e| LinkError::Crypto(format!("OS random source: {e}")))?;
        Self::from_entropy(&entropy)
    }

    /// The keypair of a stored private key (its public key recomputed: X25519 of the base
    /// point, as Noise does).
    ///
    /// ```
    /// use ringfence_link::StaticKeypair;
    /// let a = StaticKeypair::from_entropy(&[7; 32]).unwrap();
    /// assert_eq!(StaticKeypair::from_private(a.private.clone()), a);
    /// ```
    pub fn from_private(private: PrivateKey) -> Self {
        let public = curve25519_dalek::MontgomeryPoint::mul_base_clamped(private.0).to_bytes();
        Self { private, public: PublicKey(public) }
    }

    /// Derives a keypair from 32 bytes of fresh entropy (e.g. `crypto.getRandomValues` in a
    /// browser): the same entropy gives the same keypair, so it must never be reused.
    ///
    /// ```
    /// use ringfence_link::StaticKeypair;
    /// let a = StaticKeypair::from_entropy(&[7; 32]).unwrap();
    /// assert_eq!(a, StaticKeypair::from_entropy(&[7; 32]).unwrap());
    /// assert_ne!(a.public, StaticKeypair::from_entropy(&[8; 32]).unwrap().public);
    /// ```
    pub fn from_entropy(entropy: &[u8; 32]) -> Result<Self, LinkError> {
        let mut kp = builder(entropy)?
            .generate_keypair()
            .map_err(|e| LinkError::Crypto(format!("key generation failed: {e}")))?;
        let private: [u8; KEY_LEN] = kp
            .private
            .as_slice()
            .try_into()
            .map_err(|_| LinkError::Crypto("generated private key is not 32 bytes".into()))?;
        // snow's keypair does not zeroize itself.
        kp.private.zeroize();
        let public: [u8; KEY_LEN] = kp
            .public
            .as_slice()
            .try_into()
            .map_err(|_| LinkError::Crypto("generated public key is not 32 bytes".into()))?;
        let private = PrivateKey(private);
        Ok(Self { private, public: PublicKey(public) })
    }
}

impl fmt::Debug for StaticKeypair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticKeypair")
            .field("private", &self.private)
            .field("public", &self.public)
            .finish()
    }
}

fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

fn from_hex(s: &str) -> Result<[u8; KEY_LEN], LinkError> {
    let s = s.trim();
    let bad = || LinkError::Config(format!("a key must be {} hex digits", 2 * KEY_LEN));
    if s.len() != 2 * KEY_LEN || !s.is_ascii() {
        return Err(bad());
    }
    let mut out = [0u8; KEY_LEN];
    for (o, pair) in out.iter_mut().zip(s.as_bytes().chunks_exact(2)) {
        let hi = (pair[0] as char).to_digit(16).ok_or_else(bad)?;
        let lo = (pair[1] as char).to_digit(16).ok_or_else(bad)?;
        // Two hex digits always fit a byte.
        *o = (hi * 16 + lo) as u8;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_garbage() {
        let kp = StaticKeypair::from_entropy(&[1; 32]).unwrap();
        assert_eq!(PublicKey::from_hex(&kp.public.to_hex()).unwrap(), kp.public);
        assert_eq!(PrivateKey::from_hex(&kp.private.to_hex()).unwrap(), kp.private);
        assert!(PublicKey::from_hex("zz").is_err());
        assert!(PublicKey::from_hex(&"g".repeat(64)).is_err());
        assert!(PublicKey::from_hex(&"é".repeat(32)).is_err());
    }
}
