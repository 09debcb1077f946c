//! The session's messages: the client's [`Request`], the parties' [`ModelInfo`] (or refusal),
//! and how both travel as control words ([`Z64`] elements in ordinary checked frames).

use super::Backend;
use crate::nn::{
    ClassLabels, InputRange, Label, Output, MAX_LABELS, MAX_LABELS_TEXT, MAX_LABEL_BYTES,
};
use crate::ring::Z64;
use crate::Error;

/// Longest model name, in bytes.
pub const MAX_NAME: usize = 32;
/// Version of the session's messages; a request of another version is refused with a reason
/// that names both. 2: the parties check a client's input for consistency (one more round) and
/// limit what a client may send (`service/limits.rs`); a version-1 client or server would fail
/// mid-session on the extra round instead. 3: the model owner's description of the model
/// carries its class labels (a sixth word sizes their frame, which follows).
pub const VERSION: u8 = 3;

/// Most scores per sample of a served model (the class labels' bound, [`MAX_LABELS`]; as
/// onnxruntime's classifiers, which take at most 65,535 classes). A client refuses a description
/// with more, before it reserves room for a result; a party refuses to load such a model.
pub const MAX_SCORES: usize = MAX_LABELS;

pub(super) const MAGIC: u64 = 0x5246_434c; // "RFCL"
pub(super) const REQUEST_WORDS: usize = 2 + MAX_NAME / 8;
pub(super) const INFO_WORDS: usize = 6;
/// Longest refusal text, in words.
pub(super) const MAX_REASON_WORDS: usize = 32;

fn output_code(o: Output) -> u64 {
    match o {
        Output::Argmax => 2,
        _ => 1,
    }
}

/// What a client asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// A model name the parties serve (at most [`MAX_NAME`] bytes).
    pub model: String,
    /// The protocol family.
    pub backend: Backend,
    /// What the client receives: the scores, or only the class (rep3 and mal3).
    pub output: Output,
    /// Samples in this request.
    pub batch: usize,
}

impl Request {
    /// A request for the scores of `batch` samples (the most common one).
    pub fn new(model: &str, backend: Backend, batch: usize) -> Self {
        Self { model: model.into(), backend, output: Output::Logits, batch }
    }

    /// Checks what can be checked without the parties: the model name's form.
    pub fn validate(&self) -> Result<(), Error> {
        let name = self.model.as_bytes();
        if name.is_empty() || name.len() > MAX_NAME || name.contains(&0) {
            return Err(Error::ApiMisuse(format!(
                "model name {:?}: 1 to {MAX_NAME} bytes, no NUL",
                self.model
            )));
        }
        Ok(())
    }

    pub(super) fn encode(&self) -> Result<Vec<Z64>, Error> {
        self.validate()?;
        let name = self.model.as_bytes();
        let head = MAGIC << 32
            | u64::from(VERSION) << 24
            | self.backend.code() << 16
            | output_code(self.output) << 8;
        let mut w = vec![Z64(head), Z64(self.batch as u64)];
        let mut padded = [0u8; MAX_NAME];
        padded[..name.len()].copy_from_slice(name);
        w.extend(padded.chunks(8).map(|c| Z64(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))));
        Ok(w)
    }

    /// Decodes a request; `Err` is the refusal reason.
    pub(super) fn decode(w: &[Z64]) -> Result<Self, String> {
        let head = w[0].0;
        if head >> 32 != MAGIC {
            return Err("not a classification request".into());
        }
        if (head >> 24) as u8 != VERSION {
            return Err(format!(
                "request version {} is not the served version {VERSION}",
                (head >> 24) as u8
            ));
        }
        let backend = Backend::from_code((head >> 16) & 0xff)
            .ok_or_else(|| format!("unknown backend code {}", (head >> 16) & 0xff))?;
        let output = match (head >> 8) & 0xff {
            1 => Output::Logits,
            2 => Output::Argmax,
            c => return Err(format!("unknown output code {c}")),
        };
        let bytes: Vec<u8> = w[2..].iter().flat_map(|z| z.0.to_le_bytes()).collect();
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        let model = core::str::from_utf8(&bytes[..end])
            .map_err(|_| "model name is not UTF-8".to_string())?
            .to_string();
        let batch = usize::try_from(w[1].0).map_err(|_| "batch too large".to_string())?;
        Ok(Self { model, backend, output, batch })
    }
}

/// What the parties tell the client about the requested model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// Values per input sample.
    pub input_len: usize,
    /// Scores per sample (classes).
    pub output_len: usize,
    /// Fractional bits of the fixed-point encoding.
    pub frac_bits: u32,
    /// Samples in the accepted request.
    pub batch: usize,
    /// The input range the model was trained on, when its file says (see
    /// [`crate::nn::Model::input_range`]); the client refuses input outside it.
    pub input_range: Option<InputRange>,
    /// The model's label of each class, in score order, when its file names them (ONNX-ML's
    /// `classlabels_*`: scikit-learn's `classes_`). Only the model owner
    /// ([`MODEL_OWNER`](super::MODEL_OWNER)) tells them: it holds the model itself, the other
    /// servers may hold a shape file without them.
    pub class_labels: Option<ClassLabels>,
    pub(super) backend: Backend,
    pub(super) output: Output,
}

impl ModelInfo {
    /// The description's frames: [`INFO_WORDS`] words, then the labels (if any) in a frame
    /// of their own.
    pub(super) fn encode(&self) -> Vec<Vec<Z64>> {
        let head = MAGIC << 32 | u64::from(VERSION) << 24;
        let range = self.input_range.map_or(0, InputRange::to_bits);
        let labels = self.class_labels.as_ref().map(encode_labels);
        // Word 4: the input range (0: none), where a refusal has its reason's length; word 5:
        // the length of the labels' frame (0: no labels).
        let info = [
            head,
            self.input_len as u64,
            self.output_len as u64,
            u64::from(self.frac_bits),
            range,
            labels.as_ref().map_or(0, Vec::len) as u64,
        ];
        [Some(info.map(Z64).to_vec()), labels].into_iter().flatten().collect()
    }

    /// The label of class `index` of this model: its own, or the index itself when the model
    /// names none.
    pub fn label(&self, index: usize) -> Label {
        Label::of(self.class_labels.as_ref(), index)
    }

    /// The values the client receives back: all scores, or one class per sample.
    pub(super) fn result_len(&self) -> usize {
        match self.output {
            Output::Argmax => self.batch,
            _ => self.batch * self.output_len,
        }
    }
}

/// The labels' frame: a kind word (1: integers, 2: text), then one word per integer label, or
/// one length word per text label and their UTF-8 bytes, packed and zero-padded.
fn encode_labels(labels: &ClassLabels) -> Vec<Z64> {
    match labels {
        ClassLabels::Ints(v) => {
            core::iter::once(Z64(1)).chain(v.iter().map(|&l| Z64(l as u64))).collect()
        }
        ClassLabels::Strings(v) => {
            let bytes: Vec<u8> = v.iter().flat_map(|t| t.bytes()).collect();
            let lengths = v.iter().map(|t| Z64(t.len() as u64));
            core::iter::once(Z64(2)).chain(lengths).chain(pack(&bytes)).collect()
        }
    }
}

/// The most words a labels' frame for `classes` classes may take (none past
/// [`MAX_LABELS`]): a client allocates no more for it than the bounds of
/// [`ClassLabels::check`] allow.
pub(super) fn max_label_words(classes: usize) -> usize {
    if classes > MAX_LABELS {
        return 0;
    }
    1 + classes + MAX_LABELS_TEXT.min(classes * MAX_LABEL_BYTES).div_ceil(8)
}

/// Decodes a labels' frame naming `classes` classes; `Err` says what is wrong.
pub(super) fn decode_labels(w: &[Z64], classes: usize) -> Result<ClassLabels, &'static str> {
    let body = &w[1.min(w.len())..];
    match w.first().map(|z| z.0) {
        Some(1) if body.len() == classes => {
            Ok(ClassLabels::Ints(body.iter().map(|z| z.0 as i64).collect()))
        }
        Some(2) if body.len() >= classes => {
            let (lengths, packed) = body.split_at(classes);
            let lengths: Vec<usize> = lengths
                .iter()
                .map(|z| usize::try_from(z.0).ok().filter(|l| (1..=MAX_LABEL_BYTES).contains(l)))
                .collect::<Option<_>>()
                .ok_or("a class label's length is out of range")?;
            let total: usize = lengths.iter().sum();
            if total.div_ceil(8) != packed.len() {
                return Err("class labels of another length than their frame");
            }
            let bytes: Vec<u8> = packed.iter().flat_map(|z| z.0.to_le_bytes()).collect();
            if bytes[total..].iter().any(|&b| b != 0) {
                return Err("class labels of another length than their frame");
            }
            let mut at = 0;
            let texts = lengths
                .iter()
                .map(|&l| {
                    at += l;
                    String::from_utf8(bytes[at - l..at].to_vec()).ok()
                })
                .collect::<Option<_>>()
                .ok_or("a class label is not UTF-8")?;
            let labels = ClassLabels::Strings(texts);
            labels.check().map_err(|_| "class labels beyond their bounds")?;
            Ok(labels)
        }
        _ => Err("class labels that do not name every score"),
    }
}

pub(super) fn encode_text(s: &str) -> Vec<Z64> {
    let b = s.as_bytes();
    pack(&b[..b.len().min(MAX_REASON_WORDS * 8)]).collect()
}

/// Bytes as little-endian words, the last one zero-padded.
fn pack(bytes: &[u8]) -> impl Iterator<Item = Z64> + '_ {
    bytes.chunks(8).map(|c| {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        Z64(u64::from_le_bytes(w))
    })
}

pub(super) fn decode_text(w: &[Z64]) -> String {
    let b: Vec<u8> = w.iter().flat_map(|z| z.0.to_le_bytes()).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&b).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_frames_round_trip_and_a_forged_one_is_refused() {
        let texts = ClassLabels::Strings(vec!["a".into(), "ünïcode".into(), "🖐".repeat(64)]);
        for labels in [ClassLabels::Ints(vec![i64::MIN, 0, i64::MAX]), texts.clone()] {
            let w = encode_labels(&labels);
            assert!(w.len() <= max_label_words(3));
            assert_eq!(decode_labels(&w, 3), Ok(labels.clone()));
            assert!(decode_labels(&w, 2).is_err() && decode_labels(&w[..w.len() - 1], 3).is_err());
        }
        let mut w = encode_labels(&texts);
        let last = w.len() - 1;
        w[last].0 |= 1 << 63; // a byte in the padding
        assert_eq!(decode_labels(&w, 3), Err("class labels of another length than their frame"));
        let mut w = encode_labels(&ClassLabels::Strings(vec!["ab".into()]));
        w[2].0 = 0xff; // "a" → 0xff: not UTF-8
        assert_eq!(decode_labels(&w, 1), Err("a class label is not UTF-8"));
        assert!(decode_labels(&[], 0).is_err());
        // A client allocates what the description says a labels' frame holds: bounded by the
        // labels' own bounds (a fuzzed description of 2^28 scores asked for 34 GB).
        assert_eq!(max_label_words(MAX_LABELS + 1), 0);
        assert!(max_label_words(MAX_LABELS) * 8 <= 2 << 20);
        assert_eq!(max_label_words(3), 1 + 3 + 96);
    }

    #[test]
    fn a_request_of_another_version_is_refused_naming_both() {
        let words = Request::new("lenet", Backend::Meteor, 1).encode().unwrap();
        assert_eq!(Request::decode(&words), Ok(Request::new("lenet", Backend::Meteor, 1)));
        let mut old = words.clone();
        old[0] = Z64(old[0].0 & !(0xff << 24) | 1 << 24);
        let reason = Request::decode(&old).unwrap_err();
        assert_eq!(reason, format!("request version 1 is not the served version {VERSION}"));
    }
}
