//! The engine installs no panic hook of its own: a program's hook sees the panics the engine
//! catches, until the program asks for the quiet one. The hook is process-wide, and other
//! tests of this binary panic on purpose: the test runs itself again in a child process where
//! it is the only test.

use crd_audit_engine::panic_guard;
use std::sync::atomic::{AtomicUsize, Ordering};

static SEEN: AtomicUsize = AtomicUsize::new(0);

/// Set in the child process, which then runs the test's body.
const ALONE: &str = "CRD_AUDIT_ENGINE_PANIC_HOOK_TEST_ALONE";

#[test]
fn the_programs_hook_stays_until_it_asks_for_the_quiet_one() {
    if std::env::var_os(ALONE).is_none() {
        let name = "panic_hook::the_programs_hook_stays_until_it_asks_for_the_quiet_one";
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name, "--test-threads=1"])
            .env(ALONE, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "the test alone in a child process: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
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
