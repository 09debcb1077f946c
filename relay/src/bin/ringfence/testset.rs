//! A shipped model's held-out test set and what the plaintext model answers on it: the
//! reference file `models/data/NAME.reference.json` (written by `scripts/models/reference.py`
//! with onnxruntime) names the input file, its scale and the reference runtime's argmax per
//! sample. The demo classifies one of these samples; the bench measures agreement on a batch.

use std::path::Path;

/// Where the reference file of the model at `model` is: `models/data/NAME.reference.json`.
fn reference(model: &Path) -> std::path::PathBuf {
    let stem = model.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = model.parent().unwrap_or(Path::new("."));
    dir.join("data").join(format!("{stem}.reference.json"))
}

/// The test samples of one model and the reference runtime's classes.
pub(crate) struct TestSet {
    bytes: Vec<u8>,
    len: usize,
    scale: f64,
    argmax: Vec<usize>,
    /// The reference runtime, e.g. "onnxruntime 1.23.2".
    pub(crate) runtime: String,
}

impl TestSet {
    /// The test set of the model at `model` (`models/NAME.onnx`), or an error saying what is
    /// missing.
    pub(crate) fn for_model(model: &Path) -> Result<Self, String> {
        Self::if_any(model)?.ok_or_else(|| {
            format!(
                "{}: not found (no reference outputs for this model)",
                reference(model).display()
            )
        })
    }

    /// The test set of the model at `model` when it has a reference file (`None` when it has
    /// none); an error when the reference file or its samples cannot be read, so that a run is
    /// never made on other inputs than the ones given.
    pub(crate) fn if_any(model: &Path) -> Result<Option<Self>, String> {
        let dir = model.parent().unwrap_or(Path::new("."));
        let ref_path = reference(model);
        let text = match std::fs::read_to_string(&ref_path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", ref_path.display())),
        };
        let at = |e: String| format!("{}: {e}", ref_path.display());
        let r: serde_json::Value = serde_json::from_str(&text).map_err(|e| at(e.to_string()))?;
        let field = |k: &str| r.get(k).ok_or_else(|| at(format!("no {k:?}")));
        let inputs =
            field("inputs")?.as_str().ok_or_else(|| at("inputs is not a string".into()))?;
        // Paths in the reference file are relative to the repository (the models folder's parent).
        let file = dir.parent().unwrap_or(Path::new(".")).join(inputs);
        let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let argmax = field("argmax")?
            .as_array()
            .ok_or_else(|| at("argmax is not an array".into()))?
            .iter()
            .map(|v| {
                v.as_u64()
                    .map(|c| c as usize)
                    .ok_or_else(|| at("argmax entry is not a class".into()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let count = argmax.len();
        if count == 0 || bytes.len() % count != 0 {
            return Err(format!("{}: not {count} equal samples", file.display()));
        }
        let scale = match field("input_scale")?.as_str() {
            Some("1/255") => 1.0 / 255.0,
            Some("1") => 1.0,
            other => return Err(at(format!("input_scale {other:?}"))),
        };
        let runtime = field("runtime")?.as_str().unwrap_or("the reference runtime").to_string();
        Ok(Some(Self { len: bytes.len() / count, bytes, scale, argmax, runtime }))
    }

    /// Number of samples.
    pub(crate) fn count(&self) -> usize {
        self.argmax.len()
    }

    /// Values per sample.
    pub(crate) fn sample_len(&self) -> usize {
        self.len
    }

    /// Samples `start..start + n` (wrapping around the set), as the model's input values.
    pub(crate) fn samples(&self, start: usize, n: usize) -> Vec<f64> {
        (start..start + n)
            .flat_map(|k| {
                let k = k % self.count();
                self.bytes[k * self.len..(k + 1) * self.len]
                    .iter()
                    .map(|&b| f64::from(b) * self.scale)
            })
            .collect()
    }

    /// The reference classes of samples `start..start + n` (wrapping like [`TestSet::samples`]).
    pub(crate) fn expected(&self, start: usize, n: usize) -> Vec<usize> {
        (start..start + n).map(|k| self.argmax[k % self.count()]).collect()
    }
}
