//! `ringfence model inspect`: what a model file becomes before anyone serves it — its layers,
//! the fixed-point plan, and what one secure inference costs on each backend. A file the
//! importer cannot take is an error naming the op, attribute or shape.
//!
//! `ringfence model shape IN.onnx --out OUT.rfshape`: the model's shape file, without the
//! weights, for the servers that do not own the model ([`ringfence_core::nn::shape`]).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use ringfence_core::nn::{import_onnx_report, FixedPlan, ModelFile, Output, DEFAULT_FRAC_BITS};
use ringfence_core::ring::Z64;

/// `ringfence model ...`.
#[derive(Subcommand, Clone)]
pub(crate) enum ModelCmd {
    /// Print a model's layers, its fixed-point plan and the cost of one secure inference.
    Inspect(InspectArgs),
    /// Write a model's shape file: its layers, sizes and fixed-point parameters without any
    /// weight, what the servers other than the model owner (P1, P2) load.
    Shape(ShapeArgs),
}

/// Options of `ringfence model shape`.
#[derive(Args, Clone)]
pub(crate) struct ShapeArgs {
    /// The ONNX file, or one of the shipped model names (nn-a, lenet, ...).
    model: PathBuf,
    /// Where to write the shape file (conventionally NAME.rfshape).
    #[arg(long)]
    out: PathBuf,
    /// Leave the class labels out (when the labels themselves are not public).
    #[arg(long)]
    no_labels: bool,
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
    match cmd {
        ModelCmd::Inspect(a) => inspect(a),
        ModelCmd::Shape(a) => shape(a),
    }
}

fn shape(a: &ShapeArgs) -> Result<(), String> {
    let path = crate::bench::resolve_model(&a.model)?;
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut shape = match ModelFile::parse(&bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?
    {
        ModelFile::Weights { shape, .. } => shape,
        ModelFile::Shape(_) => {
            return Err(format!("{}: already a shape file (give the ONNX file)", path.display()))
        }
    };
    if a.no_labels {
        shape.class_labels = None;
    }
    let out = shape.encode();
    std::fs::write(&a.out, &out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let digest = ringfence_relay::hex(&shape.plan.digest());
    println!(
        "{}: the shape of {} ({} steps, {} bytes, no weights)\n  digest  {digest}\n  give it \
         to P1 and P2 (path = in their [[model]]); P0, the model owner, keeps the ONNX file",
        a.out.display(),
        path.display(),
        shape.plan.steps.len(),
        out.len()
    );
    Ok(())
}

fn inspect(a: &InspectArgs) -> Result<(), String> {
    let path = crate::bench::resolve_model(&a.model)?;
    let model = crate::bench::load_model(&path)?.model;
    let plan = FixedPlan::<Z64>::new(&model, DEFAULT_FRAC_BITS)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let shape = plan.shape();
    println!("{}", path.display());
    println!("  input   {:?} ({} values per sample)", model.input_shape, model.input_len());
    println!("  output  {} scores per sample", model.output_len());
    if let Some(labels) = &model.class_labels {
        // What a client is answered: the label of the class with the largest score.
        let names: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        let mut shown = names.iter().take(12).cloned().collect::<Vec<_>>().join(", ");
        if names.len() > 12 {
            shown += &format!(", … ({} in all)", names.len());
        }
        println!("  classes {shown}");
    }
    for (i, l) in model.summary().iter().enumerate() {
        println!("  layer {i:>2}  {l}");
    }
    if !model.dropped_transforms.is_empty() {
        println!(
            "  left out (monotone, argmax unchanged): {}",
            model.dropped_transforms.join(", ")
        );
    }
    // What the importer did with the nodes that built no layer (zoo networks have no file).
    if let Ok(bytes) = std::fs::read(&path) {
        let (_, report) =
            import_onnx_report(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        for (what, ops) in report.lines() {
            let why = match what {
                "folded" => "computed from constants and static shapes as the file is read",
                "labels" => "the class label's side branch: nothing built",
                "scores" => "computed from scores the model replaces by their votes: nothing built",
                "views" => "renames and reshapes: nothing built",
                _ => "into the layer before",
            };
            println!("  {what:<8}{ops} ({why})");
        }
    }
    if shape.is_integer() {
        println!(
            "  plan    Z_2^64, integer (int8 model): exact products, each requantization a clamp and \
             a secret multiplier truncated by {} bits; the input in {} fractional bits",
            shape.product_bits(),
            shape.frac_bits
        );
        println!("  meteor  runs fixed-point models only: it refuses this one");
    } else {
        println!(
            "  plan    Z_2^64, {} fractional bits (resolution {:.1e})",
            shape.frac_bits,
            2f64.powi(-(shape.frac_bits as i32))
        );
        let (bytes_online, rounds) = ringfence_core::meteor::online_cost(&shape, 64, a.batch);
        println!(
            "  meteor  online {bytes_online} B per party, {rounds} rounds (batch {}, cost model; input sharing and output reveal not included; a client's input adds its consistency check, 1 round and 64 B)",
            a.batch
        );
    }
    for (name, out) in [("scores", Output::Logits), ("class", Output::Argmax)] {
        let needs = shape.needs(a.batch, out);
        println!(
            "  rep3    ({name}) preprocessing: {} truncation pairs, {} daBits{}",
            needs.products,
            needs.bits,
            if needs.exact > 0 {
                format!(" ({} exact products need none)", needs.exact)
            } else {
                String::new()
            }
        );
    }
    print_comparisons(&shape, a.batch);
    Ok(())
}

/// rep3's online rounds with each way of comparing (`--comparisons` of `ringfence bench`), what
/// one comparison sends, and which way is fastest on a few networks.
fn print_comparisons(shape: &ringfence_core::nn::PlanShape, batch: usize) {
    use ringfence_core::bin3::{FanIn, Roles};
    use ringfence_core::rep3::{online_rounds, Comparisons};
    let choices = [
        Comparisons::TwoInput,
        Comparisons::FanIn(FanIn::default()),
        Comparisons::FanIn(FanIn::new(Roles::default(), 8, 8).expect("in range")),
    ];
    println!(
        "  rep3    online rounds (class / scores) and bits one 64-bit comparison sends per value:"
    );
    for c in choices {
        let cost = c.msb_cost(64);
        let who = match c {
            Comparisons::TwoInput => "P0/P1/P2",
            Comparisons::FanIn(_) => "seats P1/P2/P3",
        };
        println!(
            "          {:<12} {:>4} / {:<4} {} rounds per comparison, {}/{}/{} bits ({who})",
            c.to_string(),
            online_rounds(shape, Output::Argmax, 64, c),
            online_rounds(shape, Output::Logits, 64, c),
            cost.rounds,
            cost.bits[0],
            cost.bits[1],
            cost.bits[2],
        );
    }
    // The fastest for this model's comparison layers at --batch, on typical links.
    for output in [Output::Argmax, Output::Logits] {
        let runs = ringfence_core::rep3::comparison_runs(shape, output, batch);
        let name = if output == Output::Argmax { "class" } else { "scores" };
        let best: Vec<String> = [
            ("LAN 0.5 ms, 1 Gbit/s", 0.5, 1000.0),
            ("WAN 70 ms, 320 Mbit/s", 70.0, 320.0),
            ("WAN 100 ms, 160 Mbit/s", 100.0, 160.0),
        ]
        .into_iter()
        .map(|(net, rtt_ms, mbit)| {
            let c = Comparisons::for_network(
                64,
                &runs,
                rtt_ms / 1e3,
                mbit * 1e6 / 8.0,
                Roles::default(),
            );
            format!("{c} on {net}")
        })
        .collect();
        println!("          fastest ({name}, batch {batch}): {}", best.join("; "));
    }
}
