//! Circuit generators.
