//! Putting a held call to the user: the approval question and what the prompt shows, waiting
//! for the decision (recorded and published), and carrying it out — the sandbox the call runs
//! in, a rule for the session or the project, or the result it gets instead.

use crate::bus::ReportEvent;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::Agent;
use super::guard::guarded;
use crate::bus::{AgentEvent, Decision, DecisionKind, ToolEvent, ToolResult};
use crate::llm::AssembledCall;
use crate::permissions::trust::TrustStore;
use crate::process::Grant;
use crate::session_log::Record;
use crate::tools::{Access, ToolCx};

/// What an approval prompt asks about a held call.
pub(super) struct Question {
    pub why: String,
    /// What "approve for the session" would allow (empty: no rule is offered).
    pub prefix: String,
    /// Every dangerous part of a command, as the gate found them.
    pub dangers: Vec<String>,
    /// What a held command's sandbox would let it reach beyond the workspace.
    pub reach: Option<String>,
}

impl Question {
    /// A question that offers no rule and holds nothing dangerous.
    pub fn plain(why: String) -> Self {
        Self {
            why,
            prefix: String::new(),
            dangers: Vec::new(),
            reach: None,
        }
    }
}

/// Why a call that was put to the user does not run: its result, and whether it was because
/// nobody could answer (a headless run stops then).
pub(super) struct Refusal {
    pub result: ToolResult,
    pub headless: bool,
}

/// What an approval prompt shows as the held thing: a command, a path, or a plan.
pub(super) struct ApprovalSubject {
    pub text: String,
    pub is_command: bool,
}

pub(super) fn subject_of(call: &AssembledCall, access: &Access) -> ApprovalSubject {
    let text = match access {
        Access::Command { command, .. } => command.clone(),
        Access::Write { display, .. }
        | Access::WriteProtected { display, .. }
        | Access::ReadGuarded { display, .. } => display.clone(),
        Access::Network { url, .. } => url.clone(),
        Access::Mcp {
            server,
            tool,
            arguments,
            ..
        } => format!("MCP {server} · {tool} {arguments}"),
        Access::Delegate { agent, description } => format!("subagent {agent}: {description}"),
        Access::Read | Access::Session => call.name.clone(),
    };
    ApprovalSubject {
        text,
        is_command: matches!(access, Access::Command { .. }),
    }
}

impl Agent {
    /// Holds a call the gate asks about until the user decides, and carries the decision out:
    /// the sandbox the call runs in, or the result it gets instead (headless: nobody can
    /// answer, so it does not run).
    pub(super) async fn put_to_user(
        &mut self,
        call: &AssembledCall,
        (args, access): (&Value, &Access),
        question: Question,
        grant: Grant,
        cancel: &CancellationToken,
    ) -> Result<Grant, Refusal> {
        if !self.settings.interactive {
            return Err(Refusal {
                result: ToolResult::error(format!(
                    "this call needs the user's approval ({}), and nobody can approve it in this headless run (mode {}). It was not run.",
                    question.why,
                    self.shared.mode()
                )),
                headless: true,
            });
        }
        let preview = self.engine.registry.get(&call.name).and_then(|tool| {
            let cx = ToolCx::new(Arc::clone(&self.engine.tool_env));
            guarded(&call.name, || tool.preview(args, &cx))
                .ok()
                .flatten()
        });
        let subject = subject_of(call, access);
        let decision = self.ask(call, subject, question, preview, cancel).await;
        let refused = |text: &str| Refusal {
            result: ToolResult::error(text),
            headless: false,
        };
        match decision {
            None => Err(Refusal {
                result: ToolResult::cancelled(),
                headless: false,
            }),
            Some(Decision::Approve) => Ok(grant),
            Some(Decision::ApproveUnsandboxed) => Ok(Grant::Unsandboxed),
            Some(Decision::ApproveForSession { prefix }) => {
                self.engine.gate.allow_for_session(&prefix);
                self.record(&Record::SessionRule { prefix });
                Ok(grant)
            }
            Some(Decision::ApproveForProject { prefix }) => {
                self.engine.gate.allow_for_session(&prefix);
                self.save_project_rule(&prefix);
                self.record(&Record::SessionRule { prefix });
                Ok(grant)
            }
            Some(Decision::ApprovePlan { .. }) => Err(refused(
                "this call was not approved (the answer given was for a plan). Do not retry it; ask the user.",
            )),
            Some(Decision::Deny { message }) => {
                Err(refused(&match message.filter(|m| !m.trim().is_empty()) {
                    Some(m) => format!("the user denied this call and said: {m}"),
                    None => "the user denied this call. Do not retry it; ask the user or take another approach.".into(),
                }))
            }
        }
    }

    /// A decision the prompt did not offer (another front end, a stale key) is taken as the
    /// nearest one it did: a rule for a dangerous command (or with no prefix) approves once
    /// and says so, leaving the sandbox unasked keeps it, and a plan's answer for another
    /// call (or another's for a plan) denies.
    fn within_offer(&self, decision: Decision, offered: &[DecisionKind]) -> Decision {
        if offered.contains(&decision.kind()) {
            return decision;
        }
        match decision {
            Decision::ApproveForSession { .. } | Decision::ApproveForProject { .. } => {
                self.emit(AgentEvent::Report(ReportEvent::Warning {
                    message: "approved once: no rule is saved for a dangerous command".into(),
                }));
                Decision::Approve
            }
            Decision::ApproveUnsandboxed if offered.contains(&DecisionKind::Approve) => {
                Decision::Approve
            }
            _ => Decision::Deny {
                message: Some("that answer was not on offer for this call".into()),
            },
        }
    }

    /// Saves an allow rule to the project's config, and says where (or why it could not).
    fn save_project_rule(&self, prefix: &str) {
        let workspace = &self.settings.workspace;
        let store = TrustStore::in_data_dir(self.settings.dirs.data());
        // The user just wrote this content, so it stays trusted — unless the file held rules
        // the user had not trusted: those must not become trusted along with the new one.
        let saved = store.save_rule(workspace, prefix);
        let message = match saved {
            Ok(path) => match prefix.strip_prefix("web_fetch ") {
                Some(host) => format!(
                    "saved: {host} is now fetched without asking in this project ({})",
                    path.display()
                ),
                None => format!(
                    "saved: commands starting with `{prefix}` now run without asking in this project ({})",
                    path.display()
                ),
            },
            Err(err) => format!(
                "could not save the rule for `{prefix}` (it applies to this session only): {err}"
            ),
        };
        self.emit(AgentEvent::Report(ReportEvent::Warning { message }));
    }

    /// Holds the call until the user decides; `None` when interrupted meanwhile.
    pub(super) async fn ask(
        &mut self,
        call: &AssembledCall,
        subject: ApprovalSubject,
        question: Question,
        diff: Option<crate::tool_output::FileChange>,
        cancel: &CancellationToken,
    ) -> Option<Decision> {
        let (tx, rx) = oneshot::channel();
        self.shared.park_approval(call.id.clone(), tx);
        let sandboxed = subject.is_command && self.engine.gate.sandboxed();
        let decisions = DecisionKind::offered(
            &call.name,
            &question.prefix,
            !question.dangers.is_empty(),
            sandboxed,
        );
        let subject = subject.text;
        self.notify_in_background(format!(
            "cairn waits for your approval of {}: {}",
            call.name,
            crate::llm::stream::cut(&subject, 300)
        ));
        self.emit(AgentEvent::Tool(ToolEvent::AwaitingApproval {
            call: call.id.clone(),
            name: call.name.clone(),
            subject,
            why: question.why,
            sandboxed,
            reach: question.reach,
            prefix: question.prefix,
            decisions: decisions.clone(),
            dangers: question.dangers,
            diff,
        }));
        let decision = tokio::select! {
            decision = rx => decision.ok(),
            () = cancel.cancelled() => None,
        };
        // A late `Decide` for this id must not approve a later call that reuses it.
        self.shared.forget_approval(&call.id);
        let decision = decision.map(|d| self.within_offer(d, &decisions));
        if let Some(decision) = &decision {
            self.record(&Record::Approval {
                call: call.id.clone(),
                decision: decision.clone(),
            });
            self.emit(AgentEvent::Tool(ToolEvent::Decided {
                call: call.id.clone(),
                decision: decision.clone(),
            }));
        }
        decision
    }
}
