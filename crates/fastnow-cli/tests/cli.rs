//! The `fastnow` command as a user meets it: argument errors, the JSON
//! schema documented in REPORT.md, and the HTML page. One quick report is
//! shared by the tests that read it, so the suite stays a few seconds long.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

fn fastnow(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fastnow"))
        .args(args)
        .output()
        .expect("run fastnow")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fastnow-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

/// `report --quick --json --html FILE`, run once: (parsed JSON, HTML page).
fn quick_report() -> &'static (Value, String) {
    static REPORT: OnceLock<(Value, String)> = OnceLock::new();
    REPORT.get_or_init(|| {
        let page = scratch("report.html");
        let o = fastnow(&[
            "report",
            "--quick",
            "--window",
            "200ms",
            "--json",
            "--html",
            page.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "report failed: {}", stderr(&o));
        let json: Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON document");
        let html = std::fs::read_to_string(&page).expect("HTML page written");
        (json, html)
    })
}

#[test]
fn unknown_flag_is_an_error_with_usage() {
    let o = fastnow(&["report", "--frobnicate"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--frobnicate"), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
}

#[test]
fn missing_subcommand_is_an_error() {
    let o = fastnow(&[]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("report"),
        "usage names the subcommands: {}",
        stderr(&o)
    );
}

#[test]
fn invalid_windows_say_what_is_accepted() {
    for (window, hint) in [
        ("ten seconds", "examples: 10s"),
        ("5ms", "outside 100ms..10m"),
        ("2h", "outside 100ms..10m"),
    ] {
        let o = fastnow(&["report", "--quick", "--window", window]);
        assert_eq!(o.status.code(), Some(2), "--window {window}");
        assert!(
            stderr(&o).contains(hint),
            "--window {window}: {}",
            stderr(&o)
        );
        assert!(
            o.stdout.is_empty(),
            "nothing measured for --window {window}"
        );
    }
}

#[test]
fn unwritable_html_path_fails_before_measuring_and_leaves_nothing() {
    let dir = scratch("missing-dir");
    let page = dir.join("report.html");
    let started = std::time::Instant::now();
    let o = fastnow(&["report", "--quick", "--html", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot write"), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "no report printed");
    assert!(!dir.exists(), "no directory or partial file created");
    // It must fail up front, not after the measurements (a quick run takes seconds).
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "failed late: {:?}",
        started.elapsed()
    );

    let o = fastnow(&["report", "--quick", "--html", "/"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a directory is not a file: {}",
        stderr(&o)
    );
}

#[test]
fn json_has_the_documented_fields() {
    let (r, _) = quick_report();
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["mode"], "quick");
    assert!(r["machine"]["cores"].as_u64().unwrap() >= 1);
    assert!(r["machine"]["arch"].is_string());
    let chosen = &r["fastnow"];
    assert!(
        ["Counter", "Os"].contains(&chosen["source"].as_str().unwrap()),
        "{chosen}"
    );
    assert!(chosen["freq_hz"].as_u64().unwrap() > 0);
    assert!(chosen["freq_origin"].is_string());

    let costs = r["costs"].as_array().unwrap();
    let cost = |name: &str| {
        costs
            .iter()
            .find(|c| c["clock"] == name)
            .unwrap_or_else(|| panic!("no cost row for {name}"))
    };
    for name in [
        "fastnow Instant::now",
        "fastnow MonotonicInstant::now",
        "fastnow unix_nanos",
        "fastnow recent",
        "std Instant::now",
        "clock_gettime MONOTONIC",
    ] {
        let c = cost(name);
        let median = c["ns_median"].as_f64().unwrap();
        assert!(
            median > 0.0
                && c["ns_min"].as_f64().unwrap() <= median
                && median <= c["ns_max"].as_f64().unwrap(),
            "{c}"
        );
        assert!(c["all_cores_ns_median"].as_f64().unwrap() > 0.0, "{c}");
        assert!(
            ["fastnow", "baseline", "os", "peer"].contains(&c["kind"].as_str().unwrap()),
            "{c}"
        );
    }
    assert_eq!(cost("std Instant::now")["vs_std_instant"], 1.0);

    // Correctness counts are consistent with themselves, and the clocks
    // fastnow guarantees to be monotonic have no violations.
    let rows = r["correctness"].as_array().unwrap();
    for row in rows {
        assert!(
            row["strict_violations"].as_u64().unwrap() <= row["strict_checks"].as_u64().unwrap(),
            "{row}"
        );
        assert!(
            row["per_thread_decreases"].as_u64().unwrap()
                <= row["per_thread_reads"].as_u64().unwrap(),
            "{row}"
        );
    }
    for name in [
        "fastnow MonotonicInstant::now",
        "fastnow OrderedInstant::now",
    ] {
        let row = rows.iter().find(|c| c["clock"] == name).expect(name);
        assert_eq!(row["strict_violations"], 0, "{row}");
        assert_eq!(row["per_thread_decreases"], 0, "{row}");
    }

    let drift = &r["drift"];
    assert_eq!(drift["window_s"], 0.2);
    assert_eq!(drift["samples"].as_array().unwrap().len(), 20);
    assert!(
        drift["final_error_ppm"].as_f64().unwrap().abs() < 1000.0,
        "{drift}"
    );
    assert!(r["wall"]["p99_ns"].as_f64().unwrap() >= 0.0);
    assert!(r["coarse"]["age_p99_ms"].as_f64().unwrap() >= 0.0);
    assert_eq!(r["latency"].as_array().unwrap().len(), 3);
    assert!(r["verdict"].as_str().unwrap().contains("fastnow"));
}

#[test]
fn html_page_is_self_contained_with_its_plots() {
    let (_, html) = quick_report();
    assert!(
        html.starts_with("<!DOCTYPE html>"),
        "{}",
        &html[..40.min(html.len())]
    );
    // Bars for the costs, one histogram per measured clock, the drift line.
    assert!(
        html.matches("<svg").count() >= 5,
        "plots: {}",
        html.matches("<svg").count()
    );
    assert!(html.contains("fastnow Instant::now"));
    // Nothing fetched from elsewhere (the SVG namespace is a name, not a fetch).
    let fetched = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for external in ["<script src", "<link ", "<img", "http://", "https://"] {
        assert!(!fetched.contains(external), "external reference {external}");
    }
    // No temporary file left beside it.
    let dir = scratch("report.html");
    let leftovers: Vec<_> = std::fs::read_dir(dir.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn text_report_names_source_costs_and_verdict() {
    let o = fastnow(&["report", "--quick", "--window", "100ms"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    for section in [
        "MACHINE",
        "fastnow source",
        "frequency",
        "COST",
        "vs std Instant",
        "CORRECTNESS",
        "strict violations",
        "drift",
        "VERDICT",
    ] {
        assert!(text.contains(section), "missing {section}:\n{text}");
    }
}

#[test]
fn info_prints_the_decision() {
    let o = fastnow(&["info"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Hz") || text.contains("OS"), "{text}");
}
