//! The progress bar of `crd-audit audit` on stderr (only on a terminal).

use std::time::Duration;

/// The progress bar on stderr (only on a terminal).
pub(super) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    crds: usize,
    done: usize,
}

impl Progress {
    pub(super) fn new(shown: bool, crds: usize) -> Progress {
        let bar = shown.then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::stderr_with_hz(4),
            );
            // Two lines: the objects (read of the servers' count, rate, time left), then
            // the CRDs (done of all, the one under way).
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} {elapsed_precise} [{bar:30}] {human_pos}/{human_len} objects, {rate}, ETA {eta}\n  {wide_msg}",
                )
                .map(|s| {
                    s.with_key(
                        "rate",
                        |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                            let _ = write!(w, "{:.0}/s", state.per_sec());
                        },
                    )
                })
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        Progress { bar, crds, done: 0 }
    }

    pub(super) fn counting(&self, i: usize, name: &str) {
        if let Some(b) = &self.bar {
            b.set_message(format!(
                "counting objects: CRD {}/{} {name}",
                i + 1,
                self.crds
            ));
        }
    }

    pub(super) fn set_total(&self, objects: u64) {
        if let Some(b) = &self.bar {
            b.set_length(objects);
            b.reset_eta();
        }
    }

    pub(super) fn crd(&self, name: &str) {
        if let Some(b) = &self.bar {
            b.set_message(format!(
                "CRDs {}/{} done, auditing {name}",
                self.done, self.crds
            ));
        }
    }

    pub(super) fn object(&self) {
        if let Some(b) = &self.bar {
            b.inc(1);
            if b.length().is_some_and(|l| b.position() > l) {
                b.set_length(b.position());
            }
        }
    }

    pub(super) fn crd_done(&mut self) {
        self.done += 1;
    }

    /// Runs `f` with the bar hidden (for writing to a terminal that also shows it).
    pub(super) fn suspend<T>(&self, f: impl FnOnce() -> T) -> T {
        match &self.bar {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    pub(super) fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
