//! The engine installs no panic hook of its own: a program's hook sees the panics the engine
//! catches, until the program asks for the quiet one. (Its own test binary: the hook is
//! process-wide.)

use crd_audit_engine::panic_guard;
use std::sync::atomic::{AtomicUsize, Ordering};

static SEEN: AtomicUsize = AtomicUsize::new(0);

#[test]
fn the_programs_hook_stays_until_it_asks_for_the_quiet_one() {
    std::panic::set_hook(Box::new(|_| {
        SEEN.fetch_add(1, Ordering::SeqCst);
    }));
    let caught: Result<(), String> = panic_guard::catch(|| panic!("first"));
    assert_eq!(caught.unwrap_err(), "first");
    assert_eq!(
        SEEN.load(Ordering::SeqCst),
        1,
        "the program's hook saw the panic"
    );

    panic_guard::install_quiet_hook();
    let caught: Result<(), String> = panic_guard::catch(|| panic!("second"));
    let message = caught.unwrap_err();
    assert!(
        message.starts_with(&format!("second (at {}:", file!())),
        "{message}"
    );
    assert_eq!(
        SEEN.load(Ordering::SeqCst),
        1,
        "a guarded panic is kept quiet"
    );
    // A panic outside a guard still reaches the program's hook.
    let outside = std::thread::spawn(|| panic!("third")).join();
    assert!(outside.is_err());
    assert_eq!(SEEN.load(Ordering::SeqCst), 2);
}
