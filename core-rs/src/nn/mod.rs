//! `nn`: models, ONNX import, fixed-point plans and secure inference.
//!
//! ```text
//!  ONNX bytes ──import_onnx──▶ Model ──FixedPlan::new──▶ FixedPlan<R> ──shape()──▶ PlanShape
//!                               │ eval_f64                 │ eval_plain (reference)     │ public
//!                               ▼                          ▼                            ▼
//!                           float scores           fixed-point scores   Inference: share_model /
//!                                                                       preprocess / infer
//! ```
//!
//! * [`import_onnx`] decodes the protobuf itself (no protoc, no I/O: the caller passes the
//!   bytes) and maps a chain of supported ops to a [`Model`]; see [`import`] for the op list.
//!   Malformed bytes are [`NnError::Malformed`], unsupported ops, attributes and shapes
//!   [`NnError::Unsupported`] or [`NnError::Shape`], each naming what failed; never a panic.
//! * [`FixedPlan`] encodes the weights with `f` fractional bits ([`plan`] documents the
//!   error); [`FixedPlan::eval_plain`] is the plaintext fixed-point reference.
//! * [`exec`] runs the plan on any scheme that implements [`Inference`] (`rep3` with explicit,
//!   single-use preprocessing; METEOR with a separate, function-dependent setup phase): one
//!   walk over the layers, the schemes supplying only the interactive parts.
//! * [`shape`] writes and reads a model's public shape without its weights (`.rfshape`), what
//!   the servers other than the model owner load.
//! * [`trees`] holds tree ensembles and their oblivious evaluation's shared bookkeeping; [`zoo`] builds the paper's
//!   CIFAR-10 networks (AlexNet, VGG16) with random weights in memory.

pub mod exec;
pub mod geom;
pub mod import;
mod model;
pub mod plan;
mod proto;
mod quant;
mod register;
pub mod shape;
pub mod spline;
pub mod trees;
pub mod uniform;
pub mod zoo;

pub use exec::{Inference, SharedModel};
pub use geom::{ConvGeom, PoolGeom};
pub use import::{import_onnx, import_onnx_report, ImportReport};
pub use model::{
    argmax_rows, Affine, ClassLabels, Conv, Dense, InputRange, Label, Layer, Model, Register,
    Requant, Spline, INPUT_RANGE_KEY, MAX_LABELS, MAX_LABELS_TEXT, MAX_LABEL_BYTES,
};
pub use plan::{FixedPlan, Output, PlanShape, PrepNeeds, StepShape, DEFAULT_FRAC_BITS};
pub use shape::{ModelFile, ModelShape};
pub use uniform::UniformPrep;

use crate::Error;

/// Errors of model import and planning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NnError {
    /// The bytes are not a well-formed ONNX protobuf (or are inconsistent, e.g. a tensor whose
    /// data does not match its dims).
    #[error("malformed ONNX: {0}")]
    Malformed(String),
    /// A well-formed model uses an op, attribute, data type or structure not supported here.
    #[error("unsupported ONNX: {0}")]
    Unsupported(String),
    /// Shapes do not fit (model input versus data, layer widths, values out of range).
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// A shape file ([`shape`]) that is damaged, of another version, or describes no plan.
    #[error("malformed shape file: {0}")]
    ShapeFile(String),
    /// A model file this server may not serve as given (e.g. weights at a server that does not
    /// own the model); the message says why and what to do.
    #[error("{0}")]
    NotServable(String),
    /// A core error (e.g. a value out of the fixed-point range).
    #[error(transparent)]
    Core(#[from] Error),
}
