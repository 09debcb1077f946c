//! Circuit-to-circuit passes.
