//! Coalesced redraws: state changes only *request* a frame; the main loop draws when one is
//! due, at most once per `MIN_INTERVAL` (~60 fps). With nothing requested, nothing is drawn
//! and the loop sleeps (idle CPU stays at zero).

use std::time::{Duration, Instant};

/// Shortest time between two frames.
pub const MIN_INTERVAL: Duration = Duration::from_millis(16);

#[derive(Debug)]
pub struct FrameScheduler {
    /// When the next frame is due, if one is wanted.
    due: Option<Instant>,
    last_draw: Option<Instant>,
}

impl Default for FrameScheduler {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameScheduler {
    pub fn new() -> Self {
        Self {
            due: None,
            last_draw: None,
        }
    }

    /// Ask for a frame as soon as the rate cap allows.
    pub fn request(&mut self, now: Instant) {
        let earliest = self
            .last_draw
            .map_or(now, |last| (last + MIN_INTERVAL).max(now));
        self.request_at(earliest);
    }

    /// Ask for a frame no later than `at` (animations: spinners, countdowns).
    pub fn request_at(&mut self, at: Instant) {
        let at = match self.last_draw {
            Some(last) => at.max(last + MIN_INTERVAL),
            None => at,
        };
        self.due = Some(self.due.map_or(at, |due| due.min(at)));
    }

    pub fn due(&self) -> Option<Instant> {
        self.due
    }

    pub fn is_due(&self, now: Instant) -> bool {
        self.due.is_some_and(|due| due <= now)
    }

    /// A frame was drawn: nothing is wanted until the next request.
    pub fn drawn(&mut self, now: Instant) {
        self.due = None;
        self.last_draw = Some(now);
    }

    /// Sleeps until the next frame is due; never returns when none is wanted.
    pub async fn next_due(&self) {
        match self.due {
            Some(due) => tokio::time::sleep_until(due.into()).await,
            None => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_between_frames_coalesce_into_one_capped_frame() {
        let t0 = Instant::now();
        let mut frames = FrameScheduler::new();
        assert_eq!(
            frames.due(),
            None,
            "nothing is drawn until something changed"
        );
        frames.request(t0);
        assert!(frames.is_due(t0));
        frames.drawn(t0);
        assert_eq!(frames.due(), None);
        for ms in 1..10 {
            frames.request(t0 + Duration::from_millis(ms));
        }
        assert_eq!(
            frames.due(),
            Some(t0 + MIN_INTERVAL),
            "many changes, one frame, rate capped"
        );
    }

    #[test]
    fn an_animation_request_never_delays_an_earlier_frame() {
        let t0 = Instant::now();
        let mut frames = FrameScheduler::new();
        frames.request_at(t0 + Duration::from_millis(500));
        frames.request(t0);
        assert_eq!(frames.due(), Some(t0));
    }
}
