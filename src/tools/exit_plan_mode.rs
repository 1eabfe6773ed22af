//! `exit_plan_mode {plan}`: the model ends planning by proposing its plan. It is always in the
//! tools array (the array stays byte-identical for the session, whatever the mode), touches
//! only session state, and is answered by the user: the agent shows the plan for approval
//! (see `agent::calls`) instead of running anything; `run` only acknowledges a plan where
//! nobody is asked (a front end that cannot show it).

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};

use crate::tool_output::ToolOutput;

/// Longest plan accepted, in characters.
pub const MAX_PLAN_CHARS: usize = 20_000;

#[derive(Debug, Deserialize)]
struct PlanArgs {
    plan: String,
}

/// The plan of a call, checked: not empty, not huge.
pub fn plan_text(args: &serde_json::Value) -> Result<String, ToolError> {
    let PlanArgs { plan } = parse_args(args)?;
    let plan = plan.trim();
    if plan.is_empty() {
        return Err(ToolError::InvalidArgs(
            "`plan` is empty: write the steps you mean to take".into(),
        ));
    }
    if plan.chars().count() > MAX_PLAN_CHARS {
        return Err(ToolError::InvalidArgs(format!(
            "`plan` is longer than {MAX_PLAN_CHARS} characters: summarise it"
        )));
    }
    Ok(plan.to_string())
}

pub struct ExitPlanMode;

#[async_trait]
impl Tool for ExitPlanMode {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: crate::tools::EXIT_PLAN_MODE,
            description: "In plan mode: propose your plan (markdown); the user approves it (you \
                carry it out) or gives feedback (keep planning).",
            parameters: json!({
                "type": "object",
                "properties": { "plan": { "type": "string" } },
                "required": ["plan"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, _cx: &ToolCx) -> Result<Access, ToolError> {
        plan_text(args)?;
        Ok(Access::Session)
    }

    async fn run(&self, args: serde_json::Value, _cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let plan = plan_text(&args)?;
        Err(ToolError::Refused {
            path: crate::tools::EXIT_PLAN_MODE.into(),
            reason: format!(
                "nobody can approve a plan in this run; give the plan as your answer and stop \
                 ({} characters received)",
                plan.chars().count()
            ),
        })
    }
}
