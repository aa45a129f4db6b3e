//! Targets without a counter backend: everything uses the OS clock.

use super::Probe;

#[inline(always)]
pub(crate) fn ticks() -> u64 {
    crate::source::os::monotonic_nanos()
}

#[inline(always)]
pub(crate) fn ticks_ordered(_alt: bool) -> u64 {
    crate::source::os::monotonic_nanos()
}

pub(crate) fn probe() -> Probe {
    Probe {
        counter: None,
        invariant: false,
        freq: None,
        ordered_read: "",
        ordered_read_alt: "",
        use_alt: false,
        hypervisor: None,
        disabled: false,
    }
}
