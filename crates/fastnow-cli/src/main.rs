//! `fastnow`: what fastnow does on this machine.
//!
//!     fastnow report [--quick] [--json] [--html FILE] [--window DURATION] [--faults]
//!     fastnow report --compare A.json B.json [--html FILE]
//!     fastnow info

mod boot;
mod compare;
mod info;
mod measure;
mod render;
mod snapshot;
mod thread_cpu;
mod verdict;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "fastnow",
    version,
    about = "Inspect this machine's clocks and measure fastnow against the OS and its peers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Inspect the machine, measure every clock, and recommend one.
    ///
    /// Sections:
    ///
    /// MACHINE — CPU, invariant-TSC and related flags, hypervisor, the kernel's current and
    /// available clocksources, the counter fastnow chose, its frequency and how it was obtained,
    /// the calibration, and the reason for any fallback.
    ///
    /// COST — nanoseconds per call (median and min–max of interleaved rounds) of every fastnow
    /// clock, std's Instant and SystemTime, clock_gettime (MONOTONIC, MONOTONIC_COARSE, REALTIME),
    /// the bare counter and quanta, minstant, fastant and coarsetime (unless built without the
    /// default `peers` feature); on one thread and on every core at once; each with its ratio to
    /// std::time::Instant::now().
    ///
    /// CORRECTNESS — per-thread monotonicity and the strict cross-thread test (a reading taken after
    /// an Acquire load that saw another thread's reading must not be smaller) for each clock, its
    /// two threads pinned to two CPUs, with the bare counter read as the control (if even that
    /// never fails, the report says the run was too short to tell); drift of fastnow::Instant
    /// against CLOCK_MONOTONIC over --window; the wall tier's error against CLOCK_REALTIME, to the
    /// nanosecond; the coarse tier's staleness with upkeep at 1 ms.
    ///
    /// THREAD CPU TIME — the route fastnow::ThreadCpuInstant takes here and why (the perf page; or,
    /// where the page offers no user-space time, the perf event's ioctl or the OS call, whichever
    /// the process measured cheaper at first use, with both costs; or the OS call and why the page
    /// was refused), its cost against clock_gettime(CLOCK_THREAD_CPUTIME_ID), and its agreement
    /// with that clock over a busy loop and a sleep.
    ///
    /// TIME ACROSS SUSPEND — how fastnow::BootInstant reads here and why (the counter's line plus
    /// the boot offset, or the boot clock itself on the OS source), its cost against
    /// clock_gettime(CLOCK_BOOTTIME) and Instant::now(), and its agreement with CLOCK_BOOTTIME over
    /// an interval (1 s; 0.2 s with --quick).
    ///
    /// LATENCY — per-call latency percentiles (p50, p99, p99.9, max) of fastnow's, std's and the
    /// OS's main clocks, and how they were measured.
    ///
    /// VERDICT — which fastnow clock to use here, for which job, each compared with the std clock
    /// it would replace by the measured ratio ("2.1× faster than", "about as fast as", "1.7×
    /// slower than"). A clock measured slower than std's is not recommended. When the figures are
    /// unsteady (rounds that disagree, or costs and latencies that disagree on which clock is
    /// cheaper) they are measured again, up to three times in all; if they stay unsteady, the
    /// verdict says the machine was too busy to conclude and gives the figures with their spread.
    ///
    /// FAULTS (--faults, root only) — clock faults injected into the kernel, one row per event
    /// with the bound fastnow is held to.
    ///
    /// With --compare A.json B.json, measures nothing and sets two saved JSON reports side by side.
    #[command(after_help = concat!(
        "The method and the JSON fields: REPORT.md, the crate's page at https://crates.io/crates/fastnow-cli/",
        env!("CARGO_PKG_VERSION")
    ))]
    Report(ReportArgs),
    /// Print the clock fastnow chose and why, without measuring: the source, the reason (the
    /// kernel's clocksource and its verdict, or the fallback), the frequency and how it was
    /// obtained, the calibration, MonotonicInstant's strategy, the thread CPU route, and
    /// fastnow's one-line summary.
    Info,
}

#[derive(clap::Args)]
pub struct ReportArgs {
    /// About 5 seconds instead of the thorough run (under a minute).
    #[arg(long)]
    pub quick: bool,
    /// Print JSON (its fields are documented in REPORT.md, linked below) instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML page with plots to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Drift window, e.g. 10s, 1500ms, 1m (default 10s; 2s with --quick; 100ms to 10m).
    #[arg(long, value_name = "DURATION", value_parser = parse_window)]
    pub window: Option<Duration>,
    /// After the other measurements, inject clock faults into the kernel (NTP frequency and
    /// tick changes, ±1 s steps, a clocksource switch) and check fastnow's bounds through each.
    /// Needs CAP_SYS_TIME (root); moves this machine's clock for about 70 s (30 s with
    /// --quick); the clocksource switch leaves this process on the OS clock.
    #[arg(long)]
    pub faults: bool,
    /// Measure nothing: set two JSON reports (from --json) side by side, with the cost ratios
    /// B/A that changed by more than the runs' own spread marked.
    #[arg(
        long,
        num_args = 2,
        value_names = ["A.json", "B.json"],
        conflicts_with_all = ["quick", "json", "window", "faults"]
    )]
    pub compare: Option<Vec<PathBuf>>,
}

fn parse_window(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s).map_err(|e| format!("{e} (examples: 10s, 1500ms, 1m)"))?;
    if d < Duration::from_millis(100) || d > Duration::from_secs(600) {
        return Err(format!("{s} is outside 100ms..10m"));
    }
    Ok(d)
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Info => {
            let _ = fastnow::Instant::now().elapsed();
            out(&info::text(&fastnow::clock_info()));
            ExitCode::SUCCESS
        }
        Command::Report(args) => match report(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("fastnow report: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

fn report(args: ReportArgs) -> Result<(), String> {
    // Fail on an unwritable output before spending a minute measuring; write
    // to a temporary file beside it and rename at the end, so a failure never
    // leaves a partial page.
    let html = match &args.html {
        Some(path) => Some(render::PendingFile::create(path)?),
        None => None,
    };
    if let Some(files) = &args.compare {
        let (a, b) = compare::load(&files[0], &files[1])?;
        out(&compare::text(&a, &b));
        if let Some(file) = html {
            let path = file.commit(&compare::html(&a, &b))?;
            out(&format!("HTML comparison written to {}\n", path.display()));
        }
        return Ok(());
    }
    if args.faults {
        if let Some(why) = measure::faults_unavailable() {
            eprintln!("fastnow report: --faults skipped: {why}");
        }
    }
    let report = measure::run(&args);
    if args.json {
        out(&(serde_json::to_string_pretty(&report).map_err(|e| e.to_string())? + "\n"));
    } else {
        out(&render::text(&report));
    }
    if let Some(file) = html {
        let path = file.commit(&render::html(&report))?;
        if !args.json {
            out(&format!("HTML report written to {}\n", path.display()));
        }
    }
    Ok(())
}

/// Prints to stdout; a reader that went away (`| head`) is not an error.
fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("fastnow: cannot write the report: {e}");
            std::process::exit(1);
        }
    }
}
