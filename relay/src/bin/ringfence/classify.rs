//! `ringfence classify`: the user's own model on the user's own input, privately, on an
//! embedded local deployment (the demo's: a relay and the server parties on 127.0.0.1). The
//! input file holds one or more samples of real values: a JSON array (one sample) or array of
//! arrays, a `.npy` array (float32/float64/integers, C order, first axis the samples when it
//! has more than one), or CSV rows (one sample per row; a header row is skipped). Every sample
//! is classified in one private run, and each answer is set beside the plaintext model's
//! (this process has the model file, so it can say whether the private answer is the same).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use ringfence_core::nn::{argmax_rows, import_onnx, Label, Model, Output};
use ringfence_core::service::Request;

use crate::bench::{self, Backend};
use crate::local::LocalDeployment;
use ringfence_relay::config::party::DEFAULT_MAX_BATCH;

/// Options of `ringfence classify`.
#[derive(Args, Clone)]
pub(crate) struct ClassifyArgs {
    /// The model: an ONNX file (or a shipped model's name).
    #[arg(long)]
    model: PathBuf,
    /// The input: `.json` (an array of numbers, or of arrays), `.npy` or `.csv` (one sample
    /// per row), each sample as many values as the model's input takes.
    #[arg(long)]
    input: PathBuf,
    /// Protocol family (default: rep3 with 3 parties, rss with 5 or 7, spdz2k with 1 or 2).
    #[arg(long, value_parser = bench::backend_arg())]
    backend: Option<Backend>,
    /// The deployment's size: 3 server parties, 5 or 7 (rss), or 1 or 2 (spdz2k).
    #[arg(long, value_name = "N", default_value_t = 3)]
    parties: usize,
    /// Ask for the scores too (every backend can give them; by default the schemes that can
    /// reveal the class alone give only the class).
    #[arg(long)]
    scores: bool,
    /// Print one JSON object per sample instead of a table.
    #[arg(long)]
    json: bool,
    /// How long to wait for a silent party.
    #[arg(long, default_value_t = 30_000)]
    timeout_ms: u64,
}

/// At most this many samples in one run (each is one row of every layer's matrices).
const MAX_SAMPLES: usize = 4096;

/// Runs `ringfence classify`.
pub(crate) fn parent(a: &ClassifyArgs) -> Result<(), String> {
    let path = bench::resolve_model(&a.model)?;
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let model = import_onnx(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let samples = read_samples(&a.input, &model)?;
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let layout = crate::local::servers(a.parties)?;
    // rep3 by default with three servers: it reveals the class alone.
    let chosen = a.backend.or((layout.servers() == 3).then_some(Backend::Rep3));
    let backend = crate::local::client_backend(layout, chosen)?;
    let output = if a.scores || !backend.reveals_class() { Output::Logits } else { Output::Argmax };
    let batch = samples.len() / model.input_len();
    let servers = match layout.servers() {
        1 => "1 server party".to_string(),
        n => format!("{n} server parties"),
    };
    eprintln!(
        "ringfence classify: {batch} sample(s) of {} on a local deployment ({servers}, {} backend)",
        a.input.display(),
        backend.name()
    );
    let rt = crate::runtime(2)?;
    let listen = "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?;
    let models = [(name.clone(), path.clone())];
    let wait = Duration::from_millis(a.timeout_ms);
    let started = Instant::now();
    eprintln!("  starting the relay and the server parties on 127.0.0.1 ...");
    let mut d = LocalDeployment::start(&rt, listen, None, layout, &models, 1, true)?;
    // The local parties take runs of at most their default batch: one session per run.
    let len = model.input_len();
    let runs = batch.div_ceil(DEFAULT_MAX_BATCH);
    let mut got = crate::demo::Answer::default();
    for (r, run) in samples.chunks(DEFAULT_MAX_BATCH * len).enumerate() {
        let what = if runs > 1 { format!("run {} of {runs}: ", r + 1) } else { String::new() };
        eprintln!("  classifying privately ({what}setup, then the online phase) ...");
        let cfg = d.client_link(wait)?;
        let mut request = Request::new(&name, backend, run.len() / len);
        request.output = output;
        let (part, timeline) = rt.block_on(crate::demo::classify(cfg, request, run, started))?;
        crate::demo::party_reports(&mut d, layout.servers(), wait)?;
        for (stage, t) in &timeline {
            eprintln!("  {stage:<24} {:>8.1} ms", t * 1e3);
        }
        got.classes.extend(part.classes);
        got.labels.extend(part.labels);
        got.scores.extend(part.scores);
    }
    drop(d);
    let plain = model.eval_f64(&samples, batch).map_err(|e| e.to_string())?;
    let plain = argmax_rows(&plain, model.output_len());
    // The private answer's label is the one the model owner told the client; the plaintext
    // model's comes from the file.
    let label = |c: usize| Label::of(model.class_labels.as_ref(), c);
    // JSON keeps a label's type: a number, or a string.
    let json = |l: &Label| match l {
        Label::Int(v) => serde_json::json!(v),
        Label::Text(t) => serde_json::json!(t),
    };
    let classes = model.output_len();
    let mut differ = 0;
    for (i, ((&c, &p), got_label)) in got.classes.iter().zip(&plain).zip(&got.labels).enumerate() {
        differ += usize::from(c != p);
        let scores = got.scores.get(i * classes..(i + 1) * classes).unwrap_or_default();
        if a.json {
            let line = serde_json::json!({
                "sample": i, "class": json(got_label), "index": c, "scores": scores,
                "plaintext_class": json(&label(p)),
            });
            println!("{line}");
        } else {
            let s = scores.iter().map(|v| format!("{v:.3}")).collect::<Vec<_>>().join(" ");
            let same = if c == p {
                String::new()
            } else {
                format!("  (the plaintext model says {})", label(p))
            };
            let s = if s.is_empty() { s } else { format!("  scores {s}") };
            println!("sample {i}: class {got_label}{s}{same}");
        }
    }
    if differ > 0 {
        eprintln!(
            "  {differ} of {batch} private answers differ from the plaintext model's (fixed-point \
             rounding on a near tie, or a probabilistic truncation failure; see README)"
        );
    } else {
        eprintln!("  every private answer equals the plaintext model's");
    }
    Ok(())
}

/// The samples of `file` for `model`, row-major, each checked: as many values as the model's
/// input takes, all finite.
fn read_samples(file: &Path, model: &Model) -> Result<Vec<f64>, String> {
    let at = |e: String| format!("{}: {e}", file.display());
    let bytes = std::fs::read(file).map_err(|e| at(e.to_string()))?;
    let ext = file.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    let rows = match ext.as_deref() {
        Some("json") => json_rows(&bytes),
        Some("npy") => npy_rows(&bytes, model.input_len()),
        Some("csv") => csv_rows(&bytes),
        _ => Err("the input file must end in .json, .npy or .csv".into()),
    }
    .map_err(at)?;
    let len = model.input_len();
    if rows.is_empty() {
        return Err(at("no sample".into()));
    }
    if rows.len() > MAX_SAMPLES {
        return Err(at(format!("{} samples (at most {MAX_SAMPLES} in one run)", rows.len())));
    }
    for (i, r) in rows.iter().enumerate() {
        if r.len() != len {
            return Err(at(format!(
                "sample {i} has {} values; the model takes {len} per sample (input shape {:?})",
                r.len(),
                model.input_shape
            )));
        }
        if let Some(j) = r.iter().position(|v| !v.is_finite()) {
            return Err(at(format!("sample {i}, value {j} is {} (numbers only)", r[j])));
        }
    }
    Ok(rows.concat())
}

/// A JSON array of numbers (one sample) or of arrays of numbers (nested arrays are flattened
/// row-major within a sample).
fn json_rows(bytes: &[u8]) -> Result<Vec<Vec<f64>>, String> {
    let v: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    fn flat(v: &serde_json::Value, out: &mut Vec<f64>) -> Result<(), String> {
        match v {
            serde_json::Value::Number(n) => out.push(n.as_f64().ok_or("a number out of range")?),
            serde_json::Value::Array(a) => a.iter().try_for_each(|x| flat(x, out))?,
            other => return Err(format!("{other} is not a number")),
        }
        Ok(())
    }
    let top = v.as_array().ok_or("expected a JSON array")?;
    if top.iter().all(serde_json::Value::is_number) {
        let mut row = Vec::new();
        flat(&v, &mut row)?;
        return Ok(vec![row]);
    }
    top.iter()
        .map(|s| {
            let mut row = Vec::new();
            flat(s, &mut row).map(|()| row)
        })
        .collect()
}

/// CSV rows of numbers; a first row that is not numbers is a header.
fn csv_rows(bytes: &[u8]) -> Result<Vec<Vec<f64>>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8 text")?;
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let row: Result<Vec<f64>, _> = line.split(',').map(|c| c.trim().parse::<f64>()).collect();
        match row {
            Ok(r) => rows.push(r),
            Err(_) if i == 0 => {} // a header
            Err(e) => return Err(format!("line {}: {e}", i + 1)),
        }
    }
    Ok(rows)
}

/// A `.npy` array (format 1.0–3.0, little-endian f4/f8/i1/u1/i4/i8, C order): its first axis
/// is the samples unless the whole array is one sample of `len` values.
fn npy_rows(bytes: &[u8], len: usize) -> Result<Vec<Vec<f64>>, String> {
    if !bytes.starts_with(b"\x93NUMPY") || bytes.len() < 10 {
        return Err("not a .npy file".into());
    }
    let (header_len, start) = match bytes[6] {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10usize),
        2 | 3 if bytes.len() >= 12 => {
            (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
        }
        v => return Err(format!(".npy format version {v}")),
    };
    let header = bytes
        .get(start..start.saturating_add(header_len))
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or("the .npy header is cut short")?;
    let field = |key: &str| {
        let at = header.find(&format!("'{key}':")).ok_or(format!("no {key} in the .npy header"))?;
        Ok::<_, String>(header[at + key.len() + 3..].trim_start())
    };
    let descr = field("descr")?;
    let descr = descr.get(1..).and_then(|d| d.split('\'').next()).unwrap_or_default();
    if field("fortran_order")?.starts_with("True") {
        return Err("a Fortran-order array (save it with numpy's default C order)".into());
    }
    let shape = field("shape")?;
    let shape = &shape[1..shape.find(')').ok_or("a .npy shape without ')'")?];
    let dims: Vec<usize> = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("shape entry {s:?}")))
        .collect::<Result<_, _>>()?;
    let body = &bytes[start + header_len..];
    let (size, read): (usize, fn(&[u8]) -> f64) = match descr {
        "<f4" => (4, |b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        "<f8" => (8, |b| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]))),
        "|u1" => (1, |b| f64::from(b[0])),
        "|i1" => (1, |b| f64::from(b[0] as i8)),
        "<i4" => (4, |b| f64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        "<i8" => (8, |b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as f64),
        d => return Err(format!("element type {d:?} (float32/64 or integers, little-endian)")),
    };
    let count: usize = dims.iter().product();
    if body.len() != count * size {
        return Err(format!("{} bytes of data for shape {dims:?}", body.len()));
    }
    let values: Vec<f64> = body.chunks_exact(size).map(read).collect();
    let per = if count == len { len } else { dims.iter().skip(1).product::<usize>().max(1) };
    Ok(values.chunks(per).map(<[f64]>::to_vec).collect())
}
