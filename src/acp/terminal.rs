//! A command's output mirrored to the editor's terminal view. Commands always run in cairn's
//! executor and sandbox; the editor only shows them. ACP's `terminal/create` would run the
//! command in the editor instead (outside the sandbox and the gate's grant), so the mirror uses
//! the display-only terminals editors offer for agents that run their own commands: the
//! `terminal_output` client capability (under `_meta`, Zed's convention, which other agents
//! and clients follow), with which a `tool_call` names a terminal (`terminal_info`, and a
//! `terminal` content block), its updates carry the output as it comes (`terminal_output`) and
//! the last one its end (`terminal_exit`).

use agent_client_protocol::v1::schema::{ClientCapabilities, Meta, Terminal, ToolCallContent};
use serde_json::json;

use crate::tool_output::CommandRun;

/// Whether the editor shows agent-run commands in its terminal view.
pub fn offered(client: &ClientCapabilities) -> bool {
    client
        .meta
        .as_ref()
        .and_then(|meta| meta.get("terminal_output"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

fn meta(key: &str, value: serde_json::Value) -> Meta {
    let mut meta = Meta::new();
    meta.insert(key.to_string(), value);
    meta
}

/// The terminal a command's call shows, named by the call's id.
pub fn view(call: &str) -> ToolCallContent {
    ToolCallContent::Terminal(Terminal::new(call.to_string()))
}

/// What a command's `tool_call` carries to open its terminal.
pub fn opened(call: &str, cwd: &std::path::Path) -> Meta {
    meta(
        "terminal_info",
        json!({"terminal_id": call, "cwd": cwd.display().to_string()}),
    )
}

/// A piece of the running command's output. Terminals take CRLF line ends.
pub fn output(call: &str, chunk: &str) -> Meta {
    meta(
        "terminal_output",
        json!({"terminal_id": call, "data": crlf(chunk)}),
    )
}

/// The command's end; `whole` also carries its output when none was mirrored while it ran
/// (a resumed session's history).
pub fn exited(call: &str, run: Option<&CommandRun>, failed: bool, whole: bool) -> Meta {
    let exit_code = run
        .and_then(|run| run.exit_code)
        .unwrap_or(i32::from(failed));
    let signal = run.and_then(|run| run.signal.clone());
    let mut out = meta(
        "terminal_exit",
        json!({"terminal_id": call, "exit_code": exit_code, "signal": signal}),
    );
    if whole && let Some(run) = run {
        let mut text = run.stdout.clone();
        if !run.stderr.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&run.stderr);
        }
        out.extend(output(call, &text));
    }
    out
}

fn crlf(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 32);
    let mut last = '\0';
    for c in text.chars() {
        if c == '\n' && last != '\r' {
            out.push('\r');
        }
        out.push(c);
        last = c;
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn output_goes_with_crlf_and_the_capability_is_read_from_meta() {
        assert_eq!(
            output("c1", "a\nb\r\n")["terminal_output"]["data"],
            "a\r\nb\r\n"
        );
        let mut client = ClientCapabilities::new();
        assert!(!offered(&client));
        client.meta = Some(meta("terminal_output", json!(true)));
        assert!(offered(&client));
        let end = exited("c1", None, true, false);
        assert_eq!(end["terminal_exit"]["exit_code"], 1);
    }
}
