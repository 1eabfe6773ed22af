//! Diagnostics that came after their edit's result went out ("diagnostics pending"): kept
//! per edit and handed to the model as one note at its next step. A result already sent is
//! never rewritten.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{DiagOutcome, Lsp};
use crate::sync::MutexExt;

/// An edit whose diagnostics were still pending when its result went out: its outcome lands
/// in `outcome` when it comes.
pub(super) struct Late {
    pub(super) display: String,
    pub(super) outcome: Arc<std::sync::Mutex<Option<DiagOutcome>>>,
    pub(super) done: Arc<std::sync::atomic::AtomicBool>,
}

impl Lsp {
    /// Diagnostics that arrived for earlier edits after their results went out: one note for
    /// the model's next step (none when nothing came). A result already sent is never
    /// rewritten.
    pub fn take_late_notes(&self) -> Option<String> {
        let warnings = self.inner.settings.warnings;
        let mut late = self.inner.late.locked();
        let mut parts = Vec::new();
        late.retain(|item| {
            if !item.done.load(std::sync::atomic::Ordering::Acquire) {
                return true;
            }
            if let Some(block) = item.outcome.locked().take().and_then(|o| o.block(warnings)) {
                parts.push(format!(
                    "Diagnostics that were pending for your edit of {}:{block}",
                    item.display
                ));
            }
            false
        });
        (!parts.is_empty()).then(|| format!("[lsp] {}", parts.join("\n\n")))
    }

    /// Whether some edit's diagnostics are still pending.
    pub fn pending(&self) -> usize {
        self.inner.late.locked().len()
    }

    /// Waits until every pending edit's diagnostics came (or `limit` passed); for tests and
    /// `cairn tool run`.
    pub async fn settle_pending(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            let waiting = self
                .inner
                .late
                .locked()
                .iter()
                .any(|l| !l.done.load(std::sync::atomic::Ordering::Acquire));
            if !waiting {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
