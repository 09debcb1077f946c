//! Helpers shared by the integration tests (each test crate uses what it needs).

/// The numbers of the JSON array that follows `"key": [` in a reference file written by
/// `scripts/models/reference.py` (nested rows flattened), without a JSON dependency.
#[allow(dead_code)]
pub(crate) fn json_numbers(doc: &str, key: &str) -> Vec<f64> {
    let start = doc.find(&format!("\"{key}\": [")).expect("key") + key.len() + 5;
    let mut depth = 0;
    let mut end = start;
    for (i, c) in doc[start..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' if depth == 0 => {
                end = start + i;
                break;
            }
            ']' => depth -= 1,
            _ => {}
        }
    }
    doc[start..end]
        .split(|c: char| c == ',' || c == '[' || c == ']' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().expect("number"))
        .collect()
}
