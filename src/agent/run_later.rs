//! Files the user's own tools run or obey later (`permissions::run_later`): a file-tool write
//! to one that runs unasked (in `auto`, `never`, or by an allow rule) comes with a warning on
//! its card, and a command's writes to them are named in its result and flagged on its card.
//! In `ask` and `auto-edit` the gate asks for such writes instead.

use super::Agent;
use crate::bus::{AgentEvent, CallId, ToolEvent, ToolResult};
use crate::tool_output::{RareList, ToolOutput};
use crate::tools::Access;

impl Agent {
    /// Warns on the card of a write that runs unasked when the file runs later.
    pub(super) fn warn_runs_later(&self, call: &CallId, access: &Access) {
        let Access::Write { path, .. } = access else {
            return;
        };
        if !path.inside_workspace() {
            return;
        }
        if let Some(why) = self.engine.gate.runs_later(path.as_path()) {
            self.emit(AgentEvent::Tool(ToolEvent::Warned {
                call: call.clone(),
                message: format!("ran without asking: {why}"),
            }));
        }
    }

    /// Names in a command's result the files it created or changed that run later.
    pub(super) fn flag_runs_later(&self, result: &mut ToolResult) {
        let Some(ToolOutput::Command(run)) = result.output.as_mut() else {
            return;
        };
        let flagged: Vec<String> = run
            .changes
            .iter()
            .filter(|c| !c.diff.contains("+++ /dev/null"))
            .filter(|c| {
                self.engine
                    .gate
                    .runs_later(std::path::Path::new(&c.path))
                    .is_some()
            })
            .map(|c| c.path.clone())
            .collect();
        if flagged.is_empty() {
            return;
        }
        result.text.push_str(&format!(
            "\n[this command changed files the user's tools run or obey later: {}; the user is shown them]",
            flagged.join(", ")
        ));
        run.runs_later = RareList::new(flagged);
    }
}
