//! The first `recent()` of a process starts upkeep (unless disabled).

mod common;

#[test]
fn first_recent_starts_upkeep() {
    if common::no_threads() {
        return;
    }
    assert_eq!(
        fastnow::upkeep_resolution(),
        None,
        "nothing runs before first use"
    );
    let _ = fastnow::recent();
    assert_eq!(
        fastnow::upkeep_resolution(),
        Some(fastnow::DEFAULT_RESOLUTION)
    );
    let seen = fastnow::recent();
    assert!(
        common::recent_advances_past(seen),
        "the upkeep does not refresh"
    );
    assert!(fastnow::stop_upkeep());
}
