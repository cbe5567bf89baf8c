//! Who runs when: the turns of the tests on API servers, and the node's lane.

use std::sync::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Who has the API servers when. The scenarios on a shared server run side by side, each
/// in its own API group and namespace (`shared`, `shared_apiext`), at most `SIDE_BY_SIDE` at a
/// time; a test that needs a server of its own (it restarts the server, changes cluster-wide
/// RBAC, or needs a pristine cluster) runs alone among them: two servers starting on 2 cores
/// only make both slow. The node's tests take a lane of their own (`node_lane`), beside these:
/// a node is a cluster of its own, and its tests mostly wait on pods.
static TURNS: RwLock<()> = RwLock::new(());

/// How many scenarios on the shared servers run at once.
const SIDE_BY_SIDE: usize = 2;

/// The turn of a test with a server of its own: no other test on a server runs meanwhile
/// (the node's tests may).
pub fn own_server() -> RwLockWriteGuard<'static, ()> {
    TURNS.write().unwrap_or_else(|e| e.into_inner())
}

/// The turn of a scenario on a shared server: beside at most `SIDE_BY_SIDE - 1` others.
pub struct SharedTurn {
    _turn: RwLockReadGuard<'static, ()>,
}

static RUNNING_SIDE_BY_SIDE: Mutex<usize> = Mutex::new(0);
static A_PLACE_FREED: Condvar = Condvar::new();

/// The turn of a scenario on a shared server: beside the other such scenarios, when one of
/// the `SIDE_BY_SIDE` places is free.
pub fn shared_turn() -> SharedTurn {
    let turn = TURNS.read().unwrap_or_else(|e| e.into_inner());
    let mut running = RUNNING_SIDE_BY_SIDE
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    while *running >= SIDE_BY_SIDE {
        running = A_PLACE_FREED
            .wait(running)
            .unwrap_or_else(|e| e.into_inner());
    }
    *running += 1;
    SharedTurn { _turn: turn }
}

impl Drop for SharedTurn {
    fn drop(&mut self) {
        let mut running = RUNNING_SIDE_BY_SIDE
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *running -= 1;
        A_PLACE_FREED.notify_one();
    }
}

/// The node's lane: one test on a node at a time (`node::node`, or a node of the test's own),
/// beside the tests on servers.
pub fn node_lane() -> MutexGuard<'static, ()> {
    static ONE: Mutex<()> = Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}
