//! Where time comes from: the architectural counters (`arch`), the
//! operating system's clocks and services (`os`), and which of the two the
//! precise clocks read, and why (`detect`).

pub(crate) mod arch;
pub(crate) mod detect;
pub(crate) mod os;
pub(crate) mod thread_cpu;
