//! The `bash` tool: arguments, the model's face, and turning a process run into the canonical
//! `CommandRun`. Spawning, capture and killing live in `process`; background jobs in `jobs`.

use std::time::Duration;

use async_trait::async_trait;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use super::args::{lenient_flag, lenient_u64};
use super::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};
use crate::process::{
    self, CommandSpec, Ending, ForegroundEnd, OnTimeout, View, Which, capture::split_budget,
};
use crate::tool_output::{CommandRun, MAX_TIMEOUT_MS, ToolOutput};

/// Timeout when the model names none.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Bytes of output (both streams) the model sees of one run; with the command line and the
/// markers the whole result stays under 16 KiB.
pub const OUTPUT_BUDGET: usize = 14 * 1024;

#[derive(Debug, Deserialize)]
struct BashArgs {
    command: String,
    #[serde(default, deserialize_with = "lenient_u64")]
    timeout_ms: Option<u64>,
    /// `run_in_background` is what models trained on other agents send.
    #[serde(
        default,
        alias = "run_in_background",
        deserialize_with = "lenient_flag"
    )]
    background: bool,
    /// What happens when the timeout fires: None means the default, a background job.
    #[serde(default, deserialize_with = "lenient_on_timeout")]
    on_timeout: Option<OnTimeout>,
}

/// `"kill"` or `"background"`, in any case; null for the default.
fn lenient_on_timeout<'de, D: Deserializer<'de>>(de: D) -> Result<Option<OnTimeout>, D::Error> {
    match Option::<Value>::deserialize(de)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => match text.trim().to_ascii_lowercase().as_str() {
            "kill" => Ok(Some(OnTimeout::Kill)),
            "background" | "" => Ok(Some(OnTimeout::Background)),
            _ => Err(D::Error::custom(format!(
                "on_timeout must be \"kill\" or \"background\", got {text:?}"
            ))),
        },
        Some(other) => Err(D::Error::custom(format!(
            "on_timeout must be \"kill\" or \"background\", got {other}"
        ))),
    }
}

impl BashArgs {
    fn parse(args: &serde_json::Value) -> Result<Self, ToolError> {
        let args: Self = parse_args(args)?;
        if args.command.trim().is_empty() {
            return Err(ToolError::InvalidArgs("`command` must not be empty".into()));
        }
        if args.timeout_ms == Some(0) {
            return Err(ToolError::InvalidArgs(
                "`timeout_ms` must be at least 1 (or left out for the default 120000)".into(),
            ));
        }
        Ok(args)
    }

    /// The timeout to apply, and whether the requested one was above the maximum.
    fn timeout(&self) -> (u64, bool) {
        match self.timeout_ms {
            None => (DEFAULT_TIMEOUT_MS, false),
            Some(ms) if ms > MAX_TIMEOUT_MS => (MAX_TIMEOUT_MS, true),
            Some(ms) => (ms, false),
        }
    }
}

pub struct Bash;

#[async_trait]
impl Tool for Bash {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "bash",
            description: "Run a bash command in the workspace (no stdin, no terminal). Returns \
                stdout, [stderr] and [exit code: N]; long output keeps head and tail, the whole \
                in a file. Past its timeout it goes on as a background job (or is killed: \
                on_timeout kill). What it leaves running is killed: start servers with \
                background: true, then use job_output/job_kill.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": { "type": "string" },
                    "timeout_ms": {
                        "type": "integer",
                        "description": "Default 120000, max 600000"
                    },
                    "background": {
                        "type": "boolean",
                        "description": "Start as a job; returns its id at once"
                    },
                    "on_timeout": { "type": "string", "enum": ["background", "kill"] }
                },
                "required": ["command"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, _cx: &ToolCx) -> Result<Access, ToolError> {
        let args = BashArgs::parse(args)?;
        Ok(Access::Command {
            command: args.command,
            background: args.background,
        })
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args = BashArgs::parse(&args)?;
        let (timeout_ms, clamped) = args.timeout();
        let spec = CommandSpec {
            command: &args.command,
            cwd: cx.workspace(),
            settings: &cx.env.bash,
            grant: cx.grant,
        };
        if cx.cancel.is_cancelled() {
            // Interrupted before it started: nothing to run, nothing to kill.
            return Err(ToolError::Cancelled);
        }
        if args.background {
            let job_id = cx.env.jobs.start(&spec)?;
            return Ok(ToolOutput::Command(CommandRun {
                command: args.command.clone(),
                job_id: Some(job_id),
                background: true,
                sandboxed: cx.env.bash.sandbox.is_some() && cx.grant != process::Grant::Unsandboxed,
                ..CommandRun::default()
            }));
        }
        // A command that outlives its timeout becomes a job, unless the model asked otherwise
        // or the job table is full.
        let on_timeout = match args.on_timeout {
            Some(OnTimeout::Kill) => OnTimeout::Kill,
            _ if !cx.env.jobs.has_room() => OnTimeout::Kill,
            _ => OnTimeout::Background,
        };
        let outcome = process::run(
            &spec,
            Duration::from_millis(timeout_ms),
            &cx.cancel,
            cx.tail.clone(),
            on_timeout,
        )
        .await
        .map_err(|err| ToolError::io("could not start bash", err))?;
        let mut run = match outcome {
            ForegroundEnd::Finished(finished) => {
                // After the views: showing binary output may have saved it to a file.
                let run = command_run(args.command.clone(), &finished, timeout_ms);
                // Refused, or its changes to git config, hooks or `.cairn/` put back: the next
                // run asks, and `u` there runs it without the sandbox.
                if run.sandbox_denied || !run.put_back.is_empty() || run.socket_denied() {
                    cx.env.refused.add(&args.command);
                }
                cx.env.jobs.keep_spills(finished.capture.spill_paths());
                run
            }
            ForegroundEnd::Promoted { spawned, put_back } => {
                let capture = spawned.capture.clone();
                let shown = (capture.total(Which::Stdout), capture.total(Which::Stderr));
                let (stdout, stderr) = views(&capture, shown);
                let run = CommandRun {
                    command: args.command.clone(),
                    timed_out_after_ms: Some(timeout_ms),
                    stdout_bytes: shown.0,
                    stderr_bytes: shown.1,
                    truncated: stdout.truncated || stderr.truncated,
                    spill_path: stdout.spill_path,
                    stdout: stdout.text,
                    stderr: stderr.text,
                    duration_ms: spawned.started.elapsed().as_millis() as u64,
                    sandboxed: spawned.sandboxed,
                    put_back: crate::tool_output::PutBack::new(put_back),
                    ..CommandRun::default()
                };
                let grace = cx.env.bash.kill_grace;
                let job_id = cx.env.jobs.adopt(*spawned, &args.command, grace, shown);
                CommandRun {
                    job_id: Some(job_id),
                    ..run
                }
            }
        };
        run.timeout_clamped = clamped;
        Ok(ToolOutput::Command(run))
    }
}

/// What the model sees of both streams up to `(stdout, stderr)` bytes, sharing the budget.
fn views(capture: &process::Capture, (out, err): (u64, u64)) -> (View, View) {
    let (out_budget, err_budget) = split_budget(
        OUTPUT_BUDGET,
        capture.shown_len(Which::Stdout, 0, out, OUTPUT_BUDGET),
        capture.shown_len(Which::Stderr, 0, err, OUTPUT_BUDGET),
    );
    (
        capture.view(Which::Stdout, 0, out, out_budget),
        capture.view(Which::Stderr, 0, err, err_budget),
    )
}

/// The canonical value of a finished foreground run.
pub(crate) fn command_run(
    command: String,
    finished: &process::Finished,
    timeout_ms: u64,
) -> CommandRun {
    let capture = &finished.capture;
    let stdout_bytes = capture.total(Which::Stdout);
    let stderr_bytes = capture.total(Which::Stderr);
    let (stdout, stderr) = views(capture, (stdout_bytes, stderr_bytes));
    let exit_code = finished.status.code();
    let failed = exit_code != Some(0);
    let sandbox_denied = finished.sandboxed
        && failed
        && finished.ending == Ending::Exited
        && process::sandbox::looks_refused(&stderr.text);
    let limits_hit = finished.bounds.hits(&stderr.text);
    CommandRun {
        command,
        exit_code,
        signal: process::signal_name(&finished.status),
        timed_out_after_ms: (finished.ending == Ending::TimedOut).then_some(timeout_ms),
        cancelled: finished.ending == Ending::Cancelled,
        stdout_bytes,
        stderr_bytes,
        truncated: stdout.truncated || stderr.truncated,
        spill_path: stdout.spill_path,
        stdout: stdout.text,
        stderr: stderr.text,
        duration_ms: finished.duration.as_millis() as u64,
        sandboxed: finished.sandboxed,
        sandbox_denied,
        job_id: None,
        background: false,
        timeout_clamped: false,
        changes: Vec::new(),
        changes_note: None,
        put_back: crate::tool_output::PutBack::new(finished.put_back.clone()),
        refused_sockets: crate::tool_output::RareList::new(finished.refused_sockets.clone()),
        limits_hit: crate::tool_output::RareList::new(limits_hit),
        // Filled by the agent from the files the command changed.
        runs_later: crate::tool_output::RareList::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_validated_and_timeouts_clamped() {
        let parse = |v: serde_json::Value| BashArgs::parse(&v);
        assert!(parse(json!({"command": "  "})).is_err());
        assert!(parse(json!({"command": "ls", "timeout_ms": 0})).is_err());
        assert!(parse(json!({"timeout_ms": 5})).is_err());
        let args = parse(json!({"command": "ls"})).expect("valid");
        assert_eq!(args.timeout(), (DEFAULT_TIMEOUT_MS, false));
        let args = parse(json!({"command": "ls", "timeout_ms": 900_000})).expect("valid");
        assert_eq!(args.timeout(), (MAX_TIMEOUT_MS, true));
        // What models actually send.
        let args = parse(json!({"command": "ls", "timeout_ms": "5000", "background": "true"}))
            .expect("lenient");
        assert_eq!((args.timeout_ms, args.background), (Some(5000), true));
        let args = parse(json!({"command": "ls", "timeout_ms": 2500.0, "background": null}))
            .expect("lenient");
        assert_eq!((args.timeout_ms, args.background), (Some(2500), false));
        assert!(parse(json!({"command": "ls", "timeout_ms": "soon"})).is_err());
        assert!(parse(json!({"command": "ls", "timeout_ms": -5})).is_err());
        assert!(parse(json!({"command": "ls", "background": "maybe"})).is_err());
        let args = parse(json!({"command": "ls", "run_in_background": true})).expect("alias");
        assert!(args.background);
        let on_timeout = |v: serde_json::Value| parse(v).map(|a| a.on_timeout);
        assert_eq!(
            on_timeout(json!({"command": "ls", "on_timeout": "Kill"})).expect("valid"),
            Some(OnTimeout::Kill)
        );
        assert_eq!(
            on_timeout(json!({"command": "ls", "on_timeout": "background"})).expect("valid"),
            Some(OnTimeout::Background)
        );
        assert_eq!(
            on_timeout(json!({"command": "ls", "on_timeout": null})).expect("valid"),
            None
        );
        assert!(parse(json!({"command": "ls", "on_timeout": "ignore"})).is_err());
        assert!(parse(json!({"command": "ls", "on_timeout": true})).is_err());
    }

    fn finished(code: i32, stderr: &str, sandboxed: bool) -> process::Finished {
        use std::os::unix::process::ExitStatusExt;
        let capture = std::sync::Arc::new(process::Capture::new(false));
        capture.push(Which::Stderr, stderr.as_bytes());
        capture.finish(Which::Stdout);
        capture.finish(Which::Stderr);
        process::Finished {
            status: std::process::ExitStatus::from_raw(code << 8),
            ending: Ending::Exited,
            capture,
            sandboxed,
            duration: Duration::from_millis(5),
            put_back: Vec::new(),
            refused_sockets: Vec::new(),
            bounds: process::limits::Bounds::none(),
        }
    }

    #[test]
    fn a_failure_that_looks_like_the_sandbox_is_marked() {
        let denied = "touch: cannot touch '/etc/x': Permission denied\n";
        let run = command_run("touch /etc/x".into(), &finished(1, denied, true), 1000);
        assert!(run.sandbox_denied);
        let text = ToolOutput::Command(run).model_text();
        assert!(
            text.contains("[exit code: 1]\n[sandbox: a write or a connection was refused")
                && text.ends_with("without the sandbox]"),
            "{text}"
        );
        let unsandboxed = command_run("touch /etc/x".into(), &finished(1, denied, false), 1000);
        assert!(!unsandboxed.sandbox_denied);
        let succeeded = command_run("ls".into(), &finished(0, denied, true), 1000);
        assert!(!succeeded.sandbox_denied);
        let other = command_run("false".into(), &finished(1, "no such file\n", true), 1000);
        assert!(!other.sandbox_denied);
    }

    #[test]
    fn schema_stays_small() {
        let spec = Bash.spec();
        let size = spec.description.len() + spec.parameters.to_string().len() + spec.name.len();
        assert!(size <= 700, "bash schema is {size} bytes");
    }
}
