//! A server's prompts and resources (SPEC §11.3). Listed once every server's start ended (each
//! within its start-up timeout), for the `/` palette (`/mcp:server:prompt`, with its
//! arguments) and the `@` finder (`@server:uri`). A prompt run from the palette is fetched
//! (`prompts/get`) with the arguments typed after its name, and its messages become the user's
//! turn; a resource mentioned as `@server:uri` is read (`resources/read`) and attached like a
//! file, its text capped as a file's is. Server and prompt names are sanitised as tool names
//! are (`my server` is `my_server`), so a command or mention is one word.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::names::sanitized;
use super::{McpHub, ServerState, Slot};
use crate::config::TOOL_TIMEOUT_SECS;
use crate::tools::read_file::{DEFAULT_LIMIT, MAX_LINE_CHARS, MAX_WINDOW_BYTES};

/// What every MCP prompt's command starts with (after its `/`).
pub const COMMAND_PREFIX: &str = "mcp:";
/// The longest a server may take to list its prompts or resources.
const LIST_WAIT: Duration = Duration::from_secs(10);
/// How long the offerings wait for servers still starting (each gives up at its start-up
/// timeout; this bounds a misconfigured one).
const START_WAIT: Duration = Duration::from_secs(600);

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptArgument {
    pub name: String,
    pub description: String,
    pub required: bool,
}

/// One prompt of a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpPrompt {
    pub server: String,
    pub name: String,
    pub description: String,
    pub arguments: Vec<PromptArgument>,
}

impl McpPrompt {
    /// Its command without the `/`: `mcp:server:name`.
    pub fn command(&self) -> String {
        command_name(&self.server, &self.name)
    }

    /// Its arguments as the palette shows them: `<required> [optional]`.
    pub fn argument_hint(&self) -> String {
        self.arguments
            .iter()
            .map(|a| {
                if a.required {
                    format!("<{}>", a.name)
                } else {
                    format!("[{}]", a.name)
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One resource of a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpResource {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub description: String,
}

impl McpResource {
    /// How it is mentioned, without the `@`: `server:uri`.
    pub fn mention(&self) -> String {
        format!("{}:{}", sanitized(&self.server), self.uri)
    }
}

/// The prompts and resources of the servers that were ready.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Offerings {
    pub prompts: Vec<McpPrompt>,
    pub resources: Vec<McpResource>,
}

/// A resource as read, for the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadResource {
    pub server: String,
    pub uri: String,
    /// Its text, capped as a file's is.
    pub text: String,
}

/// Why a prompt or resource could not be had.
#[derive(Debug, thiserror::Error)]
pub enum OfferingError {
    #[error("interrupted")]
    Cancelled,
    #[error("{0}")]
    Failed(String),
}

/// The command of `prompt` of `server`, without the `/`.
pub fn command_name(server: &str, prompt: &str) -> String {
    format!(
        "{COMMAND_PREFIX}{}:{}",
        sanitized(server),
        sanitized(prompt)
    )
}

/// The prompt's arguments from what was typed after its name: `name=value` words when each
/// names one of its arguments; else in order, the last taking the rest of the text (the only
/// one takes all of it). A required argument left out is an error naming what it needs.
pub fn arguments(prompt: &McpPrompt, typed: &str) -> Result<Map<String, Value>, String> {
    let typed = typed.trim();
    let words = crate::skills::commands::words(typed);
    let known = |word: &String| {
        word.split_once('=')
            .is_some_and(|(name, _)| prompt.arguments.iter().any(|a| a.name == name))
    };
    let mut out = Map::new();
    if !words.is_empty() && words.iter().all(known) {
        for word in &words {
            if let Some((name, value)) = word.split_once('=') {
                out.insert(name.to_string(), json!(value));
            }
        }
    } else if !typed.is_empty() {
        match prompt.arguments.as_slice() {
            [] => {
                return Err(format!(
                    "/{} takes no arguments (you typed `{typed}`)",
                    prompt.command()
                ));
            }
            [only] => {
                out.insert(only.name.clone(), json!(typed));
            }
            all => {
                let (last, first) = all.split_last().unwrap_or((&all[0], &[]));
                for (argument, word) in first.iter().zip(&words) {
                    out.insert(argument.name.clone(), json!(word));
                }
                if words.len() > first.len() {
                    out.insert(last.name.clone(), json!(words[first.len()..].join(" ")));
                }
            }
        }
    }
    let missing: Vec<&str> = prompt
        .arguments
        .iter()
        .filter(|a| a.required && !out.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "/{} needs {}: /{} {} (or NAME=VALUE words)",
            prompt.command(),
            missing.join(", "),
            prompt.command(),
            prompt.argument_hint()
        ));
    }
    Ok(out)
}

/// A `GetPromptResult` (JSON) as the user's turn: its messages in order, each content read as
/// a tool answer's is; a message of the assistant's role is marked so.
pub fn turn_text(result: &Value) -> String {
    let mut parts = Vec::new();
    for message in result["messages"].as_array().into_iter().flatten() {
        let text = super::result::answer(&json!({"content": [message["content"]]})).text;
        if message["role"] == "assistant" {
            parts.push(format!("[the prompt's assistant message]\n{text}"));
        } else {
            parts.push(text);
        }
    }
    parts.join("\n\n")
}

/// A `ReadResourceResult` (JSON) as text: each text content, a note for binary ones; capped
/// as a file the user attaches is (`read_file`'s default window: lines, line length, bytes).
pub fn resource_text(result: &Value) -> String {
    let mut parts = Vec::new();
    for content in result["contents"].as_array().into_iter().flatten() {
        match (content["text"].as_str(), content["blob"].as_str()) {
            (Some(text), _) => parts.push(text.to_string()),
            (None, Some(blob)) => parts.push(format!(
                "[{} {}, {} bytes of binary content: not shown]",
                content["uri"].as_str().unwrap_or(""),
                content["mimeType"].as_str().unwrap_or("?"),
                blob.len() / 4 * 3
            )),
            (None, None) => {}
        }
    }
    capped(&parts.join("\n"))
}

/// `text` within the window a file's attachment shows.
fn capped(text: &str) -> String {
    let total = text.lines().count();
    let mut out = String::new();
    let mut shown = 0;
    for line in text.lines().take(DEFAULT_LIMIT) {
        if out.len() + line.len() > MAX_WINDOW_BYTES {
            break;
        }
        if line.chars().count() > MAX_LINE_CHARS {
            out.extend(line.chars().take(MAX_LINE_CHARS));
            out.push_str(" [line cut]");
        } else {
            out.push_str(line);
        }
        out.push('\n');
        shown += 1;
    }
    if shown < total {
        out.push_str(&format!(
            "[{} more lines of {total} not shown]\n",
            total - shown
        ));
    }
    out
}

impl McpHub {
    /// The prompts and resources of the servers ready once every start ended (listed once a
    /// session, each server within `LIST_WAIT`).
    pub async fn offerings(&self) -> Offerings {
        self.offerings
            .get_or_init(|| async {
                self.settle(START_WAIT).await;
                let mut all = Offerings::default();
                for slot in &self.slots {
                    let (prompts, resources) = list_offerings(slot, true).await;
                    all.prompts.extend(prompts);
                    all.resources.extend(resources);
                }
                all.prompts.sort_by_key(McpPrompt::command);
                all
            })
            .await
            .clone()
    }

    /// Runs the prompt `name` (a command without its `/`: `mcp:server:prompt`) with the
    /// arguments `typed` after it: its messages as the user's turn. Its server is waited for
    /// (up to its start-up timeout) and asked for its prompts as they are now. `None` when
    /// no server offers such a prompt.
    pub async fn run_prompt(
        &self,
        name: &str,
        typed: &str,
        cancel: &CancellationToken,
    ) -> Option<Result<String, OfferingError>> {
        let (server, _) = name.strip_prefix(COMMAND_PREFIX)?.split_once(':')?;
        let slot = self.slots.iter().find(|s| sanitized(&s.name) == server)?;
        // Its start, if it is still starting, ends first.
        drop(slot.live.lock().await);
        let (prompts, _) = list_offerings(slot, false).await;
        let prompt = prompts.iter().find(|p| p.command() == name)?;
        Some(self.get_prompt(prompt, typed, cancel).await)
    }

    async fn get_prompt(
        &self,
        prompt: &McpPrompt,
        typed: &str,
        cancel: &CancellationToken,
    ) -> Result<String, OfferingError> {
        let arguments = arguments(prompt, typed).map_err(OfferingError::Failed)?;
        let slot = self.slot(&prompt.server)?;
        let (peer, _) = self
            .connection_of(slot)
            .await
            .map_err(OfferingError::Failed)?;
        let params =
            rmcp::model::GetPromptRequestParams::new(prompt.name.clone()).with_arguments(arguments);
        let answer = within(slot, cancel, peer.get_prompt(params)).await?;
        let result = answer.map_err(|err| {
            OfferingError::Failed(format!(
                "the MCP server `{}` did not give the prompt `{}`: {err}",
                prompt.server, prompt.name
            ))
        })?;
        Ok(turn_text(&serde_json::to_value(result).unwrap_or_default()))
    }

    /// Reads the resource a mention names (`server:uri`, without the `@`). `None` when the
    /// word names no configured server (then it may be a file).
    pub async fn read_resource(
        &self,
        mention: &str,
        cancel: &CancellationToken,
    ) -> Option<Result<ReadResource, OfferingError>> {
        let (server, uri) = mention.split_once(':')?;
        let slot = self.slots.iter().find(|s| sanitized(&s.name) == server)?;
        if uri.is_empty() {
            return None;
        }
        Some(self.read(slot, uri, cancel).await)
    }

    async fn read(
        &self,
        slot: &std::sync::Arc<Slot>,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<ReadResource, OfferingError> {
        let (peer, _) = self
            .connection_of(slot)
            .await
            .map_err(OfferingError::Failed)?;
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        let answer = within(slot, cancel, peer.read_resource(params)).await?;
        let result = answer.map_err(|err| {
            OfferingError::Failed(format!(
                "the MCP server `{}` did not give the resource {uri}: {err}",
                slot.name
            ))
        })?;
        let text = resource_text(&serde_json::to_value(result).unwrap_or_default());
        Ok(ReadResource {
            server: slot.name.clone(),
            uri: uri.to_string(),
            text: crate::secrets::redact(&text).into_owned(),
        })
    }

    fn slot(&self, server: &str) -> Result<&std::sync::Arc<Slot>, OfferingError> {
        self.slots
            .iter()
            .find(|s| s.name == server)
            .ok_or_else(|| OfferingError::Failed(format!("no MCP server `{server}`")))
    }
}

/// `request` within the server's tool timeout, unless `cancel` fires first.
async fn within<T>(
    slot: &Slot,
    cancel: &CancellationToken,
    request: impl std::future::Future<Output = T>,
) -> Result<T, OfferingError> {
    let timeout = Duration::from_secs(slot.file.tool_timeout_secs.unwrap_or(TOOL_TIMEOUT_SECS));
    tokio::select! {
        answer = tokio::time::timeout(timeout, request) => answer.map_err(|_| {
            OfferingError::Failed(format!(
                "the MCP server `{}` gave no answer within {} s",
                slot.name,
                timeout.as_secs()
            ))
        }),
        () = cancel.cancelled() => Err(OfferingError::Cancelled),
    }
}

/// The prompts (and with `with_resources` the resources) of `slot`, when it is ready and
/// announced them.
async fn list_offerings(slot: &Slot, with_resources: bool) -> (Vec<McpPrompt>, Vec<McpResource>) {
    if !matches!(
        *crate::sync::MutexExt::locked(&slot.state),
        ServerState::Ready { .. }
    ) {
        return (Vec::new(), Vec::new());
    }
    let (peer, prompts, resources) = {
        let live = slot.live.lock().await;
        let Some(up) = live.as_ref() else {
            return (Vec::new(), Vec::new());
        };
        (
            up.connection.peer(),
            up.connection.announces_prompts,
            up.connection.announces_resources && with_resources,
        )
    };
    let mut listed = (Vec::new(), Vec::new());
    if prompts {
        match tokio::time::timeout(LIST_WAIT, peer.list_all_prompts()).await {
            Ok(Ok(found)) => {
                listed.0 = found
                    .iter()
                    .map(|p| McpPrompt {
                        server: slot.name.clone(),
                        name: p.name.clone(),
                        description: p.description.clone().unwrap_or_default(),
                        arguments: p
                            .arguments
                            .iter()
                            .flatten()
                            .map(|a| PromptArgument {
                                name: a.name.clone(),
                                description: a.description.clone().unwrap_or_default(),
                                required: a.required.unwrap_or(false),
                            })
                            .collect(),
                    })
                    .collect();
            }
            Ok(Err(err)) => tracing::warn!(server = %slot.name, %err, "MCP prompts not listed"),
            Err(_) => tracing::warn!(server = %slot.name, "MCP prompts not listed in time"),
        }
    }
    if resources {
        match tokio::time::timeout(LIST_WAIT, peer.list_all_resources()).await {
            Ok(Ok(found)) => {
                listed.1 = found
                    .iter()
                    .map(|r| McpResource {
                        server: slot.name.clone(),
                        uri: r.uri.clone(),
                        name: r.name.clone(),
                        description: r.description.clone().unwrap_or_default(),
                    })
                    .collect();
            }
            Ok(Err(err)) => tracing::warn!(server = %slot.name, %err, "MCP resources not listed"),
            Err(_) => tracing::warn!(server = %slot.name, "MCP resources not listed in time"),
        }
    }
    listed
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn prompt(arguments: &[(&str, bool)]) -> McpPrompt {
        McpPrompt {
            server: "my server".into(),
            name: "review".into(),
            description: String::new(),
            arguments: arguments
                .iter()
                .map(|(name, required)| PromptArgument {
                    name: (*name).into(),
                    description: String::new(),
                    required: *required,
                })
                .collect(),
        }
    }

    #[test]
    fn typed_text_becomes_the_arguments_by_name_or_in_order() {
        let one = prompt(&[("topic", true)]);
        assert_eq!(one.command(), "mcp:my_server:review");
        assert_eq!(
            arguments(&one, " the whole text ").unwrap()["topic"],
            "the whole text"
        );
        assert_eq!(arguments(&one, "topic=x").unwrap()["topic"], "x");
        let err = arguments(&one, "").unwrap_err();
        assert!(
            err.contains("needs topic") && err.contains("<topic>"),
            "{err}"
        );

        let two = prompt(&[("file", true), ("focus", false)]);
        assert_eq!(two.argument_hint(), "<file> [focus]");
        let got = arguments(&two, "src/a.rs error handling please").unwrap();
        assert_eq!(got["file"], "src/a.rs");
        assert_eq!(got["focus"], "error handling please");
        let got = arguments(&two, "focus=speed file=\"b c.rs\"").unwrap();
        assert_eq!(
            (got["file"].as_str(), got["focus"].as_str()),
            (Some("b c.rs"), Some("speed"))
        );
        assert!(arguments(&prompt(&[]), "x").is_err());
        assert!(arguments(&prompt(&[]), "").unwrap().is_empty());
    }

    #[test]
    fn a_prompt_s_messages_and_a_resource_s_contents_read_as_text() {
        let turn = turn_text(&json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "Review this."}},
            {"role": "assistant", "content": {"type": "text", "text": "Which part?"}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "x://a", "text": "body"}}}
        ]}));
        assert_eq!(
            turn,
            "Review this.\n\n[the prompt's assistant message]\nWhich part?\n\n[resource x://a]\nbody"
        );
        let text = resource_text(&json!({"contents": [
            {"uri": "x://a", "text": "one\ntwo"},
            {"uri": "x://b", "mimeType": "image/png", "blob": "AAAA"}
        ]}));
        assert_eq!(
            text,
            "one\ntwo\n[x://b image/png, 3 bytes of binary content: not shown]\n"
        );
        let long = (0..DEFAULT_LIMIT + 5)
            .map(|i| format!("l{i}\n"))
            .collect::<String>();
        let capped = resource_text(&json!({"contents": [{"uri": "x://c", "text": long}]}));
        assert!(capped.ends_with(&format!(
            "[5 more lines of {} not shown]\n",
            DEFAULT_LIMIT + 5
        )));
    }
}
