//! The end of plan mode: `exit_plan_mode {plan}` shows the plan to the user, who approves it
//! (the session switches to the mode they chose, and the model is told to carry it out) or
//! answers with feedback (planning goes on). Outside plan mode the call is a correctable error.

use crate::bus::ReportEvent;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Agent;
use super::approval::{ApprovalSubject, Question};
use crate::bus::Mode;
use crate::bus::{AgentEvent, Decision, ToolResult};
use crate::llm::AssembledCall;
use crate::session_log::Record;

impl Agent {
    pub(super) async fn answer_plan(
        &mut self,
        call: &AssembledCall,
        args: &Value,
        mode: Mode,
        cancel: &CancellationToken,
    ) -> ToolResult {
        if mode != Mode::Plan {
            return ToolResult::error(format!(
                "not in plan mode (the mode is {mode}): there is no plan to approve; go on \
                 with the work"
            ));
        }
        let plan = match crate::tools::exit_plan_mode::plan_text(args) {
            Ok(plan) => plan,
            Err(err) => return ToolResult::error(err),
        };
        let subject = ApprovalSubject {
            text: plan,
            is_command: false,
        };
        let why = "the model proposes this plan; nothing was changed while planning".into();
        let decision = self
            .ask(call, subject, Question::plain(why), None, cancel)
            .await;
        match decision {
            None => ToolResult::cancelled(),
            Some(Decision::Deny { message }) => {
                let said = message
                    .filter(|m| !m.trim().is_empty())
                    .map(|m| format!(" and said: {m}"))
                    .unwrap_or_default();
                ToolResult::error(format!(
                    "the user did not approve the plan{said}. You are still in plan mode: \
                     revise the plan and call exit_plan_mode again (or ask the user)."
                ))
            }
            Some(Decision::ApprovePlan { mode: chosen }) => self.plan_approved(chosen),
            // A plain approval carries the plan out in the default mode.
            Some(
                Decision::Approve
                | Decision::ApproveUnsandboxed
                | Decision::ApproveForSession { .. }
                | Decision::ApproveForProject { .. },
            ) => self.plan_approved(Mode::default()),
        }
    }

    fn plan_approved(&mut self, chosen: Mode) -> ToolResult {
        // Approving a plan ends planning: "stay in plan" is feedback, not an approval.
        let chosen = if chosen == Mode::Plan {
            Mode::default()
        } else {
            chosen
        };
        self.shared.set_mode(chosen);
        self.record(&Record::Mode { mode: chosen });
        self.emit(AgentEvent::Report(ReportEvent::ModeChanged {
            mode: chosen,
        }));
        ToolResult {
            is_error: false,
            text: format!(
                "the user approved the plan; the permission mode is now {chosen}. Carry out \
                 the plan now."
            ),
            output: None,
        }
    }
}
