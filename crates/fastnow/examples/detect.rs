//! Prints the clock fastnow chose on this machine, how it was calibrated, and
//! a few readings checked against the OS clock.
use fastnow::{Instant, MonotonicInstant, OrderedInstant};
use std::time::Duration;

fn main() {
    let first = std::time::Instant::now();
    let t = Instant::now();
    let e = t.elapsed();
    let startup = first.elapsed();
    let info = fastnow::clock_info();
    println!("source:        {:?}", info.source);
    println!("counter:       {}", info.counter.unwrap_or("none"));
    println!("ordered read:  {}", info.ordered_read);
    println!(
        "frequency:     {} Hz ({:?})",
        info.freq_hz, info.freq_origin
    );
    println!(
        "calibration:   waited {:?}, baseline {:?}",
        info.calibration_time, info.calibration_baseline
    );
    println!("first now()+elapsed(): {startup:?} (elapsed said {e:?})");
    if let Some(why) = info.fallback {
        println!("fallback:      {why}");
    }
    println!("FASTNOW_CLOCK: {:?}", info.env_override);
    println!(
        "clocksource:   {}",
        info.kernel_clocksource
            .map(|c| c.to_string())
            .unwrap_or("unknown".into())
    );
    println!("hypervisor:    {}", info.hypervisor().unwrap_or("none"));
    println!("summary:       {info}");
    for pause in [1u64, 10, 100] {
        let std_start = std::time::Instant::now();
        let start = Instant::now();
        let (m, o) = (MonotonicInstant::now(), OrderedInstant::now());
        std::thread::sleep(Duration::from_millis(pause));
        let ours = start.elapsed();
        let theirs = std_start.elapsed();
        println!(
            "sleep {pause:>3} ms: Instant {ours:?}, std {theirs:?}, Monotonic {:?}, Ordered {:?}",
            m.elapsed(),
            o.elapsed()
        );
    }
    let info = fastnow::clock_info();
    println!(
        "after 111 ms:  {} Hz, baseline {:?}, {} refinements",
        info.freq_hz, info.calibration_baseline, info.refinements
    );
}
