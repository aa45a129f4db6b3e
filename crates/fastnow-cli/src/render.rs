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
    let rows: Vec<Vec<String>> = r
        .costs
        .iter()
        .map(|c| {
            vec![
                marked(&c.clock, (c.kind == "peer").then_some("peer")),
                format!("{:.2}", c.ns_median),
                format!("{:.2}–{:.2}", c.ns_min, c.ns_max),
                format!("{:.2}", c.all_cores_ns_median),
                format!("{:.2}x", c.vs_std_instant),
            ]
        })
        .collect();
    table(
        &mut out,
        &[
            "clock",
            "1 thread",
            "min–max",
            "all cores",
            "vs std Instant",
        ],
        &rows,
    );

    let _ = writeln!(out, "\nCORRECTNESS");
    let rows = correctness_rows(r);
    table(
        &mut out,
        &[
            "clock",
            "per-thread decreases",
            "strict violations",
            "worst step back",
        ],
        &rows,
    );
    let _ = writeln!(out, "  strict test: {}", r.strict_test.note);
    let _ = writeln!(
        out,
        "  drift of fastnow::Instant against CLOCK_MONOTONIC over {:.1} s: {:+.0} ns ({:+.3} ppm); worst interval from {:.0} s: {} (bound ±{} ppm)",
        r.drift.window_s,
        r.drift.final_error_ns,
        r.drift.final_error_ppm,
        r.drift.bound_from_s,
        worst_interval(r).map_or("none that long".into(), |p| format!("{p:+.3} ppm")),
        r.drift.bound_ppm
    );
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

    let _ = writeln!(out, "\nLATENCY (ns per call: {})", r.latency_method);
    let rows: Vec<Vec<String>> = r
        .latency
        .iter()
        .map(|l| {
            vec![
                l.clock.clone(),
                format!("{:.1}", l.p50_ns),
                format!("{:.1}", l.p99_ns),
                format!("{:.1}", l.p999_ns),
                format!("{:.0}", l.max_ns),
                l.samples.to_string(),
            ]
        })
        .collect();
    table(
        &mut out,
        &["clock", "p50", "p99", "p99.9", "max", "calls"],
        &rows,
    );

    if let Some(t) = &r.thread_cpu {
        crate::thread_cpu::text(&mut out, t);
    }

    if let Some(b) = &r.boot {
        crate::boot::text(&mut out, b);
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
    let _ = writeln!(out, "\nVERDICT\n  {}", r.verdict);
    out
}

/// A clock's name in a table, with its role in parentheses if it has one.
fn marked(clock: &str, role: Option<&str>) -> String {
    match role {
        Some(role) => format!("{clock} ({role})"),
        None => clock.to_string(),
    }
}

/// The correctness table's rows, the strict test's control clock marked.
fn correctness_rows(r: &Report) -> Vec<Vec<String>> {
    let control = r.strict_test.control_clock.as_deref();
    r.correctness
        .iter()
        .map(|c| {
            vec![
                marked(
                    &c.clock,
                    (Some(c.clock.as_str()) == control).then_some("control"),
                ),
                format!("{} / {}", c.per_thread_decreases, c.per_thread_reads),
                format!("{} / {}", c.strict_violations, c.strict_checks),
                c.worst_step_back.to_string(),
            ]
        })
        .collect()
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
        (
            "calibration",
            format!(
                "OS clock for the first {:.3} ms; rate measured over the last {:.3} s; {} refinements",
                f.calibration_wait_ns as f64 / 1e6,
                f.calibration_baseline_ns as f64 / 1e9,
                f.refinements
            ),
        ),
        ("ordered read", f.ordered_read.clone()),
        (
            "monotonic",
            format!(
                "{} at start, {} after the report's contention",
                f.monotonic_mode_at_start, f.monotonic_mode_after_report
            ),
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
    rows.push(("FASTNOW_CLOCK", f.env_override.clone()));
    rows
}

/// The largest |rate error| of the drift intervals held to the bound.
pub fn worst_interval(r: &Report) -> Option<f64> {
    r.drift
        .intervals
        .iter()
        .filter(|p| p.0 >= r.drift.bound_from_s)
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
.correct td,.faults td{white-space:nowrap}.correct td:first-child,.faults td:first-child{white-space:normal}\
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

fn latency_card(l: &crate::measure::Latency) -> String {
    let plots = poloto::plots!(
        // A log scale, so the tail's few calls show beside the bulk.
        build::plot("").histogram(
            l.buckets
                .iter()
                .map(|&(x, n)| (x, (1.0 + n as f64).log10()))
        ),
        build::markers([], [0.0])
    );
    let svg = svg(poloto::frame()
        .with_viewbox([640.0, 400.0])
        .with_tick_lines([false, true])
        .build()
        .data(plots)
        .build_and_label(("", "ns per call", "log10(1 + calls)"))
        .append_to(header(640.0, 400.0).light_theme())
        .render_string())
    // No title or legend here: crop the margins poloto keeps for them.
    .replace(
        "width=\"640\" height=\"400\" viewBox=\"0 0 640 400\"",
        "width=\"505\" height=\"340\" viewBox=\"15 60 505 340\"",
    );
    format!(
        "<div class=\"card\"><h3>{}</h3>{svg}<table><tr><th>p50</th><th>p99</th><th>p99.9</th><th>max</th></tr>\
         <tr><td>{:.1} ns</td><td>{:.1} ns</td><td>{:.1} ns</td><td>{:.0} ns</td></tr></table></div>",
        escape(&l.clock),
        l.p50_ns,
        l.p99_ns,
        l.p999_ns,
        l.max_ns
    )
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

pub fn html(r: &Report) -> String {
    let costs: Vec<(String, String, f64)> = r
        .costs
        .iter()
        .map(|c| (c.clock.clone(), c.kind.clone(), c.ns_median))
        .collect();
    let cards: String = r.latency.iter().map(latency_card).collect();

    let drift_svg = bounded_plot(
        "Rate error of fastnow::Instant, interval by interval",
        "seconds since the start of the process",
        "ppm against CLOCK_MONOTONIC",
        &r.drift.intervals,
        r.drift.bound_ppm,
        r.drift.bound_from_s,
    );
    let wall_points: Vec<(f64, f64)> = r.wall.samples.iter().map(|&(t, e)| (t, e as f64)).collect();
    let wall_svg = bounded_plot(
        "Error of unix_nanos()",
        "seconds since the first sample",
        "ns against CLOCK_REALTIME",
        &wall_points,
        r.wall.bound_ns,
        0.0,
    );

    let correct_rows = correctness_rows(r);
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
         <div class=\"verdict\"><p>{}</p></div>\
         <h2>Cost per call</h2><p class=\"sub\">One thread, median of interleaved rounds (the full table below has the spread and every core at once).</p>{}\
         <h2>Latency of single calls</h2><p class=\"sub\">{}; histograms from the fastest call to the 99.9th percentile (slower calls in the last bar), calls on a log scale.</p>\
         <div class=\"cards\">{}</div>\
         <h2>Accuracy</h2><div class=\"plots\"><figure>{}<figcaption>Each point: one interval between two of the {} samples over {:.1} s; \
         {}. Over the whole window: {:+.0} ns ({:+.3} ppm).</figcaption></figure>\
         <figure>{}<figcaption>{} samples 0.5 ms apart, to the nanosecond; lines: the ±{:.0} ns steady-state bound. \
         |error|: median {:.0} ns, p99 {:.0} ns, max {:.0} ns.</figcaption></figure></div>\
         <h2>Correctness</h2><p>{}</p>{}\
         <p>recent() age with upkeep at {:.0} ms: median {:.3} ms, p99 {:.3} ms, max {:.3} ms.</p>\
         {}\
         <h2>Machine</h2>{}\
         <h2>All figures</h2><details><summary>The text report</summary><pre>{}</pre></details></body></html>",
        escape(&format!(
            "{} run, fastnow {}, {} on {}",
            r.mode,
            r.fastnow_version,
            r.machine.cpu_model.as_deref().unwrap_or("unknown CPU"),
            r.machine.arch
        )),
        escape(&r.verdict),
        cost_bars(&costs),
        escape(&r.latency_method),
        cards,
        drift_svg,
        r.drift.samples.len(),
        r.drift.window_s,
        if worst_interval(r).is_some() {
            format!(
                "lines: the ±{} ppm bound, held from {:.0} s of the process (before that the rate is measured over \
                 windows shorter than a second)",
                r.drift.bound_ppm, r.drift.bound_from_s
            )
        } else {
            format!(
                "the ±{} ppm bound holds from {:.0} s of the process (before that the rate is measured over windows \
                 shorter than a second), after this window ended",
                r.drift.bound_ppm, r.drift.bound_from_s
            )
        },
        r.drift.final_error_ns,
        r.drift.final_error_ppm,
        wall_svg,
        r.wall.samples.len(),
        r.wall.bound_ns,
        r.wall.median_ns,
        r.wall.p99_ns,
        r.wall.max_ns,
        escape(&format!("Strict test: {}", r.strict_test.note)),
        table_html(
            &[
                "clock",
                "per-thread decreases",
                "strict violations",
                "worst step back",
            ],
            &correct_rows,
            "correct"
        ),
        r.coarse.resolution_ms,
        r.coarse.age_median_ms,
        r.coarse.age_p99_ms,
        r.coarse.age_max_ms,
        faults,
        table_html(&[], &machine, "kv"),
        escape(&text(r)),
    );
    page
}
