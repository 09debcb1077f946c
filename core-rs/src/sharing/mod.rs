//! `sharing`: what every protocol family's share vectors have in common.
//!
//! A scheme (`rep3`, METEOR, and the families to come) keeps its share type, its protocols and
//! its preprocessing in its own folder. Code that is written once for every scheme — the
//! inference walk in [`crate::nn`], the tree-ensemble bookkeeping — sees a share vector only
//! through the traits here, with static dispatch: a scheme implements them, and the generic
//! code is monomorphised for it.
//!
//! [`Linear`] is the local part: operations every party does on its own shares, without
//! communication and without randomness. [`Arith`] is the interactive part, in a setup and an
//! online phase: inputs, openings, products. [`Boolean`] adds shared bits and conversions, and
//! on them the comparisons, ReLU, maxima and argmax, written once. Each scheme implements them
//! in its own folder (`rep3/scheme.rs`, `meteor/scheme.rs`) and keeps its specialised
//! protocols there too.
//!
//! Plain vectors (`Vec<R>`) implement [`Linear`] too: they are the values of the plaintext
//! reference run, so a generic walk that is correct on shares agrees with it on plain values.

mod arith;
mod boolean;
mod client;
mod packed;
mod view;

pub(crate) use arith::{check_dims, check_input_values};
pub use arith::{Arith, InputSlot, Len, ProductPrep};
pub use boolean::{eq_by_bits, Bitwise, Boolean, Gates, Store};
pub use client::InputClient;
pub use packed::{pack_bits, unpack_bools, Packed, WordShares};
pub(crate) use view::View;

use core::ops::Range;

use crate::ring::Ring;
use crate::Error;

/// Local, communication-free operations on a vector of shares of elements of ring `R`.
///
/// Every implementation is linear: for shares `[x]`, `[y]` of `x`, `y`, `add` gives shares of
/// `x + y`, `scale(c)` shares of `c·x`, and the index operations rearrange elements without
/// touching their values. Lengths must agree where two vectors meet (an error otherwise, never
/// a panic).
///
/// ```
/// use ringfence_core::{sharing::Linear, ring::Z64};
/// // Written once, for any scheme's share vectors (here plain values).
/// fn pairwise_sums<V: Linear<Z64>>(v: &V) -> Result<V, ringfence_core::Error> {
///     let n = v.len() / 2;
///     v.slice(0..n).add(&v.slice(n..2 * n))
/// }
/// let v = vec![Z64(1), Z64(2), Z64(10), Z64(20)];
/// assert_eq!(pairwise_sums(&v).unwrap(), vec![Z64(11), Z64(22)]);
/// ```
pub trait Linear<R>: Clone + Sized {
    /// Number of shared elements.
    fn len(&self) -> usize;
    /// True when no element is shared.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `x + y` elementwise.
    fn add(&self, o: &Self) -> Result<Self, Error>;
    /// `x − y` elementwise.
    fn sub(&self, o: &Self) -> Result<Self, Error>;
    /// `c·x` for one public scalar.
    fn scale(&self, c: R) -> Self;
    /// Elements at `idx`, in that order (indices may repeat).
    fn gather(&self, idx: &[usize]) -> Self;
    /// Elements `range`.
    fn slice(&self, range: Range<usize>) -> Self;
    /// The concatenation of `parts`.
    fn concat(parts: &[&Self]) -> Self;
}

/// Plain values: the plaintext reference's "shares".
impl<R: Ring> Linear<R> for Vec<R> {
    fn len(&self) -> usize {
        <[R]>::len(self)
    }
    fn add(&self, o: &Self) -> Result<Self, Error> {
        same_len(self.len(), o.len(), "add")?;
        Ok(self.iter().zip(o).map(|(&x, &y)| x + y).collect())
    }
    fn sub(&self, o: &Self) -> Result<Self, Error> {
        same_len(self.len(), o.len(), "sub")?;
        Ok(self.iter().zip(o).map(|(&x, &y)| x - y).collect())
    }
    fn scale(&self, c: R) -> Self {
        self.iter().map(|&x| x * c).collect()
    }
    fn gather(&self, idx: &[usize]) -> Self {
        idx.iter().map(|&i| self[i]).collect()
    }
    fn slice(&self, range: Range<usize>) -> Self {
        self[range].to_vec()
    }
    fn concat(parts: &[&Self]) -> Self {
        parts.iter().flat_map(|p| p.iter().copied()).collect()
    }
}

/// A scheme's party running on an established session `B` (its links, keys and counters).
/// Sessions are made once per deployment (the links' handshake, the parties' keys) and carry
/// any scheme: a server starts the scheme a request asks for on it, and takes the session back
/// afterwards for the next request. Every 3-party scheme runs on a [`crate::rep3::Rep3`]
/// session.
pub trait Session<B>: Sized {
    /// Starts this scheme's party on `base`.
    fn start(base: B) -> Self;
    /// Gives the session back.
    fn finish(self) -> B;
    /// The session (for its counters).
    fn base(&self) -> &B;
    /// The session, mutably.
    fn base_mut(&mut self) -> &mut B;
}

pub(crate) fn same_len(a: usize, b: usize, what: &str) -> Result<(), Error> {
    if a != b {
        return Err(Error::ApiMisuse(format!("{what}: operands have {a} and {b} elements")));
    }
    Ok(())
}

/// Implements [`Linear`] for share vectors that have these operations as inherent methods of
/// the same signatures (the schemes keep them inherent so callers need no trait import).
macro_rules! forward_linear {
    ($ty:ident) => {
        impl<R: $crate::ring::Ring> $crate::sharing::Linear<R> for $ty<R> {
            fn len(&self) -> usize {
                Self::len(self)
            }
            fn add(&self, o: &Self) -> Result<Self, $crate::Error> {
                Self::add(self, o)
            }
            fn sub(&self, o: &Self) -> Result<Self, $crate::Error> {
                Self::sub(self, o)
            }
            fn scale(&self, c: R) -> Self {
                Self::scale(self, c)
            }
            fn gather(&self, idx: &[usize]) -> Self {
                Self::gather(self, idx)
            }
            fn slice(&self, range: core::ops::Range<usize>) -> Self {
                Self::slice(self, range)
            }
            fn concat(parts: &[&Self]) -> Self {
                Self::concat(parts)
            }
        }
    };
}
pub(crate) use forward_linear;
