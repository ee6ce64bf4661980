//! placeholder main replaced below
fn main() {}
