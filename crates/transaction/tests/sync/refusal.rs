//! refusal
