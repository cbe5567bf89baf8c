//! The progress bar of the long one-shot commands (`migrate`, `roundtrip`) on stderr, drawn
//! only on a terminal.

use std::time::Duration;

/// The progress bar on stderr (only on a terminal).
pub(crate) struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    pub(crate) fn new(shown: bool) -> Bar {
        Bar(shown.then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::stderr_with_hz(4),
            );
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} {elapsed_precise} [{bar:30}] {human_pos}/{human_len} {msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        }))
    }

    pub(crate) fn phase(&self, what: &str, total: u64) {
        if let Some(b) = &self.0 {
            b.set_position(0);
            b.set_length(total);
            b.set_message(what.to_string());
        }
    }

    pub(crate) fn at(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.set_position(n);
            if b.length().is_some_and(|l| n > l) {
                b.set_length(n);
            }
        }
    }

    pub(crate) fn suspend<T>(&self, f: impl FnOnce() -> T) -> T {
        match &self.0 {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    pub(crate) fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}
