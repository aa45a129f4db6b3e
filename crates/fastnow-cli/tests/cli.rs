//! The `fastnow` command as a user meets it: argument errors, the JSON
//! schema documented in REPORT.md, and the HTML page. One quick report is
//! shared by the tests that read it, so the suite stays a few seconds long.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

fn fastnow(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fastnow"))
        .args(args)
        .output()
        .expect("run fastnow")
}

/// Runs `fastnow args` and returns its output and the CPU time it used,
/// all its threads' user and system time: the work it did, which, unlike
/// the time it took, does not grow when the machine is busy.
#[allow(clippy::zombie_processes)] // reaped by `wait4`, which reports its CPU time
fn fastnow_with_cpu_time(args: &[&str]) -> (Output, Duration) {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    let mut child = Command::new(env!("CARGO_BIN_EXE_fastnow"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fastnow");
    // One pipe after the other: these runs print a few lines at most.
    fn drain(mut pipe: impl Read) -> Vec<u8> {
        let mut bytes = Vec::new();
        pipe.read_to_end(&mut bytes).unwrap();
        bytes
    }
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: all-zero bytes are a valid `rusage` (integers and timevals).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: our own child, not yet waited for; valid out-pointers. (Once
    // reaped here, `child` is never waited for again: dropping it does not.)
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut usage) }, pid);
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1_000);
    let output = Output {
        status: std::process::ExitStatus::from_raw(status),
        stdout,
        stderr,
    };
    (output, time(usage.ru_utime) + time(usage.ru_stime))
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

/// An installed `fastnow` has no checkout beside it: its help points at
/// REPORT.md where every user can read it, for the version they run.
#[test]
fn help_points_at_the_report_docs_online() {
    let o = fastnow(&["report", "--help"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let help = String::from_utf8_lossy(&o.stdout);
    let page = concat!(
        "https://crates.io/crates/fastnow-cli/",
        env!("CARGO_PKG_VERSION")
    );
    assert!(help.contains(page), "no link to {page}:\n{help}");
    assert!(
        !help.contains("crates/fastnow-cli/REPORT.md"),
        "a path in the repository:\n{help}"
    );
}

/// `cargo install fastnow-cli` builds the default features, and the report
/// it installs compares fastnow with the peers (quanta, minstant, fastant,
/// coarsetime): `peers` is one of them, and a build with it has their rows.
#[test]
fn an_installed_report_measures_the_peers() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .expect("the crate's manifest");
    let default = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("default ="))
        .expect("a default feature list");
    assert!(default.contains("\"peers\""), "{default}");
    if cfg!(feature = "peers") {
        let (r, _) = quick_report();
        let peers: Vec<_> = r["costs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == "peer")
            .map(|c| c["clock"].as_str().unwrap())
            .collect();
        for name in ["quanta", "minstant", "fastant", "coarsetime"] {
            assert!(
                peers.iter().any(|p| p.starts_with(name)),
                "{name}: {peers:?}"
            );
        }
    }
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
    let (o, cpu) = fastnow_with_cpu_time(&["report", "--quick", "--html", page.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot write"), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "no report printed");
    assert!(!dir.exists(), "no directory or partial file created");
    // It must fail up front, not after the measurements: a quick run keeps
    // a core busy for seconds, a refusal takes milliseconds of CPU, however
    // long a busy machine makes it wait for one.
    assert!(cpu < Duration::from_secs(1), "failed late: {cpu:?} of CPU");

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
    assert_eq!(r["schema_version"], 3);
    assert_eq!(r["language"], "rust");
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
    assert!(chosen["invariant"].is_boolean(), "{chosen}");
    assert!(chosen["upkeep"].is_boolean(), "{chosen}");
    // Nothing demoted the counter during an ordinary run.
    assert!(chosen["demoted_at_unix_ns"].is_null(), "{chosen}");
    assert!(chosen.get("kernel_clocksource").is_some(), "{chosen}");
    // Without --faults there is no faults section.
    assert!(r.get("faults").is_none());

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
        "fastnow Hlc::now",
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
    assert_eq!(drift["intervals"].as_array().unwrap().len(), 19);
    assert_eq!(drift["bound_ppm"], 1.0);
    assert!(
        drift["final_error_ppm"].as_f64().unwrap().abs() < 1000.0,
        "{drift}"
    );
    let wall = &r["wall"];
    assert!(wall["p99_ns"].as_f64().unwrap() >= 0.0);
    assert_eq!(wall["bound_ns"], 1000.0);
    // The wall error is kept to the nanosecond: integers, not 256 ns steps.
    let errors: Vec<i64> = wall["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[1].as_i64().expect("integer ns"))
        .collect();
    assert_eq!(errors.len(), 200);
    assert!(
        errors.iter().any(|e| e % 256 != 0),
        "errors look rounded to 256 ns: {errors:?}"
    );
    assert!(r["coarse"]["age_p99_ms"].as_f64().unwrap() >= 0.0);
    assert!(r["verdict"].as_str().unwrap().contains("fastnow"));

    // Per-call latency percentiles, in order, for each measured clock, and
    // the bare counter read (the control of their tails) where there is one.
    assert!(r["latency_method"].as_str().unwrap().contains("call"));
    assert!([1, 16].contains(&r["latency_batch"].as_u64().unwrap()));
    let latency = r["latency"].as_array().unwrap();
    let control = r["strict_test"]["control_clock"].as_str();
    assert_eq!(
        latency.len(),
        8 + usize::from(control.is_some()),
        "{latency:?}"
    );
    if let Some(control) = control {
        assert!(
            latency.iter().any(|l| l["clock"] == control),
            "no {control}"
        );
    }
    for l in latency {
        let p = |k: &str| l[k].as_f64().unwrap();
        assert!(
            p("p50_ns") <= p("p99_ns")
                && p("p99_ns") <= p("p999_ns")
                && p("p999_ns") <= p("max_ns"),
            "{l}"
        );
        // Buckets end to end, from the fastest call to the slowest, every
        // call in one.
        let buckets = l["buckets"].as_array().unwrap();
        assert!(!buckets.is_empty() && buckets.len() <= 40, "{l}");
        for w in buckets.windows(2) {
            assert_eq!(w[0][1], w[1][0], "{l}");
        }
        assert!(
            buckets[buckets.len() - 1][1].as_f64().unwrap() >= p("max_ns"),
            "{l}"
        );
        let calls: u64 = buckets.iter().map(|b| b[2].as_u64().unwrap()).sum();
        assert_eq!(calls, l["samples"].as_u64().unwrap(), "{l}");
    }

    // The slowest reads: every clock both ways, beside a call of nothing.
    let slow = &r["slow_reads"];
    let rows = slow["rows"].as_array().unwrap();
    for clock in [
        "nothing (the timing alone)",
        "fastnow Instant::now",
        "std Instant::now",
    ] {
        for by in ["readers", "upkeep"] {
            let row = rows
                .iter()
                .find(|x| x["clock"] == clock && x["updates_by"] == by)
                .unwrap_or_else(|| panic!("no {clock} {by}"));
            assert!(row["calls"].as_u64().unwrap() > 0, "{row}");
            assert_eq!(row["over_per_s"].as_array().unwrap().len(), 3, "{row}");
        }
    }
    assert_eq!(
        slow["thresholds_ns"],
        serde_json::json!([1000, 5000, 20000])
    );
}

/// The JSON Schema keywords spec/report.schema.json uses, checked: every
/// place `v` departs from `s`.
fn departures(v: &Value, s: &Value, root: &Value, at: &str) -> Vec<String> {
    if let Some(r) = s["$ref"].as_str() {
        let name = r.trim_start_matches("#/$defs/");
        return departures(v, &root["$defs"][name], root, at);
    }
    let is = |t: &str| match t {
        "null" => v.is_null(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        _ => false,
    };
    let ok = match &s["type"] {
        Value::String(t) => is(t),
        Value::Array(ts) => ts.iter().any(|t| is(t.as_str().unwrap())),
        _ => true,
    };
    if !ok {
        return vec![format!("{at}: {v} is not {}", s["type"])];
    }
    let mut out = Vec::new();
    if let Some(c) = s.get("const") {
        if v != c {
            out.push(format!("{at}: {v}, not {c}"));
        }
    }
    if let Some(e) = s["enum"].as_array() {
        if !e.contains(v) {
            out.push(format!("{at}: {v} is not one of {e:?}"));
        }
    }
    if let Value::Object(o) = v {
        for r in s["required"].as_array().into_iter().flatten() {
            if !o.contains_key(r.as_str().unwrap()) {
                out.push(format!("{at}: no {r}"));
            }
        }
        for (k, x) in o {
            match &s["properties"][k] {
                Value::Null => match &s["additionalProperties"] {
                    Value::Bool(false) => out.push(format!("{at}.{k}: not in the schema")),
                    extra @ Value::Object(_) => {
                        out.extend(departures(x, extra, root, &format!("{at}.{k}")))
                    }
                    _ => {}
                },
                p => out.extend(departures(x, p, root, &format!("{at}.{k}"))),
            }
        }
    }
    if let Value::Array(a) = v {
        let prefix = s["prefixItems"].as_array().cloned().unwrap_or_default();
        for (i, x) in a.iter().enumerate() {
            let at = format!("{at}[{i}]");
            match (prefix.get(i), &s["items"]) {
                (Some(p), _) => out.extend(departures(x, p, root, &at)),
                (None, Value::Bool(false)) => out.push(format!("{at}: beyond the schema's items")),
                (None, items @ Value::Object(_)) => out.extend(departures(x, items, root, &at)),
                _ => {}
            }
        }
    }
    out
}

fn schema() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../spec/report.schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("spec/report.schema.json"))
        .expect("the schema is JSON")
}

/// A Go report recorded by `go run ./cmd/fastnow-report -quick -json` on
/// an AMD EPYC KVM guest (the Go tests check the live report against the
/// same schema).
fn go_report() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/go-report.json"
    ))
}

/// The report follows spec/report.schema.json, the schema the Go report
/// follows too: every field it writes is written down there, and the
/// version is the schema's.
#[test]
fn json_follows_the_shared_schema() {
    let (r, _) = quick_report();
    let schema = schema();
    let errs = departures(r, &schema, &schema, "report");
    assert!(errs.is_empty(), "{}", errs.join("\n"));
    let go: Value = serde_json::from_slice(&std::fs::read(go_report()).unwrap()).unwrap();
    let errs = departures(&go, &schema, &schema, "go report");
    assert!(errs.is_empty(), "{}", errs.join("\n"));
    assert_eq!(go["language"], "go");
    // The check can fail: a field the schema lacks, a value out of its enum.
    let mut bad = r.clone();
    bad["extra"] = 1.into();
    bad["fastnow"]["source"] = "Sundial".into();
    assert_eq!(departures(&bad, &schema, &schema, "report").len(), 2);
}

/// The strict test either could fail here (the bare counter, its control,
/// failed) or the report says plainly that the run was too short to tell.
#[test]
fn strict_test_says_whether_it_could_fail() {
    let (r, _) = quick_report();
    let t = &r["strict_test"];
    let note = t["note"].as_str().unwrap();
    if t["conclusive"].as_bool().unwrap() {
        let control = t["control_clock"].as_str().expect("a control clock");
        let row = r["correctness"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["clock"] == control)
            .expect("the control has a row");
        assert!(row["strict_violations"].as_u64().unwrap() > 0, "{row}");
        assert!(
            t["control_checks_to_fail"].as_u64().unwrap()
                <= t["checks_per_clock"].as_u64().unwrap(),
            "{t}"
        );
        assert!(note.contains("can fail"), "{note}");
    } else {
        assert!(note.contains("TOO SHORT TO TELL"), "{note}");
        assert!(
            r["verdict"].as_str().unwrap().contains("too short to tell"),
            "{}",
            r["verdict"]
        );
    }
}

/// The verdict follows the figures it sits under: a recommendation only
/// from steady figures, each "faster" or "slower" true of the medians, and
/// "too busy to conclude" when the figures stayed unsteady.
#[test]
fn verdict_follows_the_recorded_figures() {
    let (r, _) = quick_report();
    let verdict = r["verdict"].as_str().unwrap();
    let s = &r["steadiness"];
    let attempts = s["attempts"].as_u64().unwrap();
    assert!((1..=3).contains(&attempts), "{s}");
    let unsteady = s["unsteady"].as_array().unwrap();
    assert_eq!(s["steady"].as_bool().unwrap(), unsteady.is_empty(), "{s}");
    // Never a fraction called "faster" (the old wording: "0.6x faster").
    assert!(!verdict.contains("x faster"), "{verdict}");
    let costs = r["costs"].as_array().unwrap();
    let median = |name: &str| {
        let c = costs.iter().find(|c| c["clock"] == name).unwrap();
        // Each row keeps its rounds, and its median is theirs.
        let mut rounds: Vec<f64> = c["rounds_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(rounds.len(), 3, "{c}");
        rounds.sort_by(|a, b| a.total_cmp(b));
        assert_eq!(rounds[1], c["ns_median"].as_f64().unwrap(), "{c}");
        rounds[1]
    };
    if !unsteady.is_empty() {
        assert!(verdict.contains("too busy to conclude"), "{verdict}");
        assert!(!verdict.contains("Use "), "{verdict}");
        return;
    }
    assert!(!verdict.contains("too busy"), "{verdict}");
    for (clock, reference, used, kept) in [
        (
            "fastnow Instant::now",
            "std Instant::now",
            "Use fastnow::Instant",
            "keep std::time::Instant: fastnow::Instant",
        ),
        (
            "fastnow unix_nanos",
            "std SystemTime::now",
            "Use unix_nanos()",
            "keep SystemTime",
        ),
    ] {
        let (x, y) = (median(clock), median(reference));
        if verdict.contains(used) {
            assert!(
                x * 1.05 < y,
                "{clock} {x} against {reference} {y}: {verdict}"
            );
        }
        if verdict.contains(kept) {
            assert!(
                x > y * 1.05,
                "{clock} {x} against {reference} {y}: {verdict}"
            );
        }
        assert!(
            verdict.contains(used) || verdict.contains(kept) || verdict.contains("about as fast"),
            "{verdict}"
        );
    }
}

#[test]
fn html_page_is_self_contained_with_its_plots() {
    let (r, html) = quick_report();
    assert!(
        html.starts_with("<!DOCTYPE html>"),
        "{}",
        &html[..40.min(html.len())]
    );
    assert!(html.contains("name=\"viewport\""), "readable on a phone");
    // One histogram per latency clock, the drift and the wall-error plots.
    let latency = r["latency"].as_array().unwrap();
    assert!(
        html.matches("<svg").count() >= latency.len() + 2,
        "plots: {}",
        html.matches("<svg").count()
    );
    // Thread CPU time and BootInstant have their sections, rows and plots;
    // the hybrid logical clock its line; the slowest reads their table.
    for text in [
        "<h2>Thread CPU time</h2>",
        "<h2>Time across suspend</h2>",
        "<h2>Slowest reads</h2>",
        "<span class=\"name\">fastnow ThreadCpuInstant::now</span>",
        "<span class=\"name\">fastnow BootInstant::now</span>",
        "<h3>fastnow BootInstant::now</h3>",
        "Hlc::now() (a hybrid logical clock's stamp)",
    ] {
        assert!(html.contains(text), "missing {text}");
    }
    // The cost chart: a labelled bar per clock, coloured by family, its value printed.
    let costs = r["costs"].as_array().unwrap();
    assert_eq!(html.matches("<span class=\"bar\"").count(), costs.len());
    for family in ["f-fastnow", "f-os", "f-baseline"] {
        assert!(html.contains(family), "no {family} bars");
    }
    for label in ["fastnow", "OS / std", "bare instructions"] {
        assert!(
            html.contains(&format!("\">{label}</span>")),
            "legend lacks {label}"
        );
    }
    let recent = costs
        .iter()
        .find(|c| c["clock"] == "fastnow recent")
        .unwrap();
    let value = recent["ns_median"].as_f64().unwrap();
    let printed = if value < 10.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.1}")
    };
    assert!(
        html.contains(&format!("<span class=\"val\">{printed} ns</span>")),
        "no value printed on the bar for {value}"
    );
    // Percentiles beside the histograms; bounds on the accuracy plots.
    for text in [
        "p99.9",
        "ppm against CLOCK_MONOTONIC",
        "ns: unix_nanos() − CLOCK_REALTIME",
        "calls (logarithmic)",
        "bound",
    ] {
        assert!(html.contains(text), "missing {text}");
    }
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

/// The `<svg class="hist" …>…</svg>` plots of a page, in order.
fn histograms(html: &str) -> Vec<&str> {
    html.match_indices("<svg class=\"hist\"")
        .map(|(i, _)| &html[i..i + html[i..].find("</svg>").unwrap()])
        .collect()
}

/// An attribute's value in an element's text.
fn attr<'a>(element: &'a str, name: &str) -> &'a str {
    let key = format!(" {name}=\"");
    let at = element
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {element}"))
        + key.len();
    &element[at..at + element[at..].find('"').unwrap()]
}

/// Every histogram on the page draws every bucket of its data (a bar each,
/// from its own edges): the calls drawn add up to the calls measured, per
/// plot, and a bar has height exactly where its bucket has calls. (The
/// plotting library the page used drew n − 1 bars for n points, and the
/// last bucket, with the tail, never showed.)
#[test]
fn every_histogram_bar_is_drawn_as_measured() {
    let (r, html) = quick_report();
    let plots = histograms(html);
    let latency = r["latency"].as_array().unwrap();
    // A histogram per latency clock, in order, and one of the wall error.
    assert_eq!(plots.len(), latency.len() + 1, "{} plots", plots.len());
    let wall = r["wall"]["samples"].as_array().unwrap().len() as u64;
    let measured = latency
        .iter()
        .map(|l| {
            (
                l["samples"].as_u64().unwrap(),
                l["buckets"].as_array().unwrap().len(),
            )
        })
        .chain([(wall, 0)]);
    for (plot, (calls, buckets)) in plots.iter().zip(measured) {
        let bars: Vec<&str> = plot
            .match_indices("<rect class=\"b\"")
            .map(|(i, _)| &plot[i..i + plot[i..].find('>').unwrap()])
            .collect();
        if buckets > 0 {
            assert_eq!(bars.len(), buckets, "a bar per bucket");
        }
        let drawn: u64 = bars
            .iter()
            .map(|b| attr(b, "data-calls").parse::<u64>().unwrap())
            .sum();
        assert_eq!(drawn, calls, "calls drawn against measured");
        assert_eq!(attr(plot, "data-calls").parse::<u64>().unwrap(), calls);
        for b in &bars {
            let n: u64 = attr(b, "data-calls").parse().unwrap();
            let h: f64 = attr(b, "height").parse().unwrap();
            let w: f64 = attr(b, "width").parse().unwrap();
            assert_eq!(n > 0, h > 0.0, "{b}");
            assert!(w > 0.0, "{b}");
        }
    }
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
        "Hlc::now() (a hybrid logical clock's stamp): ",
        "LATENCY",
        "SLOWEST READS",
        "THREAD CPU TIME",
        "TIME ACROSS SUSPEND",
        "VERDICT",
    ] {
        assert!(text.contains(section), "missing {section}:\n{text}");
    }
}

/// `fastnow info` says what fastnow chose and why: the reason (the
/// kernel's clocksource and its verdict, or the fallback), and the
/// clocksource where the kernel has one.
#[test]
fn info_prints_the_decision_and_why() {
    let o = fastnow(&["info"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Hz") || text.contains("OS"), "{text}");
    let line = |label: &str| {
        text.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} line:\n{text}"))
            .to_string()
    };
    let why = line("why ");
    assert!(why.len() > "why ".len() + 20, "{why}");
    line("source ");
    line("frequency ");
    line("thread CPU ");
    // Where the kernel names its clocksource and fastnow reads the
    // counter because of it, the reason names it.
    let current =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    if let (Ok(cs), true) = (
        current,
        line("source ").contains("counter") && cfg!(target_arch = "x86_64"),
    ) {
        let cs = cs.trim();
        assert!(
            why.contains(&format!("the kernel's clocksource is {cs}")),
            "{why}"
        );
        assert!(line("clocksource ").contains(cs), "{text}");
        assert!(
            line("summary ").contains(&format!("kernel clocksource {cs}")),
            "{text}"
        );
    }
}

/// The quick report's JSON in a file of its own, for --compare.
fn saved_report(name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let (r, _) = quick_report();
    let mut r = r.clone();
    edit(&mut r);
    let path = scratch(name);
    std::fs::write(&path, serde_json::to_vec_pretty(&r).unwrap()).unwrap();
    path
}

#[test]
fn compare_sets_two_reports_side_by_side_and_marks_changes() {
    let a = saved_report("a.json", |_| {});
    // B: fastnow Instant::now slower than A's slowest round, beyond any spread.
    let b = saved_report("b.json", |r| {
        for c in r["costs"].as_array_mut().unwrap() {
            if c["clock"] == "fastnow Instant::now" {
                let slow = c["ns_max"].as_f64().unwrap() * 3.0 + 10.0;
                c["ns_min"] = slow.into();
                c["ns_median"] = (slow * 1.1).into();
                c["ns_max"] = (slow * 1.2).into();
            }
        }
        r["mode"] = "thorough".into();
    });
    let page = scratch("compare.html");
    let o = fastnow(&[
        "report",
        "--compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    for section in [
        "COMPARE",
        "MACHINE",
        "COST",
        "B/A",
        "CORRECTNESS",
        "ACCURACY",
        "do not overlap",
    ] {
        assert!(text.contains(section), "missing {section}:\n{text}");
    }
    let line = text
        .lines()
        .find(|l| l.starts_with("fastnow Instant::now "))
        .expect("a row for fastnow Instant::now");
    assert!(line.contains("slower"), "{line}");
    // Every unchanged clock is within noise of itself.
    let marked = text
        .lines()
        .filter(|l| l.contains("x slower") || l.contains("x faster"))
        .count();
    assert_eq!(marked, 1, "{text}");
    assert!(text.contains("quick run and B a thorough run"), "{text}");
    let html = std::fs::read_to_string(&page).expect("comparison page written");
    assert!(html.contains("<tr class=\"slower\">"), "highlighted row");
    assert!(!html.contains("http://") && !html.contains("https://"));
}

/// A Rust report and a Go report from one machine compare: their rows set
/// side by side by what each clock is for, each report named for its
/// language, and what a Go report does not measure said so.
#[test]
fn compare_sets_a_go_report_beside_a_rust_report() {
    let a = saved_report("rust.json", |_| {});
    let o = fastnow(&[
        "report",
        "--compare",
        a.to_str().unwrap(),
        go_report().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    for part in [
        "(Rust report)",
        "(Go report)",
        "A is a Rust report and B a Go report",
        "– (not in a Go report)",
    ] {
        assert!(text.contains(part), "missing {part}:\n{text}");
    }
    // Rows matched by role, both names shown, with a ratio.
    for pair in [
        "fastnow Instant::now / fastnow.Nanotime ",
        "fastnow MonotonicInstant::now / fastnow.MonotonicNanotime ",
        "fastnow unix_nanos / fastnow.UnixNano ",
        "std Instant::now / time.Since(start) ",
    ] {
        let row = text
            .lines()
            .find(|l| l.starts_with(pair))
            .unwrap_or_else(|| panic!("no row {pair}:\n{text}"));
        assert!(row.contains('x'), "{row}");
    }
}

/// Reports saved before the verdict recorded its steadiness and each
/// cost's rounds still compare.
#[test]
fn compare_reads_reports_without_the_later_fields() {
    let a = saved_report("older.json", |r| {
        r.as_object_mut().unwrap().remove("steadiness");
        for c in r["costs"].as_array_mut().unwrap() {
            c.as_object_mut().unwrap().remove("rounds_ns");
        }
    });
    let a = a.to_str().unwrap();
    let o = fastnow(&["report", "--compare", a, a]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("COST"));
}

#[test]
fn compare_errors_name_the_file_and_the_problem() {
    let good = saved_report("good.json", |_| {});
    let good = good.to_str().unwrap();
    let write = |name: &str, contents: &str| {
        let p = scratch(name);
        std::fs::write(&p, contents).unwrap();
        p.to_str().unwrap().to_string()
    };
    let missing = scratch("no-such.json").to_str().unwrap().to_string();
    let not_json = write("not.json", "MACHINE\n  cpu ...\n");
    let not_report = write("other.json", r#"{"name": "something else"}"#);
    let old = write(
        "old.json",
        r#"{"schema_version": 2, "machine": {}, "costs": []}"#,
    );
    let old_go = write(
        "old-go.json",
        r#"{"schema_version": 1, "source": {"Source": "counter"}, "gomaxprocs": 2, "costs": []}"#,
    );
    let truncated = saved_report("truncated.json", |r| {
        r.as_object_mut().unwrap().remove("costs");
    });
    let elsewhere = saved_report("elsewhere.json", |r| {
        for c in r["costs"].as_array_mut().unwrap() {
            c["clock"] = format!("other {}", c["clock"].as_str().unwrap()).into();
        }
    });
    for (file, expect) in [
        (missing.as_str(), "cannot read"),
        (not_json.as_str(), "is not JSON"),
        (not_report.as_str(), "no schema_version"),
        (old.as_str(), "is a Rust report of schema_version 2, and this fastnow reads 3"),
        (old_go.as_str(), "is a Go report of schema_version 1, and this fastnow reads 3 (the schema both languages' reports share, spec/report.schema.json): re-run `go run ./cmd/fastnow-report -json`"),
        (truncated.to_str().unwrap(), "missing field `costs`"),
        (elsewhere.to_str().unwrap(), "no measured clock in common"),
    ] {
        let o = fastnow(&["report", "--compare", good, file]);
        assert_eq!(o.status.code(), Some(1), "{file}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(expect), "{file}: {err}");
        assert!(o.stdout.is_empty(), "{file}: nothing printed");
    }
    // The file named first is checked first, and named in the error.
    let o = fastnow(&["report", "--compare", &not_json, good]);
    assert!(stderr(&o).contains("not.json"), "{}", stderr(&o));
}

#[test]
fn compare_takes_two_files_and_measures_nothing() {
    let a = saved_report("only.json", |_| {});
    let a = a.to_str().unwrap();
    let o = fastnow(&["report", "--compare", a]);
    assert_eq!(o.status.code(), Some(2), "one file: {}", stderr(&o));
    for flag in ["--quick", "--json", "--faults"] {
        let o = fastnow(&["report", "--compare", a, a, flag]);
        assert_eq!(o.status.code(), Some(2), "{flag}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("cannot be used with"),
            "{flag}: {}",
            stderr(&o)
        );
    }
    let o = fastnow(&["report", "--compare", a, a]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Without CAP_SYS_TIME, --faults says why in one line and the report runs
/// without it. As root, the capability is dropped with setpriv (util-linux)
/// for the run; the real fault run belongs to `make test-faults`.
#[test]
fn faults_without_cap_sys_time_are_skipped_with_a_reason() {
    let exe = env!("CARGO_BIN_EXE_fastnow");
    let args = [
        "report", "--quick", "--window", "100ms", "--json", "--faults",
    ];
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let o = if root {
        let Ok(o) = Command::new("setpriv")
            .args(["--bounding-set", "-sys_time", exe])
            .args(args)
            .output()
        else {
            eprintln!("SKIPPED: running as root and setpriv (util-linux) is missing");
            return;
        };
        o
    } else {
        fastnow(&args)
    };
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let reason: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("--faults skipped"))
        .collect();
    assert_eq!(reason.len(), 1, "{err}");
    assert!(reason[0].contains("CAP_SYS_TIME"), "{err}");
    let r: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert!(r["faults"]["skipped"]
        .as_str()
        .unwrap()
        .contains("CAP_SYS_TIME"));
    assert_eq!(r["faults"]["events"].as_array().unwrap().len(), 0);
}

/// On one CPU the two threads of the strict test take turns, so it cannot
/// fail: the report must say so plainly rather than print zeros as a pass.
#[test]
fn strict_test_on_one_cpu_says_too_short_to_tell() {
    let exe = env!("CARGO_BIN_EXE_fastnow");
    // A CPU this process may run on (a container's cpuset may leave out 0).
    let cpu = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let list = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
            let first: String = list
                .trim()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            (!first.is_empty()).then_some(first)
        })
        .unwrap_or_else(|| "0".to_owned());
    let Ok(o) = Command::new("taskset")
        .args(["-c", &cpu, exe, "report", "--quick", "--window", "100ms"])
        .output()
    else {
        eprintln!("SKIPPED: taskset (util-linux) is missing");
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let note = text
        .lines()
        .find(|l| l.contains("strict test:"))
        .expect("a strict test line");
    // The control (a bare counter read) failing even on one CPU would make
    // the test conclusive; otherwise the run must say it cannot tell.
    assert!(
        note.contains("TOO SHORT TO TELL") || note.contains("can fail"),
        "{note}"
    );
    if note.contains("TOO SHORT TO TELL") {
        assert!(note.contains("one CPU"), "{note}");
        assert!(
            text.contains("the strict test was too short to tell here"),
            "{text}"
        );
    }
}

/// REPORT.md is the crate's page on crates.io, where a link relative to
/// the repository breaks: every link is absolute or an anchor.
#[test]
fn report_docs_link_absolutely() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/REPORT.md")).unwrap();
    let relative: Vec<&str> = text
        .match_indices("](")
        .filter_map(|(i, _)| text[i + 2..].split(')').next())
        .filter(|t| !(t.starts_with("https://") || t.starts_with('#')))
        .collect();
    assert!(
        relative.is_empty(),
        "relative links in REPORT.md: {relative:?}"
    );
}

/// The clock snapshot's section: its JSON object (the tightest width of a
/// few, the conversions' stated error, the snapshot's text, and on Linux the
/// conversion of a precise reading checked against CLOCK_MONOTONIC, which
/// holds), and its section on the page.
#[test]
fn snapshot_section_in_the_json_and_on_the_page() {
    let (r, html) = quick_report();
    let s = &r["snapshot"];
    assert_eq!(s["tries"], 20, "{s}");
    assert!(s["width_ns"].as_u64().unwrap() < 1_000_000, "{s}");
    assert!(s["conversion_error_ns"].is_u64(), "{s}");
    assert!(
        s["text"].as_str().unwrap().contains("CLOCK_MONOTONIC"),
        "{s}"
    );
    if cfg!(target_os = "linux") {
        assert!(s["check_bracket_ns"].is_u64(), "{s}");
        assert!(s["check_outside_ns"].is_u64(), "{s}");
        assert_eq!(s["check_holds"], true, "{s}");
    }
    for text in [
        "<h2>Clock snapshot</h2>",
        "the tightest of 20 snapshots",
        "Instant::now().to_monotonic_nanos()",
    ] {
        assert!(html.contains(text), "missing {text}");
    }
}
