//! Compaction: keeps a long session inside the model's window. First old bulky tool results
//! are pruned (a stub says what the call was and how to get it again); when that is not
//! enough, the model summarises the older part of the conversation (the prompt is
//! `assets/prompts/compact.md`), and the summary, the current todo list, the files read and
//! edited and the user's own words of the current request replace it. The latest turns stay
//! verbatim. The log keeps the change (`Record::Compacted`: the stubs by index, the summary
//! and how many messages it replaces), and the live conversation is changed by the same
//! `apply` a resume uses, so a resume sends exactly what a live session would.
//!
//! The read-before-edit rule stays honest: a file whose read result the model no longer sees
//! loses its read stamp, so it must be read again before an edit.

use crate::bus::ReportEvent;
use std::collections::{HashMap, HashSet};

use tokio_util::sync::CancellationToken;

use super::Agent;
use super::context::{BYTES_PER_TOKEN, Meter, serialized_len};
use crate::bus::{AgentEvent, Usage};
use crate::llm::stream::cut;
use crate::llm::{ChatMessage, ChatRequest, LlmError, WireMessages};
use crate::session_log::Record;
use crate::tool_output::{TodoItem, TodoStatus};

const COMPACT_PROMPT: &str = include_str!("../../assets/prompts/compact.md");

/// A tool result shorter than this stays: its stub would save little.
const PRUNE_MIN_BYTES: usize = 1024;
/// Each message is cut to this many bytes in the transcript the summariser reads.
const TRANSCRIPT_ITEM_BYTES: usize = 4096;
/// Marks what compaction wrote, so a second compaction does not prune its own stubs.
const STUB_PREFIX: &str = "[pruned";

/// Why a compaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Why {
    /// The estimate passed the threshold, or the next request would not fit.
    Full,
    /// The provider answered that the request is too long: summarise whatever the estimate says.
    Overflow,
    /// `/compact`.
    Asked,
}

/// What one compaction did.
#[derive(Debug, Default)]
struct CompactionTally {
    pruned: usize,
    summarized: usize,
    usage: Option<Usage>,
}

impl Agent {
    /// The window now (the provider may have told a different one since start).
    pub(super) fn window(&self) -> u64 {
        self.window.window()
    }

    /// Tokens the next request is estimated at.
    pub(super) fn estimate(&mut self) -> u64 {
        let fixed = self.fixed_bytes();
        self.session.conversation.estimate(fixed)
    }

    fn fixed_bytes(&self) -> u64 {
        // The envelope (model name, stream options) is a few dozen bytes.
        serialized_len(self.session.conversation.system()) + self.tools_bytes + 128
    }

    /// Before a request: compact when the estimate passes the threshold, or when the request
    /// would leave less than the reply reserve.
    pub(super) async fn compact_if_needed(&mut self, cancel: &CancellationToken) {
        let window = self.window();
        let used = self.estimate();
        let threshold = (window as f64 * self.settings.context.threshold) as u64;
        let reserve = self.settings.context.reply_reserve.min(window / 4);
        if used < threshold && used + reserve <= window {
            return;
        }
        self.compact(Why::Full, None, cancel).await;
    }

    /// Compacts the conversation. Returns false when there was nothing to compact.
    pub(super) async fn compact(
        &mut self,
        why: Why,
        focus: Option<String>,
        cancel: &CancellationToken,
    ) -> bool {
        let trigger = if why == Why::Asked { "manual" } else { "auto" };
        let subject = crate::hooks::Subject::PreCompact {
            trigger: trigger.into(),
        };
        self.informing_hooks(crate::hooks::Event::PreCompact, subject)
            .await;
        let before = self.estimate();
        let window = self.window();
        let threshold = (window as f64 * self.settings.context.threshold) as u64;
        // Aim well under the threshold, so the next compaction is far away.
        let target = threshold / 2;
        // The verbatim tail: a quarter of the window's threshold normally; less when the
        // provider said our count was short; only the last step when the user asks.
        let keep_tokens = match why {
            Why::Full => target / 2,
            Why::Overflow => target / 4,
            Why::Asked => 0,
        };
        let current = self.session.conversation.messages();
        let keep_from = recent_start(current, keep_tokens * BYTES_PER_TOKEN);
        let mut messages = current.to_vec();
        let stubs = prune(&mut messages, keep_from);
        let mut outcome = CompactionTally {
            pruned: stubs.len(),
            ..CompactionTally::default()
        };
        let mut meter = Meter::default();
        let pruned_estimate = meter.estimate(self.fixed_bytes(), &messages);
        let summarise = keep_from > 0 && (why != Why::Full || pruned_estimate > target);
        let mut summary_text = None;
        if summarise {
            let (summary, usage) = self
                .summarise(&messages[..keep_from], focus.as_deref(), cancel)
                .await;
            outcome.usage = usage;
            summary_text =
                Some(self.summary_message(&messages[..keep_from], &messages[keep_from..], summary));
            outcome.summarized = keep_from;
        }
        if outcome.pruned == 0 && outcome.summarized == 0 {
            if why == Why::Asked {
                self.emit(AgentEvent::Report(ReportEvent::Warning {
                    message: "nothing to compact yet".into(),
                }));
            }
            return false;
        }
        // The live conversation changes exactly as a resume will change it: by `apply`.
        let current = self.session.conversation.messages().to_vec();
        let mut compacted = current.clone();
        apply(
            &mut compacted,
            &stubs,
            summary_text.as_deref(),
            outcome.summarized,
        );
        self.forget_unseen_reads(&current, &compacted);
        self.session.conversation.replace(compacted);
        let after = self.estimate();
        if let Some(usage) = outcome.usage {
            self.session.costs.push((0, usage));
        }
        self.record(&Record::Compacted {
            stubs,
            summary: summary_text.clone(),
            summarized: outcome.summarized,
            before,
            after,
            usage: outcome.usage,
        });
        if let Some(usage) = outcome.usage {
            self.emit(AgentEvent::Report(ReportEvent::Usage(usage)));
        }
        self.emit(AgentEvent::Report(ReportEvent::Compacted {
            before,
            after,
            pruned: outcome.pruned,
            summarized: outcome.summarized,
            summary: summary_text,
        }));
        // A loaded skill the compaction took out comes back (within a budget).
        self.reattach_skills();
        self.report_context();
        true
    }

    /// Asks the model for a summary of `old`. On failure the summary is `None` and the
    /// mechanical parts of the summary message (todos, files, request) stand alone.
    async fn summarise(
        &mut self,
        old: &[ChatMessage],
        focus: Option<&str>,
        cancel: &CancellationToken,
    ) -> (Option<String>, Option<Usage>) {
        let window = self.window();
        let reserve = self.settings.context.reply_reserve.min(window / 4);
        let budget = window
            .saturating_sub(reserve)
            .saturating_sub(self.fixed_bytes() / BYTES_PER_TOKEN)
            .saturating_sub(COMPACT_PROMPT.len() as u64 / BYTES_PER_TOKEN + 256)
            * BYTES_PER_TOKEN;
        let mut prompt = COMPACT_PROMPT.trim_end().to_string();
        if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
            prompt.push_str(&format!(
                "\n\nThe user asks the summary to focus on: {}",
                focus.trim()
            ));
        }
        prompt.push_str("\n\n<conversation>\n");
        prompt.push_str(&transcript(old, budget as usize));
        prompt.push_str("</conversation>\n");
        let messages = WireMessages::from([
            ChatMessage::System {
                content: self.session.conversation.system().to_string(),
            },
            ChatMessage::User {
                content: prompt.into(),
            },
        ]);
        let request = ChatRequest {
            messages: &messages,
            tools: &[],
        };
        let model = std::sync::Arc::clone(&self.engine.model);
        let mut ignore = |_| {};
        match model.stream_chat(request, &mut ignore, cancel).await {
            Ok(completion) => {
                let text = if completion.text.trim().is_empty() {
                    completion.reasoning
                } else {
                    completion.text
                };
                (
                    Some(text).filter(|t| !t.trim().is_empty()),
                    completion.usage,
                )
            }
            Err(LlmError::Cancelled) => (None, None),
            Err(err) => {
                self.emit(AgentEvent::Report(ReportEvent::Warning {
                    message: format!(
                        "the model could not summarise the conversation ({err}); older turns were replaced by a list of files and todos"
                    ),
                }));
                (None, None)
            }
        }
    }

    /// The message that stands for the compacted part.
    fn summary_message(
        &self,
        old: &[ChatMessage],
        kept: &[ChatMessage],
        summary: Option<String>,
    ) -> String {
        let mut out = String::from(
            "[cairn: the earlier part of this conversation was compacted to fit the context window.]\n",
        );
        if let Some(summary) = summary {
            out.push_str("\n## Summary of the earlier conversation\n");
            out.push_str(summary.trim());
            out.push('\n');
        }
        let files = touched_files(old);
        if !files.read.is_empty() || !files.edited.is_empty() {
            out.push_str("\n## Files read and edited earlier\n");
            if !files.read.is_empty() {
                out.push_str(&format!("Read: {}\n", files.read.join(", ")));
            }
            if !files.edited.is_empty() {
                out.push_str(&format!("Edited: {}\n", files.edited.join(", ")));
            }
            out.push_str(
                "Their contents are no longer in view: read a file again before editing it.\n",
            );
        }
        if !self.session.todos.is_empty() {
            out.push_str("\n## Current todo list\n");
            out.push_str(&todo_lines(&self.session.todos));
        }
        let request = &self.session.request_text;
        let request_kept = kept.iter().any(
            |m| matches!(m, ChatMessage::User { content } if content.as_text() == request.as_str()),
        );
        if !request.is_empty() && !request_kept {
            out.push_str("\n## The user's current request, in their own words\n");
            out.push_str(request.trim_end());
            out.push('\n');
        }
        out
    }

    /// Read stamps of files whose read result was visible before and is not any more are
    /// dropped: an edit of such a file needs a fresh read first.
    fn forget_unseen_reads(&self, before: &[ChatMessage], after: &[ChatMessage]) {
        let workspace = &self.engine.tool_env.workspace;
        let resolve = |raw: &str| crate::fs::paths::resolve(workspace, raw).ok();
        let seen_after: HashSet<_> = visible_reads(after)
            .into_iter()
            .filter_map(|p| resolve(&p))
            .map(|p| p.key())
            .collect();
        for raw in visible_reads(before) {
            if let Some(real) = resolve(&raw)
                && !seen_after.contains(&real.key())
            {
                self.engine.tool_env.reads.forget(&real);
            }
        }
    }
}

/// Where the verbatim tail starts: the latest messages worth at most `keep_bytes`, starting
/// at a user or assistant message (a tool result never loses its call). The last step is
/// always kept whole.
pub(super) fn recent_start(messages: &[ChatMessage], keep_bytes: u64) -> usize {
    let mut kept = 0u64;
    let mut start = messages.len();
    let mut last_boundary = None;
    for (i, message) in messages.iter().enumerate().rev() {
        kept += super::context::estimated_len(message) + 1;
        let boundary = !matches!(message, ChatMessage::Tool { .. });
        if boundary {
            if last_boundary.is_none() {
                last_boundary = Some(i);
                start = i;
                continue;
            }
            if kept > keep_bytes {
                break;
            }
            start = i;
        }
    }
    start
}

/// Applies a logged compaction: the tool results at the stubs' indices get the stub as their
/// content, then messages `..summarized` are replaced by one user message, the summary. An
/// index that does not name a tool result (a hand-edited log) is skipped.
pub(super) fn apply(
    messages: &mut Vec<ChatMessage>,
    stubs: &[(usize, String)],
    summary: Option<&str>,
    summarized: usize,
) {
    for (index, stub) in stubs {
        if let Some(ChatMessage::Tool { content, .. }) = messages.get_mut(*index) {
            content.clone_from(stub);
        }
    }
    if let Some(summary) = summary {
        let end = summarized.min(messages.len());
        messages.splice(
            ..end,
            [ChatMessage::User {
                content: summary.into(),
            }],
        );
    }
}

/// Replaces tool results before `end` that are larger than `PRUNE_MIN_BYTES` with a stub
/// naming the call. Returns (index, stub) of each one pruned.
pub(super) fn prune(messages: &mut [ChatMessage], end: usize) -> Vec<(usize, String)> {
    let calls: HashMap<String, (String, String)> = messages
        .iter()
        .flat_map(|m| match m {
            ChatMessage::Assistant { tool_calls, .. } => tool_calls.as_slice(),
            _ => &[],
        })
        .map(|c| {
            (
                c.id.clone(),
                (c.function.name.clone(), c.function.arguments.clone()),
            )
        })
        .collect();
    let mut pruned = Vec::new();
    for (index, message) in messages[..end].iter_mut().enumerate() {
        let ChatMessage::Tool {
            tool_call_id,
            content,
        } = message
        else {
            continue;
        };
        if content.len() < PRUNE_MIN_BYTES || content.starts_with(STUB_PREFIX) {
            continue;
        }
        let (name, arguments) = calls
            .get(tool_call_id.as_str())
            .cloned()
            .unwrap_or_else(|| ("a tool".into(), "{}".into()));
        *content = stub(&name, &arguments, content.len());
        pruned.push((index, content.clone()));
    }
    pruned
}

/// "[pruned: read_file src/x.rs lines 1-400 (12.3 KB) — read it again if needed]".
fn stub(name: &str, arguments: &str, bytes: usize) -> String {
    let args: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
    let text = |key: &str| args[key].as_str().map(str::to_string);
    let what = match name {
        "read_file" => {
            let path = text("path").unwrap_or_default();
            let first = args["offset"].as_u64().unwrap_or(1);
            match args["limit"].as_u64() {
                Some(limit) => format!("read_file {path} lines {first}-{}", first + limit - 1),
                None if first > 1 => format!("read_file {path} from line {first}"),
                None => format!("read_file {path}"),
            }
        }
        "bash" => format!("bash `{}`", cut(&text("command").unwrap_or_default(), 200)),
        "grep" => format!("grep `{}`", text("pattern").unwrap_or_default()),
        _ => format!("{name} {}", cut(arguments, 200)),
    };
    let again = match name {
        "read_file" => "read it again if needed",
        "bash" | "grep" | "glob" | "list_dir" => "run it again if needed",
        _ => "call it again if needed",
    };
    format!(
        "{STUB_PREFIX}: {what} ({:.1} KB) — {again}]",
        bytes as f64 / 1024.0
    )
}

/// The old part as plain text for the summariser, at most `budget` bytes: each message cut
/// to `TRANSCRIPT_ITEM_BYTES`; when still too long, the oldest messages after the first go.
fn transcript(messages: &[ChatMessage], budget: usize) -> String {
    let items: Vec<String> = messages
        .iter()
        .map(|m| match m {
            ChatMessage::System { content } => {
                format!("[system]\n{}\n", cut(content, TRANSCRIPT_ITEM_BYTES))
            }
            ChatMessage::User { content } => {
                format!(
                    "[user]\n{}\n",
                    cut(&content.as_text(), TRANSCRIPT_ITEM_BYTES)
                )
            }
            ChatMessage::Assistant {
                content,
                tool_calls,
                ..
            } => {
                let mut out = String::from("[assistant]\n");
                if let Some(text) = content.as_deref().filter(|t| !t.is_empty()) {
                    out.push_str(&cut(text, TRANSCRIPT_ITEM_BYTES));
                    out.push('\n');
                }
                for call in tool_calls {
                    out.push_str(&format!(
                        "(calls {} {})\n",
                        call.function.name,
                        cut(&call.function.arguments, 500)
                    ));
                }
                out
            }
            ChatMessage::Tool { content, .. } => {
                format!("[tool result]\n{}\n", cut(content, TRANSCRIPT_ITEM_BYTES))
            }
        })
        .collect();
    // What an item costs in the request: its JSON-escaped length (quotes and line breaks
    // of code and tool arguments grow when escaped).
    let cost = |item: &String| serialized_len(item.as_str()) as usize;
    let total: usize = items.iter().map(cost).sum();
    if total <= budget || items.len() < 2 {
        return items.concat();
    }
    // Keep the first message (the original request) and as many of the latest as fit.
    let mut room = budget.saturating_sub(cost(&items[0]) + 64);
    let mut tail = Vec::new();
    for item in items[1..].iter().rev() {
        if cost(item) > room {
            break;
        }
        room -= cost(item);
        tail.push(item.as_str());
    }
    let omitted = items.len() - 1 - tail.len();
    let mut out = items[0].clone();
    out.push_str(&format!("[… {omitted} messages omitted …]\n"));
    tail.reverse();
    out.extend(tail);
    out
}

/// Paths whose read results are visible in `messages` (a pruned one is not).
pub(super) fn visible_reads(messages: &[ChatMessage]) -> Vec<String> {
    let visible: HashSet<&str> = messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool {
                tool_call_id,
                content,
            } if !content.starts_with(STUB_PREFIX) => Some(tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    calls_of(messages, &["read_file"])
        .filter(|(id, _)| visible.contains(id.as_str()))
        .map(|(_, path)| path)
        .collect()
}

/// (call id, `path` argument) of every call of the named tools.
pub(super) fn calls_of<'a>(
    messages: &'a [ChatMessage],
    names: &'a [&'a str],
) -> impl Iterator<Item = (String, String)> + 'a {
    messages
        .iter()
        .flat_map(|m| match m {
            ChatMessage::Assistant { tool_calls, .. } => tool_calls.as_slice(),
            _ => &[],
        })
        .filter(|c| names.contains(&c.function.name.as_str()))
        .filter_map(|c| {
            let args: serde_json::Value = serde_json::from_str(&c.function.arguments).ok()?;
            Some((c.id.clone(), args["path"].as_str()?.to_string()))
        })
}

#[derive(Debug, Default)]
struct Touched {
    read: Vec<String>,
    edited: Vec<String>,
}

fn touched_files(messages: &[ChatMessage]) -> Touched {
    let dedupe = |paths: Vec<String>| {
        let mut seen = HashSet::new();
        paths
            .into_iter()
            .filter(|p| seen.insert(p.clone()))
            .collect::<Vec<_>>()
    };
    Touched {
        read: dedupe(calls_of(messages, &["read_file"]).map(|(_, p)| p).collect()),
        edited: dedupe(
            calls_of(messages, &["write_file", "edit_file"])
                .map(|(_, p)| p)
                .collect(),
        ),
    }
}

fn todo_lines(todos: &[TodoItem]) -> String {
    todos
        .iter()
        .map(|item| {
            let mark = match item.status {
                TodoStatus::Pending => "[ ]",
                TodoStatus::InProgress => "[~]",
                TodoStatus::Completed => "[x]",
            };
            format!("- {mark} {}\n", item.content)
        })
        .collect()
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;
