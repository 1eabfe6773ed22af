//! The start-up check of the model endpoint in the TUI: one cheap request in the background,
//! so the screen comes up at once; the result arrives over the bus (`EndpointChecked`), and a
//! failure shows as a warning before the user's first message has to find out.

use crate::bus::ReportEvent;
use std::sync::Arc;
use std::time::Duration;

use super::Agent;
use crate::bus::AgentEvent;

/// Longest wait for the endpoint to answer the check. A slow answer is not an error: the
/// warning says the server did not answer in this time, and the first request waits longer.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

impl Agent {
    /// Starts the check when a user is there to read its warning (the TUI; `exec` finds out
    /// from its one request and says so itself).
    pub(super) fn check_endpoint_in_background(&self) {
        // A subagent's parent checked the endpoint already.
        if !self.settings.interactive || self.settings.child.is_some() {
            return;
        }
        let model = Arc::clone(&self.engine.model);
        let events = self.events.clone();
        tokio::spawn(async move {
            let problem = match model.check_endpoint(CHECK_TIMEOUT).await {
                Ok(()) => None,
                Err(error) => {
                    tracing::info!(%error, "the start-up check of the model endpoint failed");
                    Some(warning_text(&error.to_string()))
                }
            };
            let _ = events.send(AgentEvent::Report(ReportEvent::EndpointChecked { problem }));
        });
    }
}

/// The warning: what was checked first, the client's own explanation (which names the URL
/// and the setting to check) after.
fn warning_text(error: &str) -> String {
    format!("start-up check: {error}")
}
