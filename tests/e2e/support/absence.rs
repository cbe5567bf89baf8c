//! What must be gone or empty, read so that a failed request fails the test instead of
//! passing as "nothing there".

use super::Rest;
use serde_json::Value;

/// Whether the object at `path` is gone: its GET answers 404. Any other failure of the GET
/// fails the test (an unreachable server is not an absent object).
pub fn absent(rest: &Rest, path: &str) -> bool {
    match rest.get(path) {
        Ok(_) => false,
        Err(e) if e.status == 404 => true,
        Err(e) => panic!("GET {path}: {e}"),
    }
}

/// The items of a collection that must be listed: a failed list fails the test (it is not
/// an empty one).
pub fn list_ok(rest: &Rest, path: &str) -> Vec<Value> {
    rest.list(path)
        .unwrap_or_else(|e| panic!("listing {path}: {e}"))
}
