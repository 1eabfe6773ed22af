//! `job_output` and `job_kill`: the model's handles on background jobs started by `bash`.

use std::time::Duration;

use async_trait::async_trait;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use super::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};

use crate::tool_output::ToolOutput;

/// Longest `wait_ms` honoured, like the longest bash timeout.
pub const MAX_WAIT_MS: u64 = 600_000;

#[derive(Debug, Deserialize)]
struct OutputArgs {
    #[serde(deserialize_with = "job_id")]
    job_id: String,
    #[serde(default, deserialize_with = "super::args::lenient_u64")]
    wait_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct KillArgs {
    #[serde(deserialize_with = "job_id")]
    job_id: String,
}

/// A job id, also when a model sends the bare number (`3` for `job-3`).
fn job_id<'de, D: Deserializer<'de>>(de: D) -> Result<String, D::Error> {
    match Value::deserialize(de)? {
        Value::String(id) => Ok(id),
        Value::Number(number) => Ok(number.to_string()),
        other => Err(D::Error::custom(format!(
            "expected a job id like \"job-1\", got {other}"
        ))),
    }
}

pub struct JobOutput;

#[async_trait]
impl Tool for JobOutput {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "job_output",
            description: "A background job's new output since the last read and whether it \
                still runs; wait_ms waits for more or its end.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "job_id": { "type": "string" },
                    "wait_ms": { "type": "integer" }
                },
                "required": ["job_id"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, _cx: &ToolCx) -> Result<Access, ToolError> {
        parse_args::<OutputArgs>(args)?;
        Ok(Access::Session)
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: OutputArgs = parse_args(&args)?;
        let wait = Duration::from_millis(args.wait_ms.unwrap_or(0).min(MAX_WAIT_MS));
        let report = cx.env.jobs.output(&args.job_id, wait, &cx.cancel).await?;
        Ok(ToolOutput::Job(report))
    }
}

pub struct JobKill;

#[async_trait]
impl Tool for JobKill {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "job_kill",
            description: "Stop a background job and all it started; returns its last output.",
            parameters: json!({
                "type": "object",
                "properties": { "job_id": { "type": "string" } },
                "required": ["job_id"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, _cx: &ToolCx) -> Result<Access, ToolError> {
        parse_args::<KillArgs>(args)?;
        Ok(Access::Session)
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: KillArgs = parse_args(&args)?;
        let report = cx.env.jobs.kill(&args.job_id).await?;
        Ok(ToolOutput::Job(report))
    }
}
