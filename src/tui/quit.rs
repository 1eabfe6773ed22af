//! When the TUI quits: a second Ctrl+C within `QUIT_WINDOW` of the first, `/quit` (the
//! first one only warns while jobs run), `q` in a replay.

use std::time::{Duration, Instant};

/// How long a first Ctrl+C waits for the second that quits.
pub const QUIT_WINDOW: Duration = Duration::from_secs(2);

#[derive(Debug, Default)]
pub struct Quitting {
    /// When the last Ctrl+C came, until another key disarms it.
    armed: Option<Instant>,
    /// `/quit` warned that running jobs would be stopped: the next `/quit` quits.
    jobs_warned: bool,
    requested: bool,
}

impl Quitting {
    /// A Ctrl+C at `now`: true when it is the second within the window (the TUI quits);
    /// else it arms the next one.
    pub fn ctrl_c(&mut self, now: Instant) -> bool {
        if self
            .armed
            .is_some_and(|at| now.saturating_duration_since(at) <= QUIT_WINDOW)
        {
            self.requested = true;
            return true;
        }
        self.armed = Some(now);
        false
    }

    /// Any other key: the next Ctrl+C is a first one again.
    pub fn disarm(&mut self) {
        self.armed = None;
    }

    /// `/quit` with `running_jobs`: false (warn first) the first time jobs would be stopped.
    pub fn quit_command(&mut self, running_jobs: usize) -> bool {
        if running_jobs > 0 && !self.jobs_warned {
            self.jobs_warned = true;
            return false;
        }
        self.requested = true;
        true
    }

    pub fn request(&mut self) {
        self.requested = true;
    }

    pub fn requested(&self) -> bool {
        self.requested
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_ctrl_c_quits_only_within_the_window_and_another_key_disarms_it() {
        let start = Instant::now();
        let mut quit = Quitting::default();
        assert!(!quit.ctrl_c(start));
        assert!(!quit.ctrl_c(start + QUIT_WINDOW + Duration::from_millis(1)));
        quit.disarm();
        assert!(!quit.ctrl_c(start + QUIT_WINDOW * 2));
        assert!(quit.ctrl_c(start + QUIT_WINDOW * 2 + Duration::from_millis(500)));
        assert!(quit.requested());
    }

    #[test]
    fn quit_warns_once_while_jobs_run() {
        let mut quit = Quitting::default();
        assert!(!quit.quit_command(2));
        assert!(!quit.requested());
        assert!(quit.quit_command(2));
        assert!(quit.requested());
    }
}
