//! interleave
