//! Native runtime for ringfence parties (filled by the native runtime work).
