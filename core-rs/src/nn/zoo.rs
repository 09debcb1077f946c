//! The paper's CIFAR-10 networks (METEOR extract §7.2: Falcon's AlexNet and VGG16 variants) with
//! deterministic pseudo-random weights, built in memory: no file, no I/O.
//!
//! `scripts/models/make_cifar_nets.py` writes the same architectures as ONNX files
//! (`models/alexnet.onnx`, `models/vgg16.onnx`, not committed: VGG16's 37.7 M float weights are
//! about 150 MB); importing such a file gives the same [`Model::summary`] as [`alexnet`] and
//! [`vgg16`] here. The weights are random (the paper benchmarks communication and time, never
//! accuracy): He-uniform, so activations keep their scale through the ReLUs, and small biases;
//! BatchNormalization gets γ in [0.5, 1.5], β and μ in [−0.1, 0.1], σ² in [0.5, 1.5].
//!
//! [`paper_model`] resolves a name (`alexnet`, `vgg16`); [`paper_shape`] gives the public
//! [`PlanShape`] alone (enough for [`crate::meteor::online_cost`]) without making VGG16's
//! weights.

use super::geom::{ConvGeom, PoolGeom};
use super::model::{Affine, Conv, Dense, Layer, Model};
use super::plan::{PlanShape, StepShape};
use crate::prg::{Prg, Seed};

/// One layer of a network description.
#[derive(Clone, Copy)]
enum Spec {
    /// Convolution `in_c × hw × hw → out_c`, `k × k`, stride, padding.
    Conv { in_c: usize, hw: usize, out_c: usize, k: usize, s: usize, p: usize },
    /// Max pooling `c × hw × hw`, `k × k`, stride.
    Pool { c: usize, hw: usize, k: usize, s: usize },
    /// ReLU.
    Relu,
    /// Standalone BatchNormalization over `c` channels of `inner` values.
    Bn { c: usize, inner: usize },
    /// Fully connected `inputs → outputs`.
    Fc { inputs: usize, outputs: usize },
}

fn conv_geom(in_c: usize, hw: usize, out_c: usize, k: usize, s: usize, p: usize) -> ConvGeom {
    ConvGeom {
        in_c,
        in_h: hw,
        in_w: hw,
        out_c,
        kernel: [k, k],
        stride: [s, s],
        pads: [p; 4],
        groups: 1,
    }
}

fn pool_geom(c: usize, hw: usize, k: usize, s: usize) -> PoolGeom {
    PoolGeom { c, in_h: hw, in_w: hw, kernel: [k, k], stride: [s, s] }
}

/// AlexNet (Falcon's CIFAR-10 variant): input 3×33×33.
fn alexnet_specs() -> (Vec<usize>, Vec<Spec>) {
    use Spec::*;
    let specs = vec![
        Conv { in_c: 3, hw: 33, out_c: 96, k: 11, s: 4, p: 9 },
        Pool { c: 96, hw: 11, k: 3, s: 2 },
        Relu,
        Bn { c: 96, inner: 25 },
        Conv { in_c: 96, hw: 5, out_c: 256, k: 5, s: 1, p: 1 },
        Pool { c: 256, hw: 3, k: 3, s: 2 },
        Relu,
        Bn { c: 256, inner: 1 },
        Conv { in_c: 256, hw: 1, out_c: 384, k: 3, s: 1, p: 1 },
        Relu,
        Conv { in_c: 384, hw: 1, out_c: 384, k: 3, s: 1, p: 1 },
        Relu,
        Conv { in_c: 384, hw: 1, out_c: 256, k: 3, s: 1, p: 1 },
        Relu,
        Fc { inputs: 256, outputs: 256 },
        Relu,
        Fc { inputs: 256, outputs: 256 },
        Relu,
        Fc { inputs: 256, outputs: 10 },
        Relu,
    ];
    (vec![3, 33, 33], specs)
}

/// VGG16 (Falcon's CIFAR-10 variant): input 3×32×32, 3×3 convolutions with padding 1, every
/// max pool 2×2 stride 2 followed by a ReLU, and a 1000-way output.
fn vgg16_specs() -> (Vec<usize>, Vec<Spec>) {
    use Spec::*;
    let mut specs = Vec::new();
    let (mut c, mut hw) = (3, 32);
    for block in [&[64, 64][..], &[128, 128], &[256, 256, 256], &[512, 512, 512], &[512, 512, 512]]
    {
        for (i, &out_c) in block.iter().enumerate() {
            specs.push(Conv { in_c: c, hw, out_c, k: 3, s: 1, p: 1 });
            c = out_c;
            if i + 1 < block.len() {
                specs.push(Relu);
            }
        }
        specs.push(Pool { c, hw, k: 2, s: 2 });
        specs.push(Relu);
        hw /= 2;
    }
    for (inputs, outputs) in [(512, 4096), (4096, 4096), (4096, 1000)] {
        specs.push(Fc { inputs, outputs });
        specs.push(Relu);
    }
    (vec![3, 32, 32], specs)
}

fn specs(name: &str) -> Option<(Vec<usize>, Vec<Spec>)> {
    match name {
        "alexnet" => Some(alexnet_specs()),
        "vgg16" => Some(vgg16_specs()),
        _ => None,
    }
}

/// Uniform reals in `[lo, hi)` from a PRG.
struct Uniform(Prg);

impl Uniform {
    fn next(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn vec(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n).map(|_| self.next(lo, hi)).collect()
    }
}

fn build(input_shape: Vec<usize>, specs: &[Spec], seed: u64) -> Model {
    let mut u = Uniform(Prg::new(&Seed::from_bytes([0x7a; 32]), seed, 0));
    let layers = specs
        .iter()
        .map(|s| match *s {
            Spec::Conv { in_c, hw, out_c, k, s, p } => {
                let geom = conv_geom(in_c, hw, out_c, k, s, p);
                let a = (6.0 / geom.patch_len() as f64).sqrt();
                let weights = u.vec(geom.patch_len() * out_c, -a, a);
                Layer::Conv(Conv { geom, weights, bias: u.vec(out_c, -0.05, 0.05) })
            }
            Spec::Pool { c, hw, k, s } => Layer::MaxPool(pool_geom(c, hw, k, s)),
            Spec::Relu => Layer::Relu,
            Spec::Bn { c, inner } => {
                let (gamma, beta) = (u.vec(c, 0.5, 1.5), u.vec(c, -0.1, 0.1));
                let (mean, var) = (u.vec(c, -0.1, 0.1), u.vec(c, 0.5, 1.5));
                let scale: Vec<f64> =
                    gamma.iter().zip(&var).map(|(g, v)| g / (v + 1e-5).sqrt()).collect();
                let shift = scale.iter().zip(&beta).zip(&mean).map(|((s, b), m)| b - s * m);
                Layer::Affine(Affine { channels: c, inner, shift: shift.collect(), scale })
            }
            Spec::Fc { inputs, outputs } => {
                let a = (6.0 / inputs as f64).sqrt();
                let weights = u.vec(inputs * outputs, -a, a);
                Layer::Dense(Dense { inputs, outputs, weights, bias: u.vec(outputs, -0.05, 0.05) })
            }
        })
        .collect();
    Model {
        input_name: "x".into(),
        input_shape,
        layers,
        class_labels: None,
        dropped_transforms: Vec::new(),
        input_range: None,
    }
}

/// AlexNet with weights drawn from `seed`.
pub fn alexnet(seed: u64) -> Model {
    let (shape, specs) = alexnet_specs();
    build(shape, &specs, seed)
}

/// VGG16 with weights drawn from `seed` (37.7 M weights: about 300 MB as `f64`).
pub fn vgg16(seed: u64) -> Model {
    let (shape, specs) = vgg16_specs();
    build(shape, &specs, seed)
}

/// The network called `name` (`alexnet` or `vgg16`) with weights drawn from `seed`.
pub fn paper_model(name: &str, seed: u64) -> Option<Model> {
    specs(name).map(|(shape, specs)| build(shape, &specs, seed))
}

/// The public shape of the network called `name` with `frac_bits` fractional bits, as
/// [`super::FixedPlan::shape`] gives it for [`paper_model`], without making any weights.
pub fn paper_shape(name: &str, frac_bits: u32) -> Option<PlanShape> {
    let (input_shape, specs) = specs(name)?;
    let input_len: usize = input_shape.iter().product();
    let mut len = input_len;
    let steps = specs
        .iter()
        .map(|s| {
            let step = match *s {
                Spec::Conv { in_c, hw, out_c, k, s, p } => {
                    StepShape::Conv(conv_geom(in_c, hw, out_c, k, s, p))
                }
                Spec::Pool { c, hw, k, s } => StepShape::MaxPool(pool_geom(c, hw, k, s)),
                Spec::Relu => StepShape::Relu { len },
                // Evaluated as a depthwise 1x1 convolution (see `FixedPlan::new`).
                Spec::Bn { c, inner } => StepShape::Conv(ConvGeom {
                    in_c: c,
                    in_h: 1,
                    in_w: inner,
                    out_c: c,
                    kernel: [1, 1],
                    stride: [1, 1],
                    pads: [0; 4],
                    groups: c,
                }),
                Spec::Fc { inputs, outputs } => StepShape::Dense { inputs, outputs },
            };
            len = step.out_len();
            step
        })
        .collect();
    Some(PlanShape { frac_bits, input_len, steps, input_range: None })
}
