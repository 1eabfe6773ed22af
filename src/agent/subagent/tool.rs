//! `subagent {description, prompt, agent?}`: the tool the model delegates with. Its access is
//! a delegation (the gate runs it; each of the child's own calls passes the gate), and it runs
//! the child to its end (`child::run`).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;

use super::{SUBAGENT_TOOL, SubagentArgs, SubagentHost};
use crate::tool_output::ToolOutput;
use crate::tools::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};

/// A prompt is instructions for one task, not a document.
const MAX_PROMPT_CHARS: usize = 20_000;

pub struct SubagentTool {
    host: Arc<SubagentHost>,
}

impl SubagentTool {
    pub fn new(host: Arc<SubagentHost>) -> Self {
        Self { host }
    }

    /// The call's arguments, checked, with the name of the agent it runs.
    fn checked(&self, args: &serde_json::Value) -> Result<(SubagentArgs, String), ToolError> {
        let args: SubagentArgs = parse_args(args)?;
        if args.description.trim().is_empty() {
            return Err(ToolError::InvalidArgs(
                "`description` is empty: say in a few words what the subagent does".into(),
            ));
        }
        if args.prompt.trim().is_empty() {
            return Err(ToolError::InvalidArgs(
                "`prompt` is empty: write the whole task; the subagent sees nothing else".into(),
            ));
        }
        if args.prompt.chars().count() > MAX_PROMPT_CHARS {
            return Err(ToolError::InvalidArgs(format!(
                "`prompt` is longer than {MAX_PROMPT_CHARS} characters: give the task, not the material"
            )));
        }
        let name = self
            .host
            .definitions()
            .get(args.agent.as_deref())
            .map_err(ToolError::InvalidArgs)?
            .name
            .clone();
        Ok((args, name))
    }
}

#[async_trait]
impl Tool for SubagentTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: SUBAGENT_TOOL,
            description: "Delegate a self-contained task to a fresh agent that sees only \
                `prompt` and returns its answer; calls in one reply run at once.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "description": { "type": "string", "description": "the task in 3-8 words" },
                    "prompt": { "type": "string" },
                    "agent": {
                        "type": "string",
                        "description": self.host.definitions().listing()
                    }
                },
                "required": ["description", "prompt"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, _cx: &ToolCx) -> Result<Access, ToolError> {
        let (args, agent) = self.checked(args)?;
        Ok(Access::Delegate {
            agent,
            description: args.description.trim().to_string(),
        })
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let (args, agent) = self.checked(&args)?;
        // The child's own `subagent` tool, when its depth allows one.
        let offer = |host| Box::new(SubagentTool::new(host)) as Box<dyn Tool>;
        super::child::run(&self.host, args, &agent, cx, &offer).await
    }
}
