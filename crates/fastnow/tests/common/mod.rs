//! What some targets cannot do: a test that needs it calls one of these
//! first and returns when it says so, having printed why.

/// wasm32-wasip1 has no threads (`thread::spawn` fails there).
#[allow(dead_code)]
pub fn no_threads() -> bool {
    let none = cfg!(all(target_os = "wasi", not(target_feature = "atomics")));
    if none {
        println!("skipped: this target has no threads");
    }
    none
}

/// WASI cannot start processes.
#[allow(dead_code)]
pub fn no_processes() -> bool {
    let none = cfg!(target_os = "wasi");
    if none {
        println!("skipped: this target cannot start processes");
    }
    none
}
