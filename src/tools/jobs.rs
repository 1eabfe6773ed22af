//! Background jobs started by `bash` with `background: true`: their output buffers, and the
//! guarantee that every job dies when the session ends.

use std::collections::HashMap;
use std::sync::Mutex;

/// The session's background jobs, by id.
#[derive(Default)]
pub struct JobTable {
    jobs: Mutex<HashMap<String, ()>>,
}

impl JobTable {
    /// Number of jobs still tracked.
    pub fn len(&self) -> usize {
        self.jobs.lock().map(|jobs| jobs.len()).unwrap_or(0)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
