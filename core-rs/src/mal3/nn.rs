//! Private inference on `mal3`: [`Inference`] for [`Mal3`] is the walk written once for
//! schemes whose material serves any values of its length ([`crate::nn::uniform`]), with
//! rep3's material type [`NnPrep`], on mal3's checked products, truncations and comparisons. Every
//! product of a run is checked before the result is opened, so a deviating server makes the opening abort instead of changing the answer.
//!
//! Material made in setup: truncation pairs, daBits, and validated triples for the
//! elementwise products (the pool). A dense or conv layer is rep3's matrix product, checked
//! with the run's other matrix products by one dot product over GR(2^k, 42) at the opening
//! ([`super::matrix`]), so it takes no triples.

use super::Mal3;
use crate::nn::uniform::Uniform;
#[cfg(doc)]
use crate::{nn::Inference, rep3::NnPrep};

/// Truncation pairs and the pool's first triples, then daBits, each checked before it is
/// returned (a service keeps the material for a later session).
impl<T> Uniform for Mal3<T> {}
