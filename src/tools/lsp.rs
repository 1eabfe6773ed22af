//! Language servers in the tools: the diagnostics appended to a write's result (`after_call`,
//! run by the runtime around every call: a write's file goes to its server as the next
//! version; a command may have changed open files, which are sent again), and the `lsp` tool
//! (definition, references, hover, symbols, diagnostics), offered when a server is
//! configured or found at session start.

use std::path::PathBuf;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};
use crate::bus::ToolResult;
use crate::lsp::ops::{Ask, LspOp};
use crate::tool_output::{ToolAnswer, ToolOutput};

/// What a call's file was before it ran, when a language server serves it.
pub struct Before {
    path: PathBuf,
    display: String,
    text: Option<String>,
}

/// Before a write of a file a server serves: its text as it is (none for a new file).
pub fn before_call(cx: &ToolCx, access: &Access) -> Option<Before> {
    let lsp = cx.env.lsp.as_ref()?;
    let Access::Write { path, display } = access else {
        return None;
    };
    lsp.spec_for(path.as_path())?;
    let text = std::fs::read(path.as_path())
        .ok()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    Some(Before {
        path: path.as_path().to_path_buf(),
        display: display.clone(),
        text,
    })
}

/// After a call: a write's diagnostics appended to its result; after a command, the open
/// documents it changed sent to their servers.
pub async fn after_call(
    cx: &ToolCx,
    access: &Access,
    before: Option<Before>,
    result: &mut ToolResult,
) {
    let Some(lsp) = cx.env.lsp.as_ref() else {
        return;
    };
    if let Access::Command { .. } = access {
        lsp.files_changed().await;
        return;
    }
    let Some(before) = before else { return };
    if !matches!(result.output, Some(ToolOutput::FileChanged(_))) {
        return;
    }
    let Ok(after) = tokio::fs::read(&before.path).await else {
        return;
    };
    let after = String::from_utf8_lossy(&after).into_owned();
    if let Some(block) = lsp
        .after_write(&before.path, &before.display, before.text, after)
        .await
    {
        result.text.push_str(&block);
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LspArgs {
    op: String,
    path: Option<String>,
    line: Option<u32>,
    column: Option<u32>,
    query: Option<String>,
}

pub struct LspTool;

#[async_trait]
impl Tool for LspTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "lsp",
            description: "Ask the language server: definition, references or hover at path:line:column (1-based); symbols of a file (path) or of the workspace (query); diagnostics of a file or of all open files. Results are path:line:col with one line of context.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "op": {"type": "string", "enum": ["definition", "references", "hover", "symbols", "diagnostics"]},
                    "path": {"type": "string"},
                    "line": {"type": "integer", "minimum": 1},
                    "column": {"type": "integer", "minimum": 1},
                    "query": {"type": "string", "description": "workspace symbol search"}
                },
                "required": ["op"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, cx: &ToolCx) -> Result<Access, ToolError> {
        let args: LspArgs = parse_args(args)?;
        if LspOp::parse(&args.op).is_none() {
            return Err(ToolError::InvalidArgs(format!(
                "unknown op `{}`: use definition, references, hover, symbols or diagnostics",
                args.op
            )));
        }
        match &args.path {
            Some(path) => cx.read_access(path),
            None => Ok(Access::Read),
        }
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: LspArgs = parse_args(&args)?;
        let Some(lsp) = cx.env.lsp.as_ref() else {
            return Err(ToolError::Failed(
                "no language server in this session".into(),
            ));
        };
        let op = LspOp::parse(&args.op)
            .ok_or_else(|| ToolError::InvalidArgs(format!("unknown op `{}`", args.op)))?;
        let path = match &args.path {
            Some(raw) => Some(cx.resolve(raw)?.as_path().to_path_buf()),
            None => None,
        };
        let ask = Ask {
            op,
            path,
            line: args.line,
            column: args.column,
            query: args.query,
        };
        let text = tokio::select! {
            answer = lsp.ask(&ask) => answer.map_err(ToolError::Failed)?,
            () = cx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        let summary = match &ask.path {
            Some(path) => format!("lsp {} {}", args.op, path.display()),
            None => format!("lsp {}", args.op),
        };
        Ok(ToolOutput::Answer(ToolAnswer { summary, text }))
    }
}
