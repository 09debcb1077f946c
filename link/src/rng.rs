//! Randomness for Noise as an input: snow asks its resolver for an RNG (ephemeral keys, key
//! generation); ours hands out the core's ChaCha12 stream keyed by caller-provided entropy, so
//! the crate needs no OS random source and runs unchanged in wasm. Everything else (DH, hash,
//! cipher) comes from snow's resolvers: ring's AES-GCM natively, RustCrypto otherwise.

use ringfence_core::prg::{Prg, Seed};
use snow::params::{CipherChoice, DHChoice, HashChoice};
use snow::resolvers::{BoxedCryptoResolver, CryptoResolver, DefaultResolver, FallbackResolver};
use snow::types::{Cipher, Dh, Hash, Random};

use crate::{noise_params, LinkError};

/// PRG domain of Noise randomness (distinct from every protocol's operation numbers, which
/// are small counters).
const DOMAIN: u64 = u64::from_le_bytes(*b"rf-noise");

struct EntropyRng(Prg);

impl Random for EntropyRng {
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), snow::Error> {
        self.0.fill_bytes(dest);
        Ok(())
    }
}

/// Resolves only the RNG; the fallback resolver provides the primitives.
struct EntropyResolver(Seed);

impl CryptoResolver for EntropyResolver {
    fn resolve_rng(&self) -> Option<Box<dyn Random>> {
        Some(Box::new(EntropyRng(Prg::new(&self.0, DOMAIN, 0))))
    }
    fn resolve_dh(&self, _: &DHChoice) -> Option<Box<dyn Dh>> {
        None
    }
    fn resolve_hash(&self, _: &HashChoice) -> Option<Box<dyn Hash>> {
        None
    }
    fn resolve_cipher(&self, _: &CipherChoice) -> Option<Box<dyn Cipher>> {
        None
    }
}

fn primitives() -> BoxedCryptoResolver {
    #[cfg(feature = "ring-accelerated")]
    {
        use snow::resolvers::RingResolver;
        Box::new(FallbackResolver::new(Box::new(RingResolver), Box::new(DefaultResolver)))
    }
    #[cfg(not(feature = "ring-accelerated"))]
    {
        Box::new(DefaultResolver)
    }
}

/// A snow builder for [`NOISE_PROTOCOL`](crate::NOISE_PROTOCOL) whose randomness is `entropy`.
pub(crate) fn builder(entropy: &[u8; 32]) -> Result<snow::Builder<'static>, LinkError> {
    let rng: BoxedCryptoResolver = Box::new(EntropyResolver(Seed::from_bytes(*entropy)));
    let resolver = Box::new(FallbackResolver::new(rng, primitives()));
    Ok(snow::Builder::with_resolver(noise_params()?, resolver))
}
