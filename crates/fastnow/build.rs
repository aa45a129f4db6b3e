//! One configuration flag the source cannot get from `cfg` on a stable
//! compiler: whether a 32-bit Arm target is ARMv7 or later.
//!
//! The armv7 counter backend (`source/arch/arm.rs`) needs `ISB`, which
//! ARMv6 lacks; rustc knows the `v7` target feature but reports Arm target
//! features to `cfg` only on nightly. The target's name says it on every
//! compiler (`armv7-…`, `thumbv7…`, `armv8…`), so this script sets
//! `fastnow_arm_v7` from it, and the source accepts either.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-check-cfg=cfg(fastnow_arm_v7)");
    let target = std::env::var("TARGET").unwrap_or_default();
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("arm") && arm_v7_or_later(&target) {
        println!("cargo:rustc-cfg=fastnow_arm_v7");
    }
}

/// Whether a 32-bit Arm target triple names ARMv7 or later.
fn arm_v7_or_later(target: &str) -> bool {
    let arch = target.split('-').next().unwrap_or("");
    ["armv7", "thumbv7", "armv8", "thumbv8"]
        .iter()
        .any(|p| arch.starts_with(p))
}
