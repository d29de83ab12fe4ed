//! Parser benchmark (filled in with the parser).
fn main() {}
