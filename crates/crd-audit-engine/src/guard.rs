//! The last line of defence against bugs in the engine: a panic while judging one object or
//! one CRD is caught and becomes an internal error for that object or CRD, and the caller
//! goes on with the rest.
//!
//! [`catch`] runs a closure under [`std::panic::catch_unwind`] and returns the panic's
//! message. The library installs no panic hook of its own: the process's hook (by default,
//! Rust's, which prints `thread '...' panicked at ...`) sees the panic as usual. A program
//! that reports the caught panic itself can call [`install_quiet_hook`] once at start: while
//! a guarded closure runs on a thread, that hook prints nothing and keeps the message and
//! location for [`catch`] to return, so the panic is reported once, as part of the result;
//! panics outside a guarded closure go to the hook installed before.
//!
//! This only works when panics unwind (the default); a `panic = "abort"` profile would end
//! the process instead.
//!
//! [`fault_point`] is a test hook, compiled in only with the `fault-injection` feature:
//! `CRD_AUDIT_INJECT_PANIC=site:name` then makes the engine panic at that site for the object
//! or CRD of that name, so that tests of a program can check that a panic is contained.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, PanicHookInfo};
use std::sync::Once;

thread_local! {
    /// How many guarded closures are running on this thread.
    static GUARDED: Cell<usize> = const { Cell::new(0) };
    /// What the hook saw of the last panic of a guarded closure on this thread.
    static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
}

static INSTALL: Once = Once::new();

/// The text of a panic payload (`panic!` with a literal or a formatted message).
fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with no message".to_string()
    }
}

fn describe(info: &PanicHookInfo<'_>) -> String {
    let message = payload_text(info.payload());
    match info.location() {
        Some(l) => format!("{message} (at {}:{}:{})", l.file(), l.line(), l.column()),
        None => message,
    }
}

/// Installs (once per process) the panic hook that keeps the panics of guarded closures for
/// [`catch`] to return with their location, instead of printing them. Other panics go to the
/// hook installed before.
pub fn install_quiet_hook() {
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let guarded = GUARDED.try_with(Cell::get).unwrap_or(0) > 0;
            if guarded
                && CAUGHT
                    .try_with(|c| *c.borrow_mut() = Some(describe(info)))
                    .is_ok()
            {
                return;
            }
            previous(info);
        }));
    });
}

/// Runs `f`; a panic inside it is returned as `Err` with its message (and its location, when
/// [`install_quiet_hook`] was called; the panic is then not printed).
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    GUARDED.with(|g| g.set(g.get() + 1));
    let result = std::panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get() - 1));
    result.map_err(|payload| {
        CAUGHT
            .with(|c| c.borrow_mut().take())
            .unwrap_or_else(|| payload_text(&*payload))
    })
}

/// Panics when the test hook `CRD_AUDIT_INJECT_PANIC` is `site:name` (read once per
/// process, with the `fault-injection` feature only); does nothing otherwise. Sites:
/// `validate` (object name), `check` and `compile` (CRD name).
#[inline]
pub fn fault_point(site: &str, name: &str) {
    #[cfg(test)]
    if TEST_TARGET.with(|t| {
        t.borrow()
            .as_ref()
            .is_some_and(|(s, n)| s == site && n == name)
    }) {
        panic!("injected panic at {site} for {name}");
    }
    #[cfg(feature = "fault-injection")]
    {
        static TARGET: std::sync::OnceLock<Option<(String, String)>> = std::sync::OnceLock::new();
        let target = TARGET.get_or_init(|| {
            let spec = std::env::var("CRD_AUDIT_INJECT_PANIC").ok()?;
            let (s, n) = spec.split_once(':')?;
            Some((s.to_string(), n.to_string()))
        });
        if let Some((s, n)) = target
            && s == site
            && n == name
        {
            panic!("injected panic at {site} for {name} (CRD_AUDIT_INJECT_PANIC)");
        }
    }
    #[cfg(not(any(test, feature = "fault-injection")))]
    let _ = (site, name);
}

#[cfg(test)]
thread_local! {
    static TEST_TARGET: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Makes [`fault_point`] panic at `site` for `name` on this thread (unit tests).
#[cfg(test)]
pub fn inject_on_this_thread(site: &str, name: &str) {
    TEST_TARGET.with(|t| *t.borrow_mut() = Some((site.to_string(), name.to_string())));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message_and_location() {
        install_quiet_hook();
        let r: Result<(), String> = catch(|| panic!("boom {}", 7));
        let e = r.unwrap_err();
        assert!(e.starts_with(&format!("boom 7 (at {}:", file!())), "{e}");
        assert_eq!(catch(|| 5), Ok(5));
    }

    #[test]
    fn nested_guards_report_the_inner_panic() {
        install_quiet_hook();
        let outer: Result<(), String> = catch(|| {
            let inner: Result<(), String> = catch(|| panic!("inner"));
            assert!(inner.unwrap_err().starts_with("inner"));
            panic!("outer")
        });
        let e = outer.unwrap_err();
        assert!(e.starts_with("outer"), "{e}");
    }

    #[test]
    fn injected_faults_fire_only_for_their_site_and_name() {
        install_quiet_hook();
        inject_on_this_thread("check", "a.example.com");
        assert!(catch(|| fault_point("check", "b.example.com")).is_ok());
        assert!(catch(|| fault_point("validate", "a.example.com")).is_ok());
        let e = catch(|| fault_point("check", "a.example.com")).unwrap_err();
        assert!(
            e.contains("injected panic at check for a.example.com"),
            "{e}"
        );
    }
}
