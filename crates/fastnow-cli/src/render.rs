//! The report as terminal tables and as a self-contained HTML page with SVG
//! plots (poloto: pure SVG, no fonts or scripts needed to render it).

use crate::measure::Report;
use poloto::build;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// An output file written atomically: created (as a temporary beside the
/// target) before measuring, so an unwritable path fails at once, and
/// renamed into place only when complete.
pub struct PendingFile {
    target: PathBuf,
    temp: PathBuf,
}

impl PendingFile {
    pub fn create(target: &Path) -> Result<PendingFile, String> {
        let name = target
            .file_name()
            .ok_or_else(|| format!("{}: not a file path", target.display()))?;
        let temp = target.with_file_name(format!(".{}.partial", name.to_string_lossy()));
        std::fs::write(&temp, b"")
            .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
        Ok(PendingFile {
            target: target.to_path_buf(),
            temp,
        })
    }

    pub fn commit(self, contents: &str) -> Result<PathBuf, String> {
        std::fs::write(&self.temp, contents)
            .map_err(|e| format!("cannot write {}: {e}", self.target.display()))?;
        std::fs::rename(&self.temp, &self.target)
            .map_err(|e| format!("cannot write {}: {e}", self.target.display()))?;
        Ok(self.target.clone())
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        // Gone already after a successful rename; otherwise no partial file.
        let _ = std::fs::remove_file(&self.temp);
    }
}

/// Left-aligns the first column and right-aligns the others.
pub fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    table_aligned(out, header, rows, 1);
}

/// Left-aligns the first `left` columns and right-aligns the others.
pub fn table_aligned(out: &mut String, header: &[&str], rows: &[Vec<String>], left: usize) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |out: &mut String, cells: Vec<&str>| {
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w - cell.chars().count();
            if i < left {
                let _ = write!(out, "{cell}{}  ", " ".repeat(pad));
            } else {
                let _ = write!(out, "{}{cell}  ", " ".repeat(pad));
            }
        }
        out.push('\n');
    };
    line(out, header.to_vec());
    line(
        out,
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect(),
    );
    for row in rows {
        line(out, row.iter().map(String::as_str).collect());
    }
}

pub fn text(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "MACHINE");
    for (k, v) in machine_rows(r) {
        let _ = writeln!(out, "  {k:<15}{v}");
    }

    let _ = writeln!(
        out,
        "\nCOST (ns per call; median of interleaved rounds; all cores = every core calling at once)"
    );
    table(&mut out, &COST_HEADER, &cost_table_rows(r));
    for line in cost_notes(r) {
        let _ = writeln!(out, "  {line}");
    }

    let _ = writeln!(out, "\nCORRECTNESS");
    table(&mut out, &CORRECTNESS_HEADER, &correctness_rows(r));
    let _ = writeln!(out, "  strict test: {}", r.strict_test.note);
    if let Some(d) = &r.drift {
        let _ = writeln!(
            out,
            "  drift of fastnow::Instant against CLOCK_MONOTONIC over {:.1} s: {:+.0} ns ({:+.3} ppm); worst interval from {:.0} s: {} (bound ±{} ppm)",
            d.window_s,
            d.final_error_ns,
            d.final_error_ppm,
            d.bound_from_s,
            worst_interval(r).map_or("none that long".into(), |p| format!("{p:+.3} ppm")),
            d.bound_ppm
        );
    }
    let _ = writeln!(
        out,
        "  unix_nanos() against CLOCK_REALTIME: median {:.0} ns, p99 {:.0} ns, max {:.0} ns (bound {:.0} ns)",
        r.wall.median_ns, r.wall.p99_ns, r.wall.max_ns, r.wall.bound_ns
    );
    let _ = writeln!(
        out,
        "  recent() age with upkeep at {:.0} ms: median {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        r.coarse.resolution_ms, r.coarse.age_median_ms, r.coarse.age_p99_ms, r.coarse.age_max_ms
    );

    if let Some(method) = &r.latency_method {
        let _ = writeln!(out, "\nLATENCY (ns per call: {method})");
        table(&mut out, &LATENCY_HEADER, &latency_rows(r));
        if let Some(control) = &r.strict_test.control_clock {
            let _ = writeln!(
                out,
                "  {control} is the bare counter read every counter clock stands on: its tail is the machine's"
            );
        }
    }
    if let Some(s) = &r.slow_reads {
        let _ = writeln!(out, "\nSLOWEST READS ({:.0} s; {})", s.seconds, s.method);
        table(&mut out, &SLOW_HEADER, &slow_rows(s));
        let _ = writeln!(
            out,
            "  per s: calls at or above the threshold per second of calling the clock, its own reads apart; own: the \
             reads during which fastnow did its own work on the calling thread, per second of the run that way"
        );
    }

    if let Some(t) = &r.thread_cpu {
        kv_text(
            &mut out,
            "THREAD CPU TIME (fastnow::ThreadCpuInstant)",
            &crate::thread_cpu::rows(t),
        );
    }

    if let Some(b) = &r.boot {
        kv_text(
            &mut out,
            "TIME ACROSS SUSPEND (fastnow::BootInstant)",
            &crate::boot::rows(b),
        );
    }

    if let Some(s) = &r.snapshot {
        crate::snapshot::text(&mut out, s, r.language == "go");
    }

    if let Some(faults) = &r.faults {
        let _ = writeln!(out, "\nFAULTS (injected into the kernel)");
        match &faults.skipped {
            Some(why) => {
                let _ = writeln!(out, "  skipped: {why}");
            }
            None => {
                table_aligned(&mut out, &FAULT_HEADER, &fault_rows(faults), 2);
                if let Some(info) = &faults.clock_info_after {
                    let _ = writeln!(out, "  after the events: {info}");
                }
            }
        }
    }
    let _ = writeln!(out, "\nVERDICT");
    for line in r.verdict.lines() {
        let _ = writeln!(out, "  {line}");
    }
    out
}

/// The cost table's columns.
pub const COST_HEADER: [&str; 5] = [
    "clock",
    "1 thread",
    "min–max",
    "all cores",
    "vs std Instant",
];

/// The cost table's rows, peers marked.
pub fn cost_table_rows(r: &Report) -> Vec<Vec<String>> {
    r.costs
        .iter()
        .map(|c| {
            vec![
                marked(&c.clock, (c.kind == "peer").then_some("peer")),
                format!("{:.2}", c.ns_median),
                format!("{:.2}–{:.2}", c.ns_min, c.ns_max),
                c.all_cores_ns_median
                    .map_or("–".to_string(), |x| format!("{x:.2}")),
                c.vs_std_instant
                    .map_or("–".to_string(), |x| format!("{x:.2}x")),
            ]
        })
        .collect()
}

/// The lines under the cost table: the hybrid logical clock against the
/// wall reading, and `MonotonicInstant`'s starting strategy.
pub fn cost_notes(r: &Report) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(line) = hlc_line(r) {
        notes.push(line);
    }
    if let Some(line) = monotonic_line(r) {
        notes.push(line);
    }
    notes
}

/// `MonotonicInstant`'s cost with the strategy its first reading chose,
/// beside the one the table gives (`None` without the figures).
pub fn monotonic_line(r: &Report) -> Option<String> {
    let m = r.monotonic.as_ref()?;
    let row = r
        .costs
        .iter()
        .find(|c| c.clock == "fastnow MonotonicInstant::now")?;
    Some(if m.start_mode == m.settled_mode {
        format!(
            "MonotonicInstant::now() kept its first strategy, {}, throughout: {:.2} ns on one thread before anything \
             contended (std Instant::now {:.2} ns in the same rounds)",
            m.start_mode, m.start_ns_median, m.start_std_ns_median
        )
    } else {
        format!(
            "MonotonicInstant::now() started with {} (kept while one thread reads it): {:.2} ns ({:.2}–{:.2}) before \
             anything contended, std Instant::now {:.2} ns in the same rounds; the table's {:.2} ns is {}, which it \
             keeps for good once several threads read it",
            m.start_mode,
            m.start_ns_median,
            m.start_ns_min,
            m.start_ns_max,
            m.start_std_ns_median,
            row.ns_median,
            m.settled_mode
        )
    })
}

/// The latency table's columns.
pub const LATENCY_HEADER: [&str; 6] = ["clock", "p50", "p99", "p99.9", "max", "calls"];

fn latency_rows(r: &Report) -> Vec<Vec<String>> {
    let control = r.strict_test.control_clock.as_deref();
    r.latency
        .iter()
        .map(|l| {
            vec![
                marked(
                    &l.clock,
                    (Some(l.clock.as_str()) == control).then_some("control"),
                ),
                format!("{:.1}", l.p50_ns),
                format!("{:.1}", l.p99_ns),
                format!("{:.1}", l.p999_ns),
                format!("{:.0}", l.max_ns),
                l.samples.to_string(),
            ]
        })
        .collect()
}

/// The slowest reads' columns.
pub const SLOW_HEADER: [&str; 9] = [
    "clock",
    "updates by",
    "calls",
    "≥ 1 µs per s",
    "≥ 5 µs per s",
    "≥ 20 µs per s",
    "max",
    "own reads (per s)",
    "own: median, slowest; CPU",
];

/// A duration in ns as µs ("23.5 µs") or ns ("870 ns").
pub fn fmt_short_ns(ns: u64) -> String {
    if ns >= 1_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{ns} ns")
    }
}

pub fn slow_rows(s: &crate::measure::SlowReadsReport) -> Vec<Vec<String>> {
    s.rows
        .iter()
        .map(|r| {
            let own = r.clock.starts_with("fastnow ");
            let mut row = vec![r.clock.clone(), r.updates_by.clone(), r.calls.to_string()];
            row.extend(r.over_per_s.iter().map(|x| format!("{x:.1}")));
            row.push(fmt_short_ns(r.max_ns));
            row.push(if own {
                format!("{} ({:.1})", r.own_reads, r.own_per_s)
            } else {
                "–".to_string()
            });
            row.push(
                match (
                    r.own_median_ns,
                    r.own_max_ns,
                    r.own_max_cpu_ns,
                    &r.own_max_work,
                ) {
                    (Some(m), Some(x), Some(cpu), Some(w)) => format!(
                        "{}, {}; {} of CPU at most ({w})",
                        fmt_short_ns(m),
                        fmt_short_ns(x),
                        fmt_short_ns(cpu)
                    ),
                    _ => "–".to_string(),
                },
            );
            row
        })
        .collect()
}

/// The hybrid logical clock's stamp against the wall reading it is made
/// of, on one thread and with every core stamping (`None` in a report
/// without both rows).
pub fn hlc_line(r: &Report) -> Option<String> {
    let cost = |name: &str| r.costs.iter().find(|c| c.clock == name);
    let (hlc, wall) = (cost("fastnow Hlc::now")?, cost("fastnow unix_nanos")?);
    let all_cores = match (hlc.all_cores_ns_median, wall.all_cores_ns_median) {
        (Some(h), Some(w)) => format!(", {:.2}x with every core stamping", h / w),
        _ => String::new(),
    };
    Some(format!(
        "Hlc::now() (a hybrid logical clock's stamp): {:.2}x unix_nanos() on one thread{all_cores}",
        hlc.ns_median / wall.ns_median,
    ))
}

/// A clock's name in a table, with its role in parentheses if it has one.
fn marked(clock: &str, role: Option<&str>) -> String {
    match role {
        Some(role) => format!("{clock} ({role})"),
        None => clock.to_string(),
    }
}

/// The correctness table's columns.
pub const CORRECTNESS_HEADER: [&str; 4] = [
    "clock",
    "per-thread decreases",
    "strict violations",
    "worst step back",
];

/// The correctness table's rows, the strict test's control clock marked.
pub fn correctness_rows(r: &Report) -> Vec<Vec<String>> {
    let control = r.strict_test.control_clock.as_deref();
    r.correctness
        .iter()
        .map(|c| {
            vec![
                marked(
                    &c.clock,
                    (Some(c.clock.as_str()) == control).then_some("control"),
                ),
                match (c.per_thread_decreases, c.per_thread_reads) {
                    (Some(d), Some(n)) => format!("{d} / {n}"),
                    _ => "–".to_string(),
                },
                format!("{} / {}", c.strict_violations, c.strict_checks),
                c.worst_step_back.map_or("–".to_string(), |w| {
                    step_back(w, c.unit.as_deref(), r.fastnow.freq_hz)
                }),
            ]
        })
        .collect()
}

/// A step back in its clock's unit, with nanoseconds beside ticks and
/// fixed-point seconds: "931 ticks (381 ns)", "0 ns".
pub fn step_back(value: u64, unit: Option<&str>, counter_hz: u64) -> String {
    match unit {
        Some(fastnow_bench::TICKS) if counter_hz > 0 && value > 0 => format!(
            "{value} ticks ({:.0} ns)",
            value as f64 * 1e9 / counter_hz as f64
        ),
        Some(fastnow_bench::FIXED_32) if value > 0 => format!(
            "{value} × 2^-32 s ({:.0} ns)",
            value as f64 * 1e9 / 4_294_967_296.0
        ),
        Some(fastnow_bench::FIXED_32) => "0".to_string(),
        Some(unit) => format!("{value} {unit}"),
        None => value.to_string(),
    }
}

/// (label, value) lines of the MACHINE section.
pub fn machine_rows(r: &Report) -> Vec<(&'static str, String)> {
    let m = &r.machine;
    let f = &r.fastnow;
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let mut rows = vec![
        (
            "cpu",
            format!(
                "{} ({}), {} cores, {}",
                opt(&m.cpu_model),
                opt(&m.cpu_vendor),
                m.cores,
                m.arch
            ),
        ),
        ("kernel", opt(&m.kernel)),
        ("timer flags", m.timer_flags.join(" ")),
        (
            "hypervisor",
            m.hypervisor
                .clone()
                .unwrap_or_else(|| "none reported".into()),
        ),
        (
            "clocksource",
            format!(
                "{} (available: {})",
                opt(&m.clocksource_current),
                m.clocksource_available.join(" ")
            ),
        ),
        (
            "fastnow source",
            format!(
                "{} via {}{}",
                f.source,
                f.counter.as_deref().unwrap_or("-"),
                if f.invariant { " (invariant)" } else { "" }
            ),
        ),
        (
            "frequency",
            if f.freq_origin == "Pending" {
                "pending (the counter's rate was still being measured)".to_string()
            } else {
                format!(
                    "{} Hz ({}; published: {})",
                    f.freq_hz,
                    f.freq_origin,
                    f.published_freq_hz.map_or("none".into(), |h| h.to_string())
                )
            },
        ),
        ("calibration", calibration(f)),
        ("ordered read", f.ordered_read.clone()),
        (
            "monotonic",
            match &r.monotonic {
                Some(m) => format!(
                    "{} at its first reading (one thread), {} once every core had called it",
                    m.start_mode, m.settled_mode
                ),
                None => format!(
                    "{} at start, {} after the report's contention",
                    f.monotonic_mode_at_start, f.monotonic_mode_after_report
                ),
            },
        ),
        (
            "upkeep",
            if f.upkeep {
                "the upkeep thread updates (readers only load)".to_string()
            } else {
                "readers update (no upkeep thread)".to_string()
            },
        ),
        (
            "fallback",
            f.fallback.clone().unwrap_or_else(|| "none".into()),
        ),
    ];
    if let Some(at) = f.demoted_at_unix_ns {
        rows.push((
            "demoted",
            format!(
                "moved to the OS clock at {} (the kernel stopped vouching for the counter)",
                fastnow::UnixTime::from_nanos(at)
            ),
        ));
    }
    if let Some(cs) = &f.kernel_clocksource {
        if Some(cs) != m.clocksource_current.as_ref() {
            rows.push(("kernel said", format!("{cs} at fastnow's last check")));
        }
    }
    if let Some(why) = &f.verdict_unavailable {
        rows.push((
            "kernel's verdict",
            format!("{why} (the decision stands; read again)"),
        ));
    }
    rows.push(("FASTNOW_CLOCK", f.env_override.clone()));
    rows
}

/// The MACHINE section's calibration line. The counter takes over at the
/// first reading after its rate has been measured for a millisecond (the
/// README's "first millisecond"); a process that reads the clock again only
/// later (the report sleeps between its first drift samples) reads the OS
/// clock until then, which the line says where it is so.
pub fn calibration(f: &crate::measure::Chosen) -> String {
    let wait_ms = f.calibration_wait_ns as f64 / 1e6;
    let why = if f.source == "Counter" && wait_ms > 2.0 {
        format!(
            " (the counter takes over at the first reading once its rate has been measured for a millisecond, \
             the \"first millisecond\" of the README; here the first reading after that came {wait_ms:.0} ms in)"
        )
    } else {
        String::new()
    };
    format!(
        "OS clock for the first {wait_ms:.3} ms{why}; rate measured over the last {:.3} s; {} refinements",
        f.calibration_baseline_ns as f64 / 1e9,
        f.refinements
    )
}

/// The largest |rate error| of the drift intervals held to the bound.
pub fn worst_interval(r: &Report) -> Option<f64> {
    let d = r.drift.as_ref()?;
    d.intervals
        .iter()
        .filter(|p| p.0 >= d.bound_from_s)
        .map(|p| p.1)
        .max_by(|a, b| a.abs().total_cmp(&b.abs()))
}

fn fmt_value(v: Option<f64>, unit: &str) -> String {
    match v {
        None => "never".into(),
        Some(v) if unit == "ns" && v >= 1_000_000.0 => format!("{:.3} ms", v / 1e6),
        Some(v) if unit == "ns" && v >= 10_000.0 => format!("{:.1} µs", v / 1e3),
        Some(v) if unit.is_empty() => format!("{v:.0}"),
        Some(v) if unit == "ppm" => format!("{v:.3} ppm"),
        Some(v) if unit == "ms" => format!("{v:.1} ms"),
        Some(v) => format!("{v:.0} {unit}"),
    }
}

/// The fault table's columns.
pub const FAULT_HEADER: [&str; 5] = ["event", "check", "measured", "bound", "result"];

/// One row per check of each fault event (columns of [`FAULT_HEADER`]).
pub fn fault_rows(f: &crate::measure::Faults) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for e in &f.events {
        if e.checks.is_empty() {
            rows.push(vec![
                e.event.clone(),
                String::new(),
                String::new(),
                String::new(),
                "-".into(),
            ]);
        }
        for (i, c) in e.checks.iter().enumerate() {
            rows.push(vec![
                if i == 0 {
                    e.event.clone()
                } else {
                    String::new()
                },
                c.what.clone(),
                fmt_value(c.value, &c.unit),
                format!("≤ {}", fmt_value(Some(c.bound), &c.unit)),
                if c.ok { "ok" } else { "MISSED" }.into(),
            ]);
        }
    }
    rows
}

pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn svg(result: Result<String, std::fmt::Error>) -> String {
    result.unwrap_or_else(|_| "<p>(plot could not be rendered)</p>".into())
}

/// The page's style: one column that reflows on a phone; plots scale to
/// their container.
pub const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:1180px;margin:1.5em auto;padding:0 1em;color:#1a202c;line-height:1.4}\
h1{margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #e2e8f0}\
.sub{color:#4a5568;margin-top:0}\
.verdict{background:#f0f7ff;border-left:4px solid #2b6cb0;padding:.6em 1em}\
table{border-collapse:collapse;margin:.5em 0;font-size:.92em}\
th,td{padding:.25em .6em;border-bottom:1px solid #e2e8f0;text-align:right;vertical-align:top}\
th:first-child,td:first-child{text-align:left}\
.correct td,.faults td,.slow td{white-space:nowrap}.correct td:first-child,.faults td:first-child{white-space:normal}\
.slow td:last-child{white-space:normal;min-width:16em;text-align:left}\
.faults td:nth-child(2),.faults th:nth-child(2){white-space:normal;text-align:left}\
.scroll{overflow-x:auto}\
.kv td:first-child{color:#4a5568;white-space:nowrap}.kv td{text-align:left}.lt td,.lt th{text-align:left}\
.legend{display:flex;flex-wrap:wrap;gap:.4em 1.2em;margin:.4em 0 .8em;font-size:.9em}\
.legend span::before{content:'';display:inline-block;width:.9em;height:.9em;margin-right:.35em;vertical-align:-.1em;background:var(--c)}\
.bars{display:grid;grid-template-columns:max-content 1fr;gap:3px .8em;align-items:center;font-size:.9em}\
.bars .name{text-align:right;white-space:nowrap}\
.track{display:flex;align-items:center;gap:.4em;min-width:0}\
.bar{height:1.1em;background:var(--c);border-radius:0 2px 2px 0;flex:none}\
.val{white-space:nowrap;font-variant-numeric:tabular-nums}\
.f-fastnow{--c:#2b6cb0}.f-os{--c:#dd6b20}.f-baseline{--c:#a0aec0}.f-peer{--c:#38a169}\
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:1em}\
.card{border:1px solid #e2e8f0;border-radius:6px;padding:.5em .8em}\
.card h3{margin:.2em 0;font-size:1em}\
.card table{width:100%}\
.plots{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:1em}\
figure{margin:0}figcaption{font-size:.88em;color:#4a5568}\
svg{max-width:100%;height:auto;display:block}\
svg .poloto_background{fill:#fff}\
svg .poloto_text.poloto_ticks{font-size:19px}svg .poloto_name{font-size:21px}\
.plots svg .poloto_text.poloto_ticks{font-size:22px}.plots svg .poloto_name{font-size:24px}\
svg .poloto_text.poloto_legend{font-size:17px}\
svg .poloto2.poloto_stroke{stroke:red}\
svg.hist{font-family:system-ui,sans-serif}svg.hist text{font-size:14px;fill:#2d3748}svg.hist .axis{stroke:#4a5568}\
svg.hist .grid{stroke:#e2e8f0}svg.hist rect.b{fill:#2b6cb0}svg.hist .mark{stroke:#c53030;stroke-dasharray:3 3}\
svg.hist text.mark{fill:#c53030;stroke:none;font-size:13px}.card td{white-space:nowrap}\
.miss{color:#c53030;font-weight:600}.ok{color:#2f855a}\
.slower{background:#fed7d7}.faster{background:#c6f6d5}.differs{background:#fefcbf}\
details pre{background:#f7fafc;padding:1em;overflow-x:auto;font-size:.82em}\
@media (max-width:600px){body{padding:0 .5em}.bars{grid-template-columns:1fr;gap:0}.bars .name{text-align:left;margin-top:.35em}\
.cards,.plots{grid-template-columns:1fr}table{font-size:.85em}}";

/// Poloto's header for a plot of `w`×`h` units (scaled to the page by CSS).
fn header(w: f64, h: f64) -> poloto::render::Header<()> {
    poloto::header().with_viewbox([w, h]).with_dim([w, h])
}

/// The cost chart: a horizontal bar per clock, cheapest first, one colour per
/// family, the value at the end of each bar (HTML, so it reflows on a phone).
pub fn cost_bars(rows: &[(String, String, f64)]) -> String {
    let mut rows = rows.to_vec();
    rows.sort_by(|a, b| a.2.total_cmp(&b.2));
    let max = rows.iter().map(|r| r.2).fold(0.0, f64::max).max(1e-9);
    let mut out = String::new();
    let _ = write!(out, "<div class=\"legend\">");
    for (kind, label) in FAMILIES {
        if rows.iter().any(|r| r.1 == kind) {
            let _ = write!(out, "<span class=\"f-{kind}\">{label}</span>");
        }
    }
    let _ = write!(out, "</div><div class=\"bars\">");
    for (clock, kind, ns) in &rows {
        let _ = write!(
            out,
            "<span class=\"name\">{}</span><span class=\"track f-{kind}\"><span class=\"bar\" \
             style=\"width:calc((100% - 5.5em) * {:.4})\"></span><span class=\"val\">{}</span></span>",
            escape(clock),
            ns / max,
            fmt_ns(*ns)
        );
    }
    out.push_str("</div>");
    out
}

/// The families of clocks, as `costs[].kind` names them.
pub const FAMILIES: [(&str, &str); 4] = [
    ("fastnow", "fastnow"),
    ("os", "OS / std"),
    ("baseline", "bare instructions"),
    ("peer", "peer crates"),
];

fn fmt_ns(ns: f64) -> String {
    if ns < 10.0 {
        format!("{ns:.2} ns")
    } else {
        format!("{ns:.1} ns")
    }
}

/// A number for an axis: "20", "1.5", "2k", "300k", "1M".
fn tick_label(x: f64) -> String {
    let (v, suffix) = if x >= 1e6 {
        (x / 1e6, "M")
    } else if x >= 1e3 {
        (x / 1e3, "k")
    } else {
        (x, "")
    };
    let v = if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    };
    format!("{v}{suffix}")
}

/// 1, 2 and 5 times the powers of ten within `lo..=hi`.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut decade = 10f64.powf(lo.max(1e-9).log10().floor());
    while decade <= hi {
        for m in [1.0, 2.0, 5.0] {
            let t = decade * m;
            if t >= lo && t <= hi {
                out.push(t);
            }
        }
        decade *= 10.0;
    }
    out
}

/// About six round numbers within `lo..=hi`.
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

/// A histogram as SVG: one bar per bucket `[from, to, count]`, each drawn
/// from its own two edges (so a histogram of n buckets has n bars), on a
/// logarithmic or linear x axis, counts on a logarithmic y axis (so a tail
/// of a few calls shows beside a bulk of thousands), with `marks` (label, x)
/// drawn as dashed lines. Each bar carries its bucket in `data-from`,
/// `data-to` and `data-calls`, and the plot its total in `data-calls`, so
/// that what is drawn can be checked against what was measured.
pub fn histogram_svg(
    buckets: &[(f64, f64, u64)],
    x_label: &str,
    y_label: &str,
    log_x: bool,
    marks: &[(&str, f64)],
) -> String {
    const W: f64 = 440.0;
    const H: f64 = 270.0;
    const LEFT: f64 = 58.0;
    const RIGHT: f64 = 14.0;
    const TOP: f64 = 34.0;
    const BOTTOM: f64 = 46.0;
    let total: u64 = buckets.iter().map(|b| b.2).sum();
    let mut out = format!(
        "<svg class=\"hist\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" \
         data-calls=\"{total}\" role=\"img\">"
    );
    let (Some(first), Some(last)) = (buckets.first(), buckets.last()) else {
        out.push_str("</svg>");
        return out;
    };
    let (x0, x1) = (first.0, last.1.max(first.0 + 1e-9));
    let fx = |x: f64| -> f64 {
        let f = if log_x {
            (x.max(x0) / x0).ln() / (x1 / x0).ln()
        } else {
            (x - x0) / (x1 - x0)
        };
        LEFT + f.clamp(0.0, 1.0) * (W - LEFT - RIGHT)
    };
    let max_calls = buckets.iter().map(|b| b.2).max().unwrap_or(1).max(1);
    // Counts on a log scale up to the next power of ten: log10(1 + n).
    let top = 10f64.powf((max_calls as f64).log10().ceil().max(1.0));
    let fy = |n: f64| -> f64 {
        let f = (1.0 + n).log10() / (1.0 + top).log10();
        H - BOTTOM - f.clamp(0.0, 1.0) * (H - TOP - BOTTOM)
    };
    let base = H - BOTTOM;
    // Grid and y ticks: 1, 10, 100, ...
    let mut n = 1.0;
    while n <= top {
        let y = fy(n);
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            tick_label(n)
        );
        n *= 10.0;
    }
    for &(from, to, calls) in buckets {
        let (xa, xb) = (fx(from), fx(to));
        let y = if calls == 0 { base } else { fy(calls as f64) };
        let _ = write!(
            out,
            "<rect class=\"b\" x=\"{xa:.2}\" y=\"{y:.2}\" width=\"{:.2}\" height=\"{:.2}\" data-from=\"{from}\" \
             data-to=\"{to}\" data-calls=\"{calls}\"><title>{}–{}: {calls}</title></rect>",
            (xb - xa - 0.6).max(0.6),
            base - y,
            tick_label_ns(from),
            tick_label_ns(to)
        );
    }
    // Axes and x ticks.
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{base}\" y2=\"{base}\"/>\
         <line class=\"axis\" x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{base}\"/>",
        W - RIGHT
    );
    let mut ticks = if log_x {
        log_ticks(x0, x1)
    } else {
        linear_ticks(x0, x1)
    };
    // Labels at least this far apart: on a long logarithmic axis, the
    // decades alone.
    const LABEL_GAP: f64 = 34.0;
    if log_x && ticks.windows(2).any(|w| fx(w[1]) - fx(w[0]) < LABEL_GAP) {
        ticks.retain(|t| (t.log10() - t.log10().round()).abs() < 1e-9);
    }
    let mut last = f64::MIN;
    ticks.retain(|&t| {
        let keep = fx(t) - last >= LABEL_GAP;
        if keep {
            last = fx(t);
        }
        keep
    });
    for t in ticks {
        let x = fx(t);
        let _ = write!(
            out,
            "<line class=\"axis\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{base}\" y2=\"{}\"/>\
             <text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            base + 4.0,
            base + 16.0,
            tick_label(t)
        );
    }
    // Marks, labelled along the top, staggered when close.
    let mut last_label_x = f64::MIN;
    let mut row = 0;
    for (label, at) in marks {
        let x = fx(*at);
        row = if x - last_label_x < 40.0 {
            (row + 1) % 2
        } else {
            0
        };
        last_label_x = x;
        let _ = write!(
            out,
            "<line class=\"mark\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{base}\"/>\
             <text class=\"mark\" x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            TOP - 4.0 - 14.0 * f64::from(row),
            escape(label)
        );
    }
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\
         <text x=\"14\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {})\">{}</text></svg>",
        LEFT + (W - LEFT - RIGHT) / 2.0,
        H - 8.0,
        escape(x_label),
        TOP + (base - TOP) / 2.0,
        TOP + (base - TOP) / 2.0,
        escape(y_label)
    );
    out
}

/// A bucket edge for a tooltip: "12.3 ns", "4.5 µs".
fn tick_label_ns(ns: f64) -> String {
    if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

fn latency_card(l: &crate::measure::Latency, control: Option<&str>) -> String {
    let svg = histogram_svg(
        &l.buckets,
        "ns per call (logarithmic)",
        "calls (logarithmic)",
        true,
        &[("p50", l.p50_ns), ("p99", l.p99_ns), ("p99.9", l.p999_ns)],
    );
    let role = if control == Some(l.clock.as_str()) {
        " (the bare counter read: the machine's tail)"
    } else {
        ""
    };
    format!(
        "<div class=\"card\"><h3>{}{role}</h3>{svg}<table><tr><th>p50</th><th>p99</th><th>p99.9</th><th>max</th></tr>\
         <tr><td>{:.1} ns</td><td>{:.1} ns</td><td>{:.1} ns</td><td>{}</td></tr></table></div>",
        escape(&l.clock),
        l.p50_ns,
        l.p99_ns,
        l.p999_ns,
        tick_label_ns(l.max_ns),
    )
}

/// The wall tier's error as a histogram of the samples' signed errors, on
/// a scale that fits them (the bound, far wider, is in the caption), in
/// buckets of whole nanoseconds.
pub fn wall_buckets(samples: &[(f64, i64)]) -> Vec<(f64, f64, u64)> {
    let (Some(lo), Some(hi)) = (
        samples.iter().map(|s| s.1).min(),
        samples.iter().map(|s| s.1).max(),
    ) else {
        return Vec::new();
    };
    let width = ((hi - lo + 1) as f64 / 30.0).ceil().max(1.0) as i64;
    let n = ((hi - lo) / width + 1) as usize;
    let mut buckets: Vec<(f64, f64, u64)> = (0..n)
        .map(|i| {
            let from = lo + i as i64 * width;
            (from as f64, (from + width) as f64, 0)
        })
        .collect();
    for s in samples {
        buckets[((s.1 - lo) / width) as usize].2 += 1;
    }
    buckets
}

/// A line plot of `points` with the bound drawn at ±`bound` from `from_x` on.
fn bounded_plot(
    title: &str,
    xlabel: &str,
    ylabel: &str,
    points: &[(f64, f64)],
    bound: f64,
    from_x: f64,
) -> String {
    let x_end = points.iter().map(|p| p.0).fold(from_x, f64::max);
    let x_start = points
        .iter()
        .map(|p| p.0)
        .fold(f64::MAX, f64::min)
        .max(from_x);
    // No bound line when the samples end before the bound applies.
    let (upper, lower) = if x_end > x_start {
        (
            vec![(x_start, bound), (x_end, bound)],
            vec![(x_start, -bound), (x_end, -bound)],
        )
    } else {
        (Vec::new(), Vec::new())
    };
    // Room above and below the bound lines, so they do not sit on the frame.
    let plots = poloto::plots!(
        build::plot("measured").line(points.iter().copied()),
        build::plot("bound").line(upper),
        build::plot("").line(lower),
        build::markers([], [-1.25 * bound, 1.25 * bound])
    );
    svg(poloto::frame()
        .with_viewbox([800.0, 460.0])
        .with_tick_lines([false, true])
        .build()
        .data(plots)
        .build_and_label((title, xlabel, ylabel))
        .append_to(header(800.0, 460.0).light_theme())
        .render_string())
}

fn table_html(header: &[&str], rows: &[Vec<String>], class: &str) -> String {
    let mut out = format!("<div class=\"scroll\"><table class=\"{class}\">");
    if !header.is_empty() {
        out.push_str("<tr>");
        for h in header {
            let _ = write!(out, "<th>{}</th>", escape(h));
        }
        out.push_str("</tr>");
    }
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div>");
    out
}

/// `(label, value)` rows as a two-column table.
/// A section of (label, value) lines under its title, as the text report
/// prints the MACHINE section.
fn kv_text(out: &mut String, title: &str, rows: &[(&str, String)]) {
    let _ = writeln!(out, "\n{title}");
    for (k, v) in rows {
        let _ = writeln!(out, "  {k:<15}{v}");
    }
}

fn kv_html(rows: &[(&str, String)]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|(k, v)| vec![k.to_string(), v.clone()])
        .collect();
    table_html(&[], &rows, "kv")
}

/// The THREAD CPU TIME section on the page.
fn thread_cpu_html(t: &crate::thread_cpu::ThreadCpu) -> String {
    format!(
        "<h2>Thread CPU time</h2><p class=\"sub\">fastnow::ThreadCpuInstant: its rows in the cost chart above are \
         <i>fastnow ThreadCpuInstant::now</i> and <i>clock_gettime THREAD_CPUTIME_ID</i>.</p>{}",
        kv_html(&crate::thread_cpu::rows(t))
    )
}

/// The CLOCK SNAPSHOT section on the page.
fn snapshot_html(s: &crate::snapshot::Snapshot, go: bool) -> String {
    format!(
        "<h2>Clock snapshot</h2><p class=\"sub\">{}: every clock read together, and a conversion of \
         the precise reading checked against <i>CLOCK_MONOTONIC</i>.</p>{}",
        if go {
            "fastnow.Snapshot"
        } else {
            "fastnow::ClockSnapshot::now"
        },
        kv_html(&crate::snapshot::rows(s, crate::snapshot::conversion_name(go)))
    )
}

/// The TIME ACROSS SUSPEND section on the page.
fn boot_html(b: &crate::boot::Boot) -> String {
    format!(
        "<h2>Time across suspend</h2><p class=\"sub\">fastnow::BootInstant: its rows are <i>fastnow \
         BootInstant::now</i> and <i>clock_gettime BOOTTIME</i>, in the cost chart and among the latencies.</p>{}",
        kv_html(&crate::boot::rows(b))
    )
}

pub fn html(r: &Report) -> String {
    let costs: Vec<(String, String, f64)> = r
        .costs
        .iter()
        .map(|c| (c.clock.clone(), c.kind.clone(), c.ns_median))
        .collect();
    let control = r.strict_test.control_clock.as_deref();
    let cards: String = r.latency.iter().map(|l| latency_card(l, control)).collect();
    let notes: String = cost_notes(r)
        .iter()
        .map(|n| format!("<p>{}</p>", escape(n)))
        .collect();

    let drift = match &r.drift {
        Some(d) => format!(
            "<figure>{}<figcaption>Each point: one interval between two of the {} samples over {:.1} s; \
             {}. Over the whole window: {:+.0} ns ({:+.3} ppm).</figcaption></figure>",
            bounded_plot(
                "Rate error of fastnow::Instant, interval by interval",
                "seconds since the start of the process",
                "ppm against CLOCK_MONOTONIC",
                &d.intervals,
                d.bound_ppm,
                d.bound_from_s,
            ),
            d.samples.len(),
            d.window_s,
            if worst_interval(r).is_some() {
                format!(
                    "lines: the ±{} ppm bound, held from {:.0} s of the process (before that the rate is measured over \
                     windows shorter than a second)",
                    d.bound_ppm, d.bound_from_s
                )
            } else {
                format!(
                    "the ±{} ppm bound holds from {:.0} s of the process (before that the rate is measured over windows \
                     shorter than a second), after this window ended",
                    d.bound_ppm, d.bound_from_s
                )
            },
            d.final_error_ns,
            d.final_error_ppm,
        ),
        None => String::new(),
    };
    let wall = if r.wall.samples.is_empty() {
        String::new()
    } else {
        format!(
            "<figure>{}<figcaption>unix_nanos() − CLOCK_REALTIME (the midpoint of the tightest of 5 brackets) for {} \
             samples 0.5 ms apart, to the nanosecond: every sample within {:.0} ns, against the ±{:.0} ns \
             steady-state bound (off this scale). |error|: median {:.0} ns, p99 {:.0} ns, max {:.0} ns.</figcaption>\
             </figure>",
            histogram_svg(
                &wall_buckets(&r.wall.samples),
                "ns: unix_nanos() − CLOCK_REALTIME",
                "samples (logarithmic)",
                false,
                &[],
            ),
            r.wall.samples.len(),
            r.wall.max_ns,
            r.wall.bound_ns,
            r.wall.median_ns,
            r.wall.p99_ns,
            r.wall.max_ns,
        )
    };
    let slow = match &r.slow_reads {
        Some(s) => format!(
            "<h2>Slowest reads</h2><p class=\"sub\">{:.0} s: {}. Per s: calls at or above the threshold per second of \
             calling the clock, its own reads apart; own: the reads during which fastnow did its own work on the \
             calling thread, per second of the run that way.</p>{}",
            s.seconds,
            escape(&s.method),
            table_html(&SLOW_HEADER, &slow_rows(s), "slow")
        ),
        None => String::new(),
    };
    let latency = if r.latency.is_empty() {
        String::new()
    } else {
        format!(
            "<h2>Latency of single calls</h2><p class=\"sub\">{}. Every call measured is in one bar: buckets of equal \
             ratio from the fastest call to the slowest, both axes logarithmic, so a tail of a few slow calls shows \
             beside the bulk; dashed lines: p50, p99, p99.9.</p><div class=\"cards\">{cards}</div>",
            escape(r.latency_method.as_deref().unwrap_or(""))
        )
    };

    let machine: Vec<Vec<String>> = machine_rows(r)
        .into_iter()
        .map(|(k, v)| vec![k.to_string(), v])
        .collect();
    let faults = match &r.faults {
        None => String::new(),
        Some(f) => {
            let body = match &f.skipped {
                Some(why) => format!("<p>Skipped: {}</p>", escape(why)),
                None => {
                    let mut t = table_html(&FAULT_HEADER, &fault_rows(f), "faults");
                    t = t
                        .replace("<td>MISSED</td>", "<td class=\"miss\">MISSED</td>")
                        .replace("<td>ok</td>", "<td class=\"ok\">ok</td>");
                    if let Some(info) = &f.clock_info_after {
                        let _ = write!(t, "<p>After the events: {}</p>", escape(info));
                    }
                    t
                }
            };
            format!("<h2>Clock faults</h2><p>Injected into the kernel one after another, with readers doing the updates (no upkeep thread); each bound is the one fastnow promises.</p>{body}")
        }
    };

    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>fastnow report</title>\
         <style>{STYLE}</style></head><body>\
         <h1>fastnow report</h1><p class=\"sub\">{}</p>\
         <div class=\"verdict\">{}</div>\
         <h2>Cost per call</h2><p class=\"sub\">One thread, median of interleaved rounds (the full table below has the spread and every core at once).</p>{}{notes}\
         {latency}{slow}\
         <h2>Accuracy</h2><div class=\"plots\">{drift}{wall}</div>\
         {}{}{}\
         <h2>Correctness</h2><p>{}</p>{}\
         <p>recent() age with upkeep at {:.0} ms: median {:.3} ms, p99 {:.3} ms, max {:.3} ms.</p>\
         {faults}\
         <h2>Machine</h2>{}\
         <h2>All figures</h2><details><summary>The text report</summary><pre>{}</pre></details></body></html>",
        escape(&format!(
            "{} run, fastnow {}, {} on {}",
            r.mode,
            r.fastnow_version,
            r.machine.cpu_model.as_deref().unwrap_or("unknown CPU"),
            r.machine.arch
        )),
        r.verdict
            .lines()
            .map(|l| format!("<p>{}</p>", escape(l)))
            .collect::<String>(),
        cost_bars(&costs),
        r.thread_cpu.as_ref().map_or(String::new(), thread_cpu_html),
        r.boot.as_ref().map_or(String::new(), boot_html),
        r.snapshot
            .as_ref()
            .map_or(String::new(), |s| snapshot_html(s, r.language == "go")),
        escape(&format!("Strict test: {}", r.strict_test.note)),
        table_html(&CORRECTNESS_HEADER, &correctness_rows(r), "correct"),
        r.coarse.resolution_ms,
        r.coarse.age_median_ms,
        r.coarse.age_p99_ms,
        r.coarse.age_max_ms,
        table_html(&[], &machine, "kv"),
        escape(&text(r)),
    );
    page
}
