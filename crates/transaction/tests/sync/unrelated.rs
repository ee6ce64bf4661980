//! unrelated
