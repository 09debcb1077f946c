//! `ringfence model inspect`: what a model file becomes before anyone serves it — its layers,
//! the fixed-point plan, and what one secure inference costs on each backend. A file the
//! importer cannot take is an error naming the op, attribute or shape.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use ringfence_core::nn::{self, FixedPlan, Output, DEFAULT_FRAC_BITS};
use ringfence_core::ring::Z64;

/// `ringfence model ...`.
#[derive(Subcommand, Clone)]
pub(crate) enum ModelCmd {
    /// Print a model's layers, its fixed-point plan and the cost of one secure inference.
    Inspect(InspectArgs),
}

/// Options of `ringfence model inspect`.
#[derive(Args, Clone)]
pub(crate) struct InspectArgs {
    /// An ONNX file, or one of the shipped model names (nn-a, lenet, ...).
    model: PathBuf,
    /// Samples per inference for the cost figures.
    #[arg(long, default_value_t = 1)]
    batch: usize,
}

/// Runs `ringfence model ...`.
pub(crate) fn run(cmd: &ModelCmd) -> Result<(), String> {
    let ModelCmd::Inspect(a) = cmd;
    let path = crate::bench::resolve_model(&a.model)?;
    let model = crate::bench::load_model(&path)?.model;
    let plan = FixedPlan::<Z64>::new(&model, DEFAULT_FRAC_BITS)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let shape = plan.shape();
    println!("{}", path.display());
    println!("  input   {:?} ({} values per sample)", model.input_shape, model.input_len());
    println!("  output  {} scores per sample", model.output_len());
    for (i, l) in model.summary().iter().enumerate() {
        println!("  layer {i:>2}  {l}");
    }
    if !model.dropped_transforms.is_empty() {
        println!(
            "  left out (monotone, argmax unchanged): {}",
            model.dropped_transforms.join(", ")
        );
    }
    println!(
        "  plan    Z_2^64, {} fractional bits (resolution {:.1e})",
        shape.frac_bits,
        2f64.powi(-(shape.frac_bits as i32))
    );
    let (bytes_online, rounds) = nn::meteor::online_cost(&shape, 64, a.batch);
    println!(
        "  meteor  online {bytes_online} B per party, {rounds} rounds (batch {}, cost model; input sharing and output reveal not included)",
        a.batch
    );
    for (name, out) in [("scores", Output::Logits), ("class", Output::Argmax)] {
        let needs = shape.needs(a.batch, out);
        println!(
            "  rep3    ({name}) preprocessing: {} truncation pairs, {} daBits",
            needs.trunc_pairs, needs.dabits
        );
    }
    Ok(())
}
