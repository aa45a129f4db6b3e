// The migration guide: the repository's docs/MIGRATION.md, which a link in
// this crate's directory carries into the package. Its Rust examples are doc
// tests and one needs the `mock` feature: without it the guide is left out
// of the doc tests, never out of the docs.
#![cfg_attr(
    any(not(doctest), feature = "mock"),
    doc = include_str!("../MIGRATION.md")
)]
