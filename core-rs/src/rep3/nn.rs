//! Private inference on `rep3` ([`Inference`] for [`Rep3`]).
//!
//! rep3's material serves any values of its length, so its inference is the one written for
//! such schemes ([`crate::nn::uniform`]): each dense or conv layer is one
//! [`Rep3::matmul_fixed`] round (truncation folded in) plus a local bias add, each ReLU is
//! [`Boolean::relu`] (MSB extraction and one multiplexing round with daBits), and the optional
//! argmax a tournament of comparisons. The material of a run is truncation pairs and daBits
//! sized from the shape ([`crate::nn::PlanShape::needs`]), made in the setup phase without
//! inputs. The result stays shared; reveal it with [`Rep3::reveal`],
//! [`Rep3::reveal_to`] or [`Rep3::reveal_to_client`].
//!
//! A batch of samples runs together: every round carries the whole batch, so the round count
//! does not depend on the batch size (in Z_2^64: 1 per dense or conv layer, grouped or
//! depthwise included; a standalone BatchNormalization is a depthwise 1×1 conv, 16 bytes per
//! value from P1 and 8 from P0 and P2; 1 per public scale step, 0 for a sum pool, 9 per ReLU
//! layer, 10 per tournament level of max pooling or argmax; a tree ensemble takes 8 for all
//! comparisons (one MSB run), 1 for their bit injection, one per tree level below the root and
//! 1 for the leaf-weight product; NN-A takes 30 rounds for scores, 70 with the argmax).
//! Memory grows with the batch: a convolution materialises its im2col matrix of shares
//! (`batch · positions · patch_len` elements, 16 bytes each per party), so large conv batches
//! are best split into several runs.

use super::scheme::ProductPrep;
use super::{DaBits, Rep3};
use crate::nn::uniform::{Uniform, UniformPrep};
#[cfg(doc)]
use crate::nn::Inference;
#[cfg(doc)]
use crate::sharing::Boolean;
use crate::sharing::InputSlot;

/// The material of one run of a plan on a batch: consumed by [`Inference::infer`], never
/// reusable.
pub type NnPrep<R> = UniformPrep<InputSlot, ProductPrep<R>, DaBits<R>>;

/// Truncation pairs, then daBits (the input needs no material in rep3).
impl<T> Uniform for Rep3<T> {}
