//! `fastnow report --compare A.json B.json`: two saved reports side by side
//! (two machines, or one machine before and after a change).

use crate::measure::{CorrectRow, CostRow, Report, SCHEMA_VERSION};
use crate::render::{escape, machine_rows, table, table_aligned, worst_interval, STYLE};
use std::fmt::Write as _;
use std::path::Path;

/// The cost table's columns, in text and HTML.
const COST_HEADER: [&str; 8] = [
    "clock",
    "A",
    "A min–max",
    "B",
    "B min–max",
    "B/A",
    "A all cores",
    "B all cores",
];

/// The correctness table's columns, in text and HTML.
const CORRECTNESS_HEADER: [&str; 5] = [
    "clock",
    "A strict violations",
    "B strict violations",
    "A per-thread decreases",
    "B per-thread decreases",
];

/// A report read from a file, with the name it is shown under.
pub struct Loaded {
    pub name: String,
    pub report: Report,
}

/// Reads one JSON report, with an error that says which file and what is
/// wrong with it: a Go report is told apart from a Rust one, and an older
/// report of either is named as such, with the command that writes a
/// current one.
fn load_one(path: &Path) -> Result<Loaded, String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "{name} is not JSON ({e}); --compare takes files written by `fastnow report --json` \
             or `fastnow-report -json` (Go)"
        )
    })?;
    let version = value
        .get("schema_version")
        .ok_or_else(|| {
            format!("{name} is not a fastnow report (no schema_version field); --compare takes files written by \
                     `fastnow report --json` or `fastnow-report -json` (Go)")
        })?
        .as_u64()
        .ok_or_else(|| format!("{name}: schema_version is not a number"))?;
    // A Go report says so (`language`) from schema 3 on; before, it was
    // the one with `gomaxprocs` and the package's `source` object.
    let go = value.get("language").and_then(|l| l.as_str()) == Some("go")
        || (value.get("gomaxprocs").is_some() && value.get("machine").is_none());
    if version != u64::from(SCHEMA_VERSION) {
        let rerun = if go {
            "`go run ./cmd/fastnow-report -json` in the repository's go directory"
        } else {
            "`fastnow report --json`"
        };
        return Err(format!(
            "{name} is a {} of schema_version {version}, and this fastnow reads {SCHEMA_VERSION} (the schema both \
             languages' reports share, spec/report.schema.json): re-run {rerun} with this version to compare",
            if go { "Go report" } else { "Rust report" }
        ));
    }
    let report: Report = serde_json::from_value(value)
        .map_err(|e| format!("{name} is not a complete fastnow report: {e}"))?;
    Ok(Loaded { name, report })
}

/// Reads both files; they must be reports of this schema sharing at least
/// one measured clock (by name, or across languages by role).
pub fn load(a: &Path, b: &Path) -> Result<(Loaded, Loaded), String> {
    let (a, b) = (load_one(a)?, load_one(b)?);
    let side = Side {
        a: &a.report,
        b: &b.report,
    };
    if !side.pairs().iter().any(|(x, y)| x.is_some() && y.is_some()) {
        return Err(format!(
            "{} and {} have no measured clock in common: nothing to compare",
            a.name, b.name
        ));
    }
    Ok((a, b))
}

/// The rule that decides a cost changed by more than noise.
pub const NOISE_RULE: &str = "a ratio is marked when the two runs' min–max ranges of rounds do not overlap \
     (B's fastest round slower than A's slowest: slower; B's slowest faster than A's fastest: faster)";

/// How B's cost compares to A's, beyond each run's own spread.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Change {
    Slower,
    Faster,
    Noise,
}

fn change(a: &crate::measure::CostRow, b: &crate::measure::CostRow) -> Change {
    if b.ns_min > a.ns_max {
        Change::Slower
    } else if b.ns_max < a.ns_min {
        Change::Faster
    } else {
        Change::Noise
    }
}

struct Side<'a> {
    a: &'a Report,
    b: &'a Report,
}

/// "–" where a report lacks a figure: "– (not in a Go report)" when that
/// report is a Go one (which measures less), "–" otherwise.
fn missing(r: &Report) -> String {
    if r.language == "go" {
        "– (not in a Go report)".to_string()
    } else {
        "–".to_string()
    }
}

impl<'a> Side<'a> {
    /// Whether the two reports come from different languages: their rows
    /// are then matched by role, not by name.
    fn across(&self) -> bool {
        self.a.language != self.b.language
    }

    /// How rows of the two reports are matched: by name within a language,
    /// by role across (a row without a role has no counterpart there). A
    /// clock's role is its cost row's (`role`), or the one this fastnow
    /// knows for its name.
    fn key(&self, r: &Report, clock: &str) -> String {
        if !self.across() {
            return format!("name:{clock}");
        }
        let role = r
            .costs
            .iter()
            .find(|c| c.clock == clock)
            .and_then(|c| c.role.clone())
            .or_else(|| crate::measure::role(clock).map(str::to_string));
        role.map_or(format!("name:{clock}"), |r| format!("role:{r}"))
    }

    /// Every row of A's (`rows(a)`) paired with B's for the same clock: A's
    /// in order, then B's that A lacks.
    fn paired<T>(
        &self,
        rows: impl Fn(&'a Report) -> &'a [T],
        clock: impl Fn(&T) -> &str,
    ) -> Vec<(Option<&'a T>, Option<&'a T>)> {
        let (a, b) = (rows(self.a), rows(self.b));
        let key_a = |t: &T| self.key(self.a, clock(t));
        let key_b = |t: &T| self.key(self.b, clock(t));
        let mut out: Vec<(Option<&T>, Option<&T>)> = a
            .iter()
            .map(|x| {
                let k = key_a(x);
                (Some(x), b.iter().find(|y| key_b(y) == k))
            })
            .collect();
        for y in b {
            let k = key_b(y);
            if !a.iter().any(|x| key_a(x) == k) {
                out.push((None, Some(y)));
            }
        }
        out
    }

    /// Every cost row paired with the other report's for the same clock.
    fn pairs(&self) -> Vec<(Option<&'a CostRow>, Option<&'a CostRow>)> {
        self.paired(|r| &r.costs, |c| &c.clock)
    }

    /// A row's label: the clock's name, or across languages both names.
    fn label(a: Option<&CostRow>, b: Option<&CostRow>) -> String {
        match (a, b) {
            (Some(a), Some(b)) if a.clock != b.clock => format!("{} / {}", a.clock, b.clock),
            (Some(c), _) | (None, Some(c)) => c.clock.clone(),
            (None, None) => String::new(),
        }
    }

    /// (clock, A median, A range, B median, B range, B/A, all cores A, B, change)
    fn cost_rows(&self) -> Vec<(Vec<String>, Change)> {
        self.pairs()
            .into_iter()
            .map(|(a, b)| {
                let med =
                    |c: Option<&CostRow>| c.map_or("–".into(), |c| format!("{:.2}", c.ns_median));
                let range = |c: Option<&CostRow>| {
                    c.map_or("–".into(), |c| format!("{:.2}–{:.2}", c.ns_min, c.ns_max))
                };
                let all = |c: Option<&CostRow>, r: &Report| match c {
                    None => "–".into(),
                    Some(c) => c
                        .all_cores_ns_median
                        .map_or_else(|| missing(r), |x| format!("{x:.2}")),
                };
                let (ratio, ch) = match (a, b) {
                    (Some(a), Some(b)) => {
                        let ch = change(a, b);
                        let mark = match ch {
                            Change::Slower => " slower",
                            Change::Faster => " faster",
                            Change::Noise => "",
                        };
                        (format!("{:.2}x{mark}", b.ns_median / a.ns_median), ch)
                    }
                    _ => ("–".into(), Change::Noise),
                };
                (
                    vec![
                        Side::label(a, b),
                        med(a),
                        range(a),
                        med(b),
                        range(b),
                        ratio,
                        all(a, self.a),
                        all(b, self.b),
                    ],
                    ch,
                )
            })
            .collect()
    }

    fn correctness_rows(&self) -> Vec<Vec<String>> {
        let rows = self.paired(|r| &r.correctness, |c| &c.clock);
        let strict = |c: Option<&CorrectRow>| {
            c.map_or("–".into(), |c| {
                format!("{} / {}", c.strict_violations, c.strict_checks)
            })
        };
        let back = |c: Option<&CorrectRow>, r: &Report| match c {
            None => "–".into(),
            Some(c) => match (c.per_thread_decreases, c.per_thread_reads) {
                (Some(d), Some(n)) => format!("{d} / {n}"),
                _ => missing(r),
            },
        };
        rows.into_iter()
            .map(|(a, b)| {
                let label = match (a, b) {
                    (Some(a), Some(b)) if a.clock != b.clock => {
                        format!("{} / {}", a.clock, b.clock)
                    }
                    (Some(c), _) | (None, Some(c)) => c.clock.clone(),
                    (None, None) => String::new(),
                };
                vec![
                    label,
                    strict(a),
                    strict(b),
                    back(a, self.a),
                    back(b, self.b),
                ]
            })
            .collect()
    }

    fn accuracy_rows(&self) -> Vec<Vec<String>> {
        let (a, b) = (self.a, self.b);
        let both = |what: &str, f: &dyn Fn(&Report) -> Option<String>| {
            vec![
                what.to_string(),
                f(a).unwrap_or_else(|| missing(a)),
                f(b).unwrap_or_else(|| missing(b)),
            ]
        };
        let mut rows = vec![
            both("strict test", &|r| {
                Some(if r.strict_test.conclusive {
                    "could fail (control failed)".into()
                } else {
                    "too short to tell".into()
                })
            }),
            both("drift over the window", &|r| {
                r.drift.as_ref().map(|d| {
                    format!(
                        "{:+.0} ns ({:+.3} ppm) over {:.1} s",
                        d.final_error_ns, d.final_error_ppm, d.window_s
                    )
                })
            }),
            both("worst interval rate error", &|r| {
                r.drift.as_ref()?;
                Some(worst_interval(r).map_or("–".into(), |p| format!("{p:+.3} ppm")))
            }),
            both("unix_nanos() error median / p99 / max", &|r| {
                Some(format!(
                    "{:.0} / {:.0} / {:.0} ns",
                    r.wall.median_ns, r.wall.p99_ns, r.wall.max_ns
                ))
            }),
            both("recent() age p99", &|r| {
                Some(format!("{:.3} ms", r.coarse.age_p99_ms))
            }),
        ];
        for l in &a.latency {
            if let Some(m) = b.latency.iter().find(|m| m.clock == l.clock) {
                rows.push(vec![
                    format!("{} latency p50 / p99 / p99.9", l.clock),
                    format!("{:.1} / {:.1} / {:.1} ns", l.p50_ns, l.p99_ns, l.p999_ns),
                    format!("{:.1} / {:.1} / {:.1} ns", m.p50_ns, m.p99_ns, m.p999_ns),
                ]);
            }
        }
        if a.latency.is_empty() != b.latency.is_empty() {
            rows.push(both("latency of single calls", &|r| {
                (!r.latency.is_empty()).then(|| format!("{} clocks", r.latency.len()))
            }));
        }
        rows
    }

    fn machine_rows(&self) -> Vec<Vec<String>> {
        let (a, b) = (machine_rows(self.a), machine_rows(self.b));
        let mut keys: Vec<&str> = a.iter().map(|r| r.0).collect();
        for r in &b {
            if !keys.contains(&r.0) {
                keys.push(r.0);
            }
        }
        let get = |rows: &[(&str, String)], k: &str| {
            rows.iter()
                .find(|r| r.0 == k)
                .map_or("–".to_string(), |r| r.1.clone())
        };
        let run = |r: &Report| {
            format!(
                "{}, {} run, fastnow {}",
                r.kind(),
                r.mode,
                r.fastnow_version
            )
        };
        let mut rows: Vec<Vec<String>> = vec![vec!["run".into(), run(self.a), run(self.b)]];
        rows.extend(
            keys.into_iter()
                .map(|k| vec![k.to_string(), get(&a, k), get(&b, k)]),
        );
        rows
    }
}

fn notes(a: &Loaded, b: &Loaded) -> Vec<String> {
    let mut notes = Vec::new();
    if a.report.language != b.report.language {
        notes.push(format!(
            "A is a {} and B a {}: rows are matched by what the clock is for (fastnow Instant::now beside \
             fastnow.Nanotime, std Instant::now beside time.Since), and each language's clocks cost what its calls \
             cost (Go's include a function call); a Go report has no all-cores figures, per-thread checks, \
             latency, slowest reads or drift, and says so in those cells",
            a.report.kind(),
            b.report.kind()
        ));
    }
    if a.report.mode != b.report.mode {
        notes.push(format!(
            "A is a {} run and B a {} run: a quick run has fewer, shorter rounds, so its spread is wider",
            a.report.mode, b.report.mode
        ));
    }
    if a.report.machine.arch != b.report.machine.arch {
        notes.push(format!(
            "different architectures ({} and {}): the bare instruction rows are different instructions",
            a.report.machine.arch, b.report.machine.arch
        ));
    }
    notes
}

pub fn text(a: &Loaded, b: &Loaded) -> String {
    let side = Side {
        a: &a.report,
        b: &b.report,
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "COMPARE\n  A = {} ({})\n  B = {} ({})",
        a.name,
        a.report.kind(),
        b.name,
        b.report.kind()
    );
    for n in notes(a, b) {
        let _ = writeln!(out, "  note: {n}");
    }
    let _ = writeln!(out, "\nMACHINE");
    table_aligned(&mut out, &["", "A", "B"], &side.machine_rows(), 3);

    let _ = writeln!(
        out,
        "\nCOST (ns per call, one thread: median and min–max of rounds; all cores: median per thread)\n  {NOISE_RULE}"
    );
    let rows: Vec<Vec<String>> = side.cost_rows().into_iter().map(|r| r.0).collect();
    table(&mut out, &COST_HEADER, &rows);
    let changed = side
        .cost_rows()
        .iter()
        .filter(|r| r.1 != Change::Noise)
        .count();
    let _ = writeln!(
        out,
        "  {changed} of {} clocks changed by more than noise",
        rows.len()
    );

    let _ = writeln!(out, "\nCORRECTNESS");
    table(&mut out, &CORRECTNESS_HEADER, &side.correctness_rows());
    let _ = writeln!(out, "\nACCURACY");
    table_aligned(&mut out, &["", "A", "B"], &side.accuracy_rows(), 3);
    out
}

fn table_html(header: &[&str], rows: &[Vec<String>], classes: &[&str], class: &str) -> String {
    let mut out = format!("<div class=\"scroll\"><table class=\"{class}\"><tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>");
    for (i, row) in rows.iter().enumerate() {
        let class = classes.get(i).copied().unwrap_or("");
        let _ = write!(out, "<tr class=\"{class}\">");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div>");
    out
}

pub fn html(a: &Loaded, b: &Loaded) -> String {
    let side = Side {
        a: &a.report,
        b: &b.report,
    };
    let costs = side.cost_rows();
    let classes: Vec<&str> = costs
        .iter()
        .map(|r| match r.1 {
            Change::Slower => "slower",
            Change::Faster => "faster",
            Change::Noise => "",
        })
        .collect();
    let rows: Vec<Vec<String>> = costs.into_iter().map(|r| r.0).collect();
    let machine = side.machine_rows();
    let differs: Vec<&str> = machine
        .iter()
        .map(|r| if r[1] != r[2] { "differs" } else { "" })
        .collect();
    let notes: String = notes(a, b)
        .iter()
        .map(|n| format!("<p>Note: {}</p>", escape(n)))
        .collect();
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>fastnow report: comparison</title>\
         <style>{STYLE}</style></head><body><h1>fastnow report: comparison</h1>\
         <p class=\"sub\">A = {} ({})<br>B = {} ({})</p>{notes}\
         <h2>Cost per call</h2><p class=\"sub\">ns per call. {} <span class=\"slower\">slower</span> \
         <span class=\"faster\">faster</span></p>{}\
         <h2>Correctness</h2>{}<h2>Accuracy</h2>{}<h2>Machine</h2><p class=\"sub\">Rows that differ are \
         <span class=\"differs\">marked</span>.</p>{}</body></html>",
        escape(&a.name),
        a.report.kind(),
        escape(&b.name),
        b.report.kind(),
        escape(&format!("The ratio is B/A; {NOISE_RULE}.")),
        table_html(
            &COST_HEADER,
            &rows,
            &classes,
            ""
        ),
        table_html(
            &CORRECTNESS_HEADER,
            &side.correctness_rows(),
            &[],
            ""
        ),
        table_html(&["", "A", "B"], &side.accuracy_rows(), &[], "lt"),
        table_html(&["", "A", "B"], &machine, &differs, "lt"),
    )
}
