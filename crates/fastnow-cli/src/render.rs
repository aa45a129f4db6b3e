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
fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |out: &mut String, cells: Vec<&str>| {
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w - cell.chars().count();
            if i == 0 {
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
    let m = &r.machine;
    let f = &r.fastnow;
    let mut out = String::new();
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let _ = writeln!(out, "MACHINE");
    let _ = writeln!(
        out,
        "  cpu            {} ({}), {} cores, {}",
        opt(&m.cpu_model),
        opt(&m.cpu_vendor),
        m.cores,
        m.arch
    );
    let _ = writeln!(out, "  kernel         {}", opt(&m.kernel));
    let _ = writeln!(out, "  timer flags    {}", m.timer_flags.join(" "));
    let _ = writeln!(
        out,
        "  hypervisor     {}",
        m.hypervisor
            .clone()
            .unwrap_or_else(|| "none reported".into())
    );
    let _ = writeln!(
        out,
        "  clocksource    {} (available: {})",
        opt(&m.clocksource_current),
        m.clocksource_available.join(" ")
    );
    let _ = writeln!(
        out,
        "  fastnow source {} via {}",
        f.source,
        f.counter.unwrap_or("-")
    );
    let _ = writeln!(
        out,
        "  frequency      {} Hz ({}; published: {})",
        f.freq_hz,
        f.freq_origin,
        f.published_freq_hz.map_or("none".into(), |h| h.to_string())
    );
    let _ = writeln!(
        out,
        "  calibration    first wait {:.3} ms; now measured over {:.3} s, {} refinements",
        f.calibration_wait_ns as f64 / 1e6,
        f.calibration_baseline_ns as f64 / 1e9,
        f.refinements
    );
    let _ = writeln!(out, "  ordered read   {}", f.ordered_read);
    let _ = writeln!(
        out,
        "  monotonic      {} at start, {} after the report's contention",
        f.monotonic_mode_at_start, f.monotonic_mode_after_report
    );
    let _ = writeln!(
        out,
        "  fallback       {}",
        f.fallback.clone().unwrap_or_else(|| "none".into())
    );
    let _ = writeln!(out, "  FASTNOW_CLOCK  {}", f.env_override);

    let _ = writeln!(out, "\nCOST (ns per call; median of interleaved rounds; all cores = every core calling at once)");
    let rows: Vec<Vec<String>> = r
        .costs
        .iter()
        .map(|c| {
            vec![
                format!(
                    "{}{}",
                    c.clock,
                    if c.kind == "peer" { " (peer)" } else { "" }
                ),
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
    let rows: Vec<Vec<String>> = r
        .correctness
        .iter()
        .map(|c| {
            vec![
                c.clock.to_string(),
                format!("{} / {}", c.per_thread_decreases, c.per_thread_reads),
                format!("{} / {}", c.strict_violations, c.strict_checks),
                c.worst_step_back.to_string(),
            ]
        })
        .collect();
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
    let _ = writeln!(
        out,
        "  drift of fastnow::Instant against CLOCK_MONOTONIC over {:.1} s: {:+.0} ns ({:+.3} ppm)",
        r.drift.window_s, r.drift.final_error_ns, r.drift.final_error_ppm
    );
    let _ = writeln!(
        out,
        "  unix_nanos() against CLOCK_REALTIME: median {:.0} ns, p99 {:.0} ns, max {:.0} ns",
        r.wall.median_ns, r.wall.p99_ns, r.wall.max_ns
    );
    let _ = writeln!(
        out,
        "  recent() age with upkeep at {:.0} ms: median {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        r.coarse.resolution_ms, r.coarse.age_median_ms, r.coarse.age_p99_ms, r.coarse.age_max_ms
    );
    let _ = writeln!(out, "\nVERDICT\n  {}", r.verdict);
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn svg(result: Result<String, std::fmt::Error>) -> String {
    result.unwrap_or_else(|_| "<p>(plot could not be rendered)</p>".into())
}

pub fn html(r: &Report) -> String {
    // Cost bars: one thread, slowest at the top.
    let mut costs: Vec<(f64, String)> = r
        .costs
        .iter()
        .map(|c| (c.ns_median, c.clock.to_string()))
        .collect();
    costs.sort_by(|a, b| b.0.total_cmp(&a.0));
    let cost_svg = svg(poloto::build::bar::gen_simple("", costs, [0.0])
        .label(("Cost per call, one thread", "ns per call (median)", ""))
        .append_to(
            poloto::header()
                .with_viewbox([800.0, 800.0])
                .with_dim([800.0, 800.0])
                .light_theme(),
        )
        .render_string());

    let latency_svgs: Vec<String> = r
        .latency
        .iter()
        .map(|h| {
            let plots = poloto::plots!(
                build::plot(h.clock).histogram(h.buckets.iter().map(|&(x, n)| (x, n as f64))),
                build::markers([], [0.0])
            );
            svg(poloto::frame_build()
                .data(plots)
                .build_and_label((
                    format!("Latency: {}", h.clock),
                    "ns per call (batches of 64)",
                    "batches",
                ))
                .append_to(poloto::header().light_theme())
                .render_string())
        })
        .collect();

    let drift_plots = poloto::plots!(
        build::plot("fastnow − CLOCK_MONOTONIC").line(r.drift.samples.iter().copied()),
        build::markers([], [0.0])
    );
    let drift_svg = svg(poloto::frame_build()
        .data(drift_plots)
        .build_and_label((
            "Drift of fastnow::Instant",
            "seconds since the start",
            "fastnow − CLOCK_MONOTONIC (ns)",
        ))
        .append_to(poloto::header().light_theme())
        .render_string());

    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>fastnow report</title>\
         <style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}}\
         pre{{background:#f6f6f6;padding:1em;overflow-x:auto}} svg{{max-width:100%;height:auto}}\
         .bars svg{{overflow:visible;margin-left:180px;max-width:calc(100% - 180px)}} .bars .poloto_background{{display:none}} .poloto_legend{{display:none}}</style></head><body>\
         <h1>fastnow report</h1><p>{}</p><h2>Verdict</h2><p>{}</p><h2>Cost</h2><div class=\"bars\">{}</div><h2>Latency</h2>{}<h2>Drift</h2>{}\
         <h2>All figures</h2><pre>{}</pre></body></html>",
        escape(&format!("{} mode, fastnow {}", r.mode, r.fastnow_version)),
        escape(&r.verdict),
        cost_svg,
        latency_svgs.join("\n"),
        drift_svg,
        escape(&text(r)),
    );
    page
}
