//! Deterministic in-memory multi-party harness (placeholder, filled below).
