//! `counter-skew [SECONDS]`: whether this machine's cores agree on their
//! counters, with no fastnow code in the way. One thread stores ordered
//! counter reads (Release), another loads them (Acquire) and reads its own
//! counter right after: a smaller value means the second core's counter is
//! behind the first's by more than the time the value took to travel. The
//! same for `CLOCK_MONOTONIC`, which rests on the same counters. fastnow's
//! cross-thread guarantees hold to this agreement (spec/SEMANTICS.md); the
//! fault tests count violations within it apart (`COUNTER_AGREEMENT_TICKS`).

#[cfg(not(unix))]
fn main() {
    println!("SKIPPED: the probe reads clock_gettime, a Unix call");
}

#[cfg(unix)]
fn main() {
    probe::main();
}

#[cfg(unix)]
mod probe {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    /// A reader the probe runs: its name and the read.
    struct Probe {
        name: &'static str,
        unit: &'static str,
        read: fn() -> u64,
    }

    fn monotonic_ns() -> u64 {
        fastnow_bench::clock_gettime_ns(libc::CLOCK_MONOTONIC)
    }

    fn probes() -> Vec<Probe> {
        let mut v = Vec::new();
        #[cfg(target_arch = "aarch64")]
        v.push(Probe {
            name: "ISB;MRS CNTVCT_EL0",
            unit: "ticks",
            read: fastnow_bench::raw::isb_cntvct,
        });
        #[cfg(target_arch = "x86_64")]
        {
            v.push(Probe {
                name: "LFENCE;RDTSC",
                unit: "ticks",
                read: fastnow_bench::raw::lfence_rdtsc,
            });
            // SAFETY: CPUID exists on every x86_64 CPU, and leaf 0x8000_0001
            // on every one (it holds the long-mode bit). (`__cpuid` is a safe
            // function on newer compilers, an unsafe one on older.)
            #[allow(unused_unsafe)]
            let has_rdtscp = unsafe { std::arch::x86_64::__cpuid(0x8000_0001) }.edx >> 27 & 1 == 1;
            if has_rdtscp {
                v.push(Probe {
                    name: "RDTSCP",
                    unit: "ticks",
                    read: fastnow_bench::raw::rdtscp,
                });
            }
        }
        v.push(Probe {
            name: "clock_gettime(CLOCK_MONOTONIC)",
            unit: "ns",
            read: monotonic_ns,
        });
        v
    }

    /// (checks, violations, the largest) over `secs` seconds.
    fn run(read: fn() -> u64, secs: f64) -> (u64, u64, u64) {
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..2)
            .map(|role| {
                let (stop, shared) = (stop.clone(), shared.clone());
                std::thread::spawn(move || {
                    let (mut checks, mut bad, mut worst) = (0u64, 0u64, 0u64);
                    while !stop.load(Ordering::Relaxed) {
                        // The fault tests' checkers' rhythm: bursts, then a
                        // short sleep, so the threads move between cores.
                        for _ in 0..1_000 {
                            if role == 0 {
                                shared.store(read(), Ordering::Release);
                            } else {
                                let seen = shared.load(Ordering::Acquire);
                                let now = read();
                                checks += 1;
                                if now < seen {
                                    bad += 1;
                                    worst = worst.max(seen - now);
                                }
                            }
                        }
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    (checks, bad, worst)
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
        threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .fold((0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2.max(b.2)))
    }

    pub fn main() {
        let secs: f64 = match std::env::args().nth(1) {
            None => 60.0,
            Some(a) => match a.parse() {
                Ok(s) if s > 0.0 => s,
                _ => {
                    eprintln!("usage: counter-skew [SECONDS > 0] (default 60 per probe)");
                    std::process::exit(2);
                }
            },
        };
        println!(
            "cross-core counter agreement: {} cores, {secs} s per probe",
            std::thread::available_parallelism().map_or(0, |n| n.get())
        );
        for p in probes() {
            let (checks, bad, worst) = run(p.read, secs);
            println!(
                "{:32} {checks:>12} checks, {bad:>4} readings below the one they followed, by up to {worst} {}",
                p.name, p.unit
            );
        }
    }
}
