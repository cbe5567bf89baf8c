//! The blocking threads CPU-heavy engine work runs on, shared by the operator's audits and the
//! gate's reviews: at most one job a core at once, and a panic in a job is that job's error
//! ([`Panicked`]), never the end of the process.

use std::sync::Arc;
use tokio::sync::Semaphore;

/// A bound on the engine jobs running at once; cloning shares the bound.
#[derive(Clone, Debug)]
pub struct JudgingPool {
    permits: Arc<Semaphore>,
}

/// Engine work that panicked (a bug of crd-audit): what the panic said.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Panicked(pub String);

impl Panicked {
    /// What a caught panic said (its payload, when it is a message).
    pub fn of(panic: Box<dyn std::any::Any + Send>) -> Panicked {
        Panicked(
            panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic with no message".to_string()),
        )
    }
}

impl JudgingPool {
    /// At most `jobs` at once (at least one).
    pub fn new(jobs: usize) -> JudgingPool {
        JudgingPool {
            permits: Arc::new(Semaphore::new(jobs.max(1))),
        }
    }

    /// One job a core of this machine (its cgroup's share, as the standard library reads it).
    pub fn one_per_core() -> JudgingPool {
        JudgingPool::new(std::thread::available_parallelism().map_or(2, |n| n.get()))
    }

    /// Runs `f` on a blocking thread once a job's turn comes. The turn is held until `f`
    /// returns, even when the caller stops waiting for it: the bound holds for the threads.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Panicked> {
        let turn = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Panicked("the judging pool was closed".into()))?;
        let job = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            crd_audit_engine::panic_guard::catch(f)
        });
        match job.await {
            Ok(done) => done.map_err(Panicked),
            Err(e) => Err(Panicked(e.to_string())),
        }
    }

    /// Jobs that may start now.
    pub fn free(&self) -> usize {
        self.permits.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_is_the_jobs_error_and_frees_its_turn() {
        let pool = JudgingPool::new(1);
        assert_eq!(pool.run(|| 2 + 2).await.unwrap(), 4);
        let e = pool
            .run(|| -> u32 { panic!("a bug met on an input") })
            .await
            .unwrap_err();
        assert!(e.0.contains("a bug met on an input"), "{e}");
        assert_eq!(pool.free(), 1);
        assert_eq!(pool.run(|| "still serving").await.unwrap(), "still serving");
    }

    #[tokio::test]
    async fn no_more_jobs_run_than_the_pool_allows() {
        let pool = JudgingPool::new(2);
        let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let jobs = (0..8).map(|_| {
            let (running, most) = (running.clone(), most.clone());
            pool.run(move || {
                let now = running.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                most.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(20));
                running.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
            })
        });
        for done in futures::future::join_all(jobs).await {
            done.unwrap();
        }
        assert_eq!(most.load(std::sync::atomic::Ordering::SeqCst), 2);
        assert_eq!(JudgingPool::new(0).free(), 1);
    }

    #[tokio::test]
    async fn a_job_whose_caller_stops_waiting_keeps_its_turn_until_it_ends() {
        let pool = JudgingPool::new(1);
        let (started, release) = (
            Arc::new(std::sync::Barrier::new(2)),
            Arc::new(std::sync::Barrier::new(2)),
        );
        let job = {
            let (started, release) = (started.clone(), release.clone());
            let pool = pool.clone();
            tokio::spawn(async move {
                pool.run(move || {
                    started.wait();
                    release.wait();
                })
                .await
            })
        };
        tokio::task::spawn_blocking({
            let started = started.clone();
            move || started.wait()
        })
        .await
        .unwrap();
        job.abort();
        assert_eq!(pool.free(), 0, "the thread still runs");
        tokio::task::spawn_blocking(move || release.wait())
            .await
            .unwrap();
        for _ in 0..100 {
            if pool.free() == 1 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the turn was never given back");
    }
}
