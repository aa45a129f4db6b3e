//! What the published crate shows a user: its README and migration guide
//! (packaged in the crate, rendered on crates.io and docs.rs, where a link
//! relative to the repository's root resolves under the crate's folder and
//! breaks), and its features as `cargo add` lists them. `make
//! test-package` runs these on the unpacked `.crate` too.

use std::path::Path;

/// Every link target in Markdown text: `[text](target)`, `[name]: target`
/// and `href="target"`.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("](") {
        let rest = &text[i + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].trim().to_string());
        }
    }
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix('[') {
            if let Some((_, target)) = rest.split_once("]: ") {
                out.push(target.trim().to_string());
            }
        }
    }
    for (i, _) in text.match_indices("href=\"") {
        let rest = &text[i + 6..];
        if let Some(end) = rest.find('"') {
            out.push(rest[..end].to_string());
        }
    }
    out
}

/// The links that would break on the registry: neither absolute nor an
/// anchor within the page.
fn relative(text: &str) -> Vec<String> {
    links(text)
        .into_iter()
        .filter(|t| {
            !(t.starts_with("https://")
                || t.starts_with("http://")
                || t.starts_with("mailto:")
                || t.starts_with('#'))
        })
        .collect()
}

#[test]
fn packaged_documents_link_absolutely() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in ["README.md", "MIGRATION.md"] {
        let text = std::fs::read_to_string(dir.join(name)).expect(name);
        if name == "README.md" {
            assert!(!links(&text).is_empty(), "{name}: no links found");
        }
        let bad = relative(&text);
        assert!(
            bad.is_empty(),
            "{name} links relatively, which breaks on crates.io and docs.rs (use \
             https://github.com/fastnow/fastnow/blob/main/…): {bad:?}"
        );
    }
    // The check sees what it must.
    assert_eq!(
        relative(
            "[a](docs/MIGRATION.md) [b](#x) [c](https://x)\n[d]: BENCHMARKS.md\n<a href=\"go/x\">"
        ),
        ["docs/MIGRATION.md", "BENCHMARKS.md", "go/x"]
    );
}

/// A feature the manifest calls internal ("Not part of the API") is named
/// with leading underscores, the convention docs.rs hides from its feature
/// list; the crate docs list every other feature.
#[test]
fn internal_features_are_named_to_be_hidden() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The packaged crate carries the manifest as written in Cargo.toml.orig.
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml.orig"))
        .or_else(|_| std::fs::read_to_string(dir.join("Cargo.toml")))
        .expect("the manifest");
    let features = manifest
        .split("[features]")
        .nth(1)
        .expect("a [features] table");
    let features = &features[..features.find("\n[").unwrap_or(features.len())];
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).expect("src/lib.rs");
    let mut comment = String::new();
    let mut internal = 0;
    for line in features.lines().map(str::trim) {
        if let Some(c) = line.strip_prefix('#') {
            comment.push_str(c);
            continue;
        }
        let Some((name, _)) = line.split_once(" = ") else {
            continue;
        };
        if comment.contains("Not part of the API") {
            internal += 1;
            assert!(
                name.starts_with("__"),
                "internal feature {name} is not named __…"
            );
        } else if name != "default" && !name.starts_with("__") {
            assert!(
                lib.contains(&format!("//! - `{name}`"))
                    || lib.contains(&format!("`{name}` (default)")),
                "feature {name} is not in the crate docs' Features"
            );
        }
        comment.clear();
    }
    assert_eq!(internal, 1, "the test hooks' feature");
}
