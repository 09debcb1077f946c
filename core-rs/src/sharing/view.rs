//! [`View`]: a digest of what a party saw, for the checks of malicious-secure schemes (mal3's
//! view comparisons, spdz2k's agreement on opened values).

use sha2::{Digest as _, Sha256};

use crate::ring::{Ring, Z64};

/// A running SHA-256 over values in a canonical form: a label, then length-prefixed
/// little-endian elements, so that two different views never hash alike.
#[derive(Clone)]
pub struct View(Sha256);

impl View {
    pub(crate) fn new(label: &str, op: u64) -> Self {
        let mut h = Sha256::new();
        h.update(b"ringfence view\0");
        h.update((label.len() as u64).to_le_bytes());
        h.update(label.as_bytes());
        h.update(op.to_le_bytes());
        Self(h)
    }

    pub(crate) fn absorb<R: Ring>(&mut self, v: &[R]) {
        self.0.update((v.len() as u64).to_le_bytes());
        let mut scratch = Vec::new();
        self.0.update(R::wire_bytes(v, &mut scratch));
    }

    /// The digest as four ring words, to travel in a frame.
    pub(crate) fn words(self) -> Vec<Z64> {
        self.0
            .finalize()
            .chunks_exact(8)
            .map(|c| Z64(u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])))
            .collect()
    }
}
