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
use super::{Comparisons, DaBits, Rep3};
use crate::nn::trees::by_level;
use crate::nn::uniform::{Uniform, UniformPrep};
#[cfg(doc)]
use crate::nn::Inference;
use crate::nn::{Output, PlanShape, StepShape};
#[cfg(doc)]
use crate::sharing::Boolean;
use crate::sharing::InputSlot;

/// The material of one run of a plan on a batch: consumed by [`Inference::infer`], never
/// reusable.
pub type NnPrep<R> = UniformPrep<InputSlot, ProductPrep<R>, DaBits<R>>;

/// Truncation pairs, then daBits (the input needs no material in rep3).
impl<T> Uniform for Rep3<T> {}

/// The online rounds of one [`Inference::infer`] of `shape` on rep3 over Z_2^`bits` with
/// comparisons run as `cmp` (the batch does not change them): the count the module
/// documentation derives, with each comparison's MSB taking [`Comparisons::msb_rounds`].
///
/// ```
/// use ringfence_core::{bin3::FanIn, nn::Output, rep3::{self, Comparisons}};
/// # let shape = ringfence_core::nn::PlanShape { frac_bits: 13, input_len: 4, steps: vec![
/// #     ringfence_core::nn::StepShape::Dense { inputs: 4, outputs: 3 },
/// #     ringfence_core::nn::StepShape::Relu { len: 3 },
/// # ], input_range: None };
/// // A dense layer (1 round) and a ReLU (MSB + 1 round).
/// assert_eq!(rep3::online_rounds(&shape, Output::Logits, 64, Comparisons::TwoInput), 1 + 9);
/// let fan = Comparisons::FanIn(FanIn::default());
/// assert_eq!(rep3::online_rounds(&shape, Output::Logits, 64, fan), 1 + 4);
/// ```
pub fn online_rounds(shape: &PlanShape, output: Output, bits: usize, cmp: Comparisons) -> u64 {
    let msb = cmp.msb_rounds(bits) as u64;
    // A tournament level: the bounded comparison (one MSB: activations have headroom) and a
    // selection.
    let levels = |n: usize| u64::from(usize::BITS - n.saturating_sub(1).leading_zeros());
    let level = msb + 1;
    let steps: u64 = shape
        .steps
        .iter()
        .map(|s| match s {
            StepShape::Dense { .. } | StepShape::Conv(_) | StepShape::Scale { .. } => 1,
            StepShape::SumPool(_) | StepShape::Register(_) => 0,
            StepShape::Relu { .. } => msb + 1,
            StepShape::MaxPool(g) => levels(g.window_len()) * level,
            // One MSB run for every node, the bit injection, a product per level below the
            // roots, the leaf-weight product.
            StepShape::Trees(t) if t.nodes.is_empty() => 1,
            StepShape::Trees(t) => msb + 1 + (by_level(t).len() as u64 - 1) + 1,
            // Both sides of the clamp in one ReLU, then the multiplier's truncated product;
            // a spline's knots in one ReLU, then its sum's truncation.
            StepShape::Requant { .. } | StepShape::Spline(_) => msb + 1 + 1,
        })
        .sum();
    match output {
        Output::Logits => steps,
        Output::Argmax => steps + levels(shape.output_len()) * level,
    }
}

/// The values of each batched MSB run of one [`Inference::infer`] of `shape` on `batch`
/// samples, in order: a ReLU layer is one run, a tournament level one run of one MSB per
/// comparison (bounded: activations have headroom), a tree ensemble one run over its nodes.
/// For [`Comparisons::for_network`].
pub fn comparison_runs(shape: &PlanShape, output: Output, batch: usize) -> Vec<usize> {
    let tournament = |windows: usize, size: usize, out: &mut Vec<usize>| {
        let mut size = size;
        while size > 1 {
            out.push(windows * (size / 2));
            size = size.div_ceil(2);
        }
    };
    let mut out = Vec::new();
    for s in &shape.steps {
        match s {
            StepShape::Relu { len } => out.push(batch * len),
            StepShape::Spline(sp) => out.push(batch * sp.len * sp.knots.len()),
            StepShape::Requant { channels, inner, .. } => out.push(2 * batch * channels * inner),
            StepShape::MaxPool(g) => tournament(batch * g.out_len(), g.window_len(), &mut out),
            StepShape::Trees(t) if !t.nodes.is_empty() => out.push(batch * t.nodes.len()),
            _ => {}
        }
    }
    if output == Output::Argmax {
        tournament(batch, shape.output_len(), &mut out);
    }
    out
}
