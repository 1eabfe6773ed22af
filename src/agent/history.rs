//! Rebuilds a session from its log: the conversation as the model will be sent it, the current
//! todos, the session rules, and the events a front end replays to show the past.
//!
//! A `Fork` record (a rewind of the conversation) sets the conversation, todos and told state
//! back to what the records before the chosen user message add up to (rebuilt the same way,
//! so forks and compactions compose in any order); the session rules and costs carry on, they
//! are the user's approvals and money spent, not part of the conversation. `rebuild` gives
//! the events of the current branch (what a resume shows), `rebuild_all` also those of the
//! branches left, each followed by an `TimeTravelEvent::Rewound` marker (what `cairn replay` shows).

use crate::bus::TimeTravelEvent;
use std::collections::HashSet;

use crate::bus::{AgentEvent, CallId, ImageChip, ShellEvent, ToolEvent, ToolResult, Usage};
use crate::content::{ImageRef, Part, ReasoningPart};
use crate::llm::{ChatMessage, UserContent, WireToolCall};
use crate::session_log::{LoggedCall, Record, ToldState};
use crate::tool_output::{TodoItem, ToolOutput};

/// What a session's records add up to.
#[derive(Debug, Default)]
pub struct Rebuilt {
    /// The session's system prompt, when its log has one (older logs do not).
    pub system: Option<String>,
    /// The changing state the model was last told about.
    pub told: Option<ToldState>,
    pub messages: Vec<ChatMessage>,
    pub todos: Vec<TodoItem>,
    /// Usage of every model request: (step, usage); step 0 for a compaction's summary.
    pub costs: Vec<(u64, Usage)>,
    /// The latest user request's text.
    pub request_text: String,
    pub session_rules: Vec<String>,
    pub events: Vec<AgentEvent>,
    /// Calls that had no result in the log (the process died while they ran).
    pub interrupted: Vec<CallId>,
    /// The user messages of the current branch, oldest first: what `/rewind` offers.
    pub users: Vec<BranchUser>,
    /// The skills loaded on the current branch, in order (a skill loaded again comes again).
    pub skills: Vec<LoadedSkill>,
    /// The mode and the model the session was in at the end of its log, when it says.
    pub mode: Option<crate::bus::Mode>,
    pub model: Option<String>,
}

/// A skill the model was given in this session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedSkill {
    pub name: String,
    pub dir: String,
    /// What the model was given (the body, the arguments, the file list).
    pub text: String,
}

/// A user message of the current branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchUser {
    /// Its ordinal among all user records of the log (what `Record::Fork` names).
    pub at: usize,
    /// Model steps of the session before it.
    pub step: u64,
    pub text: String,
    /// When it was sent (RFC 3339, UTC), when the log says.
    pub time: Option<String>,
}

/// The assistant message as sent back to the model. Reasoning (plain and structured) goes back
/// only with tool calls: DeepSeek and Anthropic require it there and ignore it elsewhere.
pub fn assistant_message(
    text: &str,
    reasoning: &ReasoningPart,
    calls: &[LoggedCall],
) -> ChatMessage {
    ChatMessage::Assistant {
        // `""`, never `null`, for a message of calls only: llama.cpp's server (through
        // llama-cpp-python) answers 500 to a null content, and every server takes "".
        content: Some(text.to_string()),
        reasoning_content: (!calls.is_empty() && !reasoning.text.is_empty())
            .then(|| reasoning.text.clone()),
        reasoning_blocks: if calls.is_empty() {
            Default::default()
        } else {
            reasoning.blocks.clone()
        },
        tool_calls: calls
            .iter()
            .map(|c| WireToolCall::function(&c.id.0, &c.name, &c.arguments))
            .collect(),
    }
}

/// The latest successful `todo_write` is the current list.
pub fn todos_of(result: &ToolResult) -> Option<&[TodoItem]> {
    match &result.output {
        Some(ToolOutput::Todos { todos }) if !result.is_error => Some(todos),
        _ => None,
    }
}

/// Finds the bytes of a logged image (the session's image store); `None` when they are gone.
pub type ImageBytes<'a> = &'a dyn Fn(&ImageRef) -> Option<Vec<u8>>;

/// The session as a resume continues it: the current branch. Images are left out (each is a
/// short note): for the conversation a request will be built from, use `rebuild_loading`.
pub fn rebuild(records: &[Record]) -> Rebuilt {
    rebuild_with(records, false, &|_| None)
}

/// The current branch, with the bytes of its images from `images`.
pub fn rebuild_loading(records: &[Record], images: ImageBytes<'_>) -> Rebuilt {
    rebuild_with(records, false, images)
}

/// The session with the branches rewinds left, for `cairn replay`: the events of every
/// branch, in log order, each left one followed by `TimeTravelEvent::Rewound`.
pub fn rebuild_all(records: &[Record]) -> Rebuilt {
    rebuild_with(records, true, &|_| None)
}

/// A user message as sent: its text, then its parts (an image whose bytes are gone is a note).
/// What the user sees of the images among a message's parts: their chips.
pub fn image_chips(parts: &[Part]) -> Vec<ImageChip> {
    crate::content::images(parts)
        .map(|image| ImageChip {
            name: image.name.clone(),
            bytes: image.bytes,
            width: image.width,
            height: image.height,
        })
        .collect()
}

pub fn user_message(text: &str, parts: &[Part], images: ImageBytes<'_>) -> ChatMessage {
    let mut content = UserContent::from(text);
    for part in parts {
        match part {
            Part::Text { text } => content.push_text(text),
            Part::Image(image) => match images(image) {
                Some(bytes) => content.push_image(image.clone(), &bytes),
                None => content.push_text(&format!(
                    "[image {}: not available any more, not sent]",
                    image.label()
                )),
            },
        }
    }
    ChatMessage::User { content }
}

fn rebuild_with(records: &[Record], keep_left: bool, images: ImageBytes<'_>) -> Rebuilt {
    let mut replay = replay::Replay::new(images);
    for (index, record) in records.iter().enumerate() {
        match record {
            Record::Fork { at } => {
                replay.close_open_calls();
                fork(&mut replay.out, &records[..index], *at, keep_left, images);
            }
            _ if replay.conversation(record) => {}
            _ if replay.settings(record) => {}
            _ => replay.shown(record),
        }
    }
    replay.close_open_calls();
    dedupe_rules(&mut replay.out.session_rules);
    replay.out
}

/// What a replay shows of a user's own command: its card, started and finished.
fn shell_events(id: &str, command: &str, context: bool, result: &ToolResult) -> [AgentEvent; 2] {
    [
        AgentEvent::Shell(ShellEvent::Started {
            id: id.to_string(),
            command: command.to_string(),
            context,
        }),
        AgentEvent::Shell(ShellEvent::Finished {
            id: id.to_string(),
            command: command.to_string(),
            context,
            result: result.clone(),
        }),
    ]
}

/// The mode the session started in (its first system prompt's), when the log says.
pub fn start_mode(records: &[Record]) -> Option<crate::bus::Mode> {
    records.iter().find_map(|r| match r {
        Record::System { told, .. } => Some(told.mode),
        _ => None,
    })
}

/// Sets the conversation back to what `before` (the records before the fork) added up to
/// just before its user record `at`. A fork naming no such record (a hand-edited log) is
/// ignored.
fn fork(out: &mut Rebuilt, before: &[Record], at: usize, keep_left: bool, images: ImageBytes<'_>) {
    let Some((pos, text)) = before
        .iter()
        .enumerate()
        .filter_map(|(i, r)| match r {
            Record::User { text, .. } => Some((i, text)),
            _ => None,
        })
        .nth(at)
    else {
        return;
    };
    let prefix = rebuild_with(&before[..pos], false, images);
    out.messages = prefix.messages;
    out.todos = prefix.todos;
    if prefix.told.is_some() {
        out.told = prefix.told;
    }
    out.request_text = prefix.request_text;
    out.users = prefix.users;
    out.interrupted = prefix.interrupted;
    out.skills = prefix.skills;
    if keep_left {
        out.events
            .push(AgentEvent::TimeTravel(TimeTravelEvent::Rewound {
                at,
                text: text.clone(),
            }));
    } else {
        out.events = prefix.events;
    }
}

/// A call without a result gets a synthetic `[interrupted]` one, so the conversation stays
/// valid (every tool call answered, in order) and the model knows it may not have run fully.
fn close_open_calls(out: &mut Rebuilt, open: &mut Vec<LoggedCall>) {
    for call in open.drain(..) {
        let result = ToolResult::interrupted();
        out.messages.push(ChatMessage::Tool {
            tool_call_id: call.id.0.clone(),
            content: result.text.clone(),
        });
        out.events.push(AgentEvent::Tool(ToolEvent::Finished {
            call: call.id.clone(),
            name: call.name.clone(),
            result,
        }));
        out.interrupted.push(call.id);
    }
}

/// Puts `note` in place of the image with `hash` in every user message; true when one held it.
pub fn remove_image(messages: &mut [ChatMessage], hash: &str, note: &str) -> bool {
    let mut found = false;
    for message in messages {
        if let ChatMessage::User { content } = message {
            found |= content.replace_image(hash, note);
        }
    }
    found
}

fn dedupe_rules(rules: &mut Vec<String>) {
    let mut seen = HashSet::new();
    rules.retain(|r| seen.insert(r.clone()));
}

mod replay;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::bus::{ConversationEvent, StepId};

    fn call(id: &str) -> LoggedCall {
        LoggedCall {
            id: CallId::new(id),
            name: "bash".into(),
            arguments: "{\"command\":\"ls\"}".into(),
        }
    }

    #[test]
    fn a_call_without_result_is_answered_as_interrupted() {
        let records = vec![
            Record::user("go"),
            Record::Assistant {
                text: String::new(),
                reasoning: ReasoningPart::new("think", Default::default()),
                tool_calls: vec![call("a"), call("b")],
            },
            Record::ToolResult {
                call: CallId::new("a"),
                name: "bash".into(),
                result: ToolResult::error("x"),
            },
        ];
        let rebuilt = rebuild(&records);
        assert_eq!(rebuilt.interrupted, vec![CallId::new("b")]);
        assert_eq!(rebuilt.messages.len(), 4);
        assert_eq!(
            rebuilt.messages[3],
            ChatMessage::Tool {
                tool_call_id: "b".into(),
                content: "[interrupted]".into()
            }
        );
        let ChatMessage::Assistant {
            content,
            reasoning_content,
            ..
        } = &rebuilt.messages[1]
        else {
            panic!()
        };
        assert_eq!(
            content.as_deref(),
            Some(""),
            "calls only: `\"\"`, never null"
        );
        assert_eq!(reasoning_content.as_deref(), Some("think"));
    }

    #[test]
    fn an_old_log_loads_and_its_steps_keep_the_turn_field_on_the_wire() {
        // A log written before model steps were called `StepId`: its replayed events number
        // the steps as before, and `exec --json` readers still find them under `turn`.
        let old_log = include_str!("../../tests/fixtures/logs/20260101-000000-0001.jsonl");
        let records: Vec<Record> = old_log
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let events = rebuild(&records).events;
        let steps: Vec<u64> = events
            .iter()
            .filter_map(|event| match event {
                AgentEvent::Conversation(ConversationEvent::AssistantMessage { step, .. }) => {
                    Some(step.0)
                }
                _ => None,
            })
            .collect();
        assert_eq!(steps, [1, 2, 3]);
        let first = events
            .iter()
            .find(|event| {
                matches!(
                    event,
                    AgentEvent::Conversation(ConversationEvent::AssistantMessage { .. })
                )
            })
            .unwrap();
        let wire = serde_json::to_value(first).unwrap();
        assert_eq!(wire["type"], "assistant_message");
        assert_eq!(wire["turn"], 1);
        assert!(wire.get("step").is_none(), "{wire}");
        let ended: AgentEvent =
            serde_json::from_str(r#"{"type":"request_ended","turn":3,"reason":"completed"}"#)
                .unwrap();
        assert_eq!(
            ended,
            AgentEvent::Conversation(ConversationEvent::RequestEnded {
                last_step: StepId(3),
                reason: crate::bus::EndReason::Completed
            })
        );
    }

    #[test]
    fn stray_results_are_ignored() {
        let records = vec![
            Record::user("go"),
            Record::ToolResult {
                call: CallId::new("zz"),
                name: "bash".into(),
                result: ToolResult::error("x"),
            },
        ];
        assert_eq!(rebuild(&records).messages.len(), 1);
    }

    #[test]
    fn a_replayed_message_keeps_the_chips_of_the_images_it_sent() {
        // However the image came (`exec --image`, `@`, a paste, Ctrl+V), the log holds its
        // part; a resume or replay shows its chip under the message again.
        let image = ImageRef {
            hash: "ab".repeat(32),
            media_type: "image/png".into(),
            name: "shot.png".into(),
            width: 800,
            height: 600,
            bytes: 12_345,
        };
        let records = vec![Record::user_with(
            "look",
            vec![Part::text("[cairn] attached"), Part::Image(image)],
        )];
        let events = rebuild(&records).events;
        assert_eq!(
            events,
            [AgentEvent::Conversation(ConversationEvent::UserMessage {
                text: "look".into(),
                images: vec![ImageChip {
                    name: "shot.png".into(),
                    bytes: 12_345,
                    width: 800,
                    height: 600
                }],
                files: vec![],
                typed: None,
            })]
        );
    }
}

#[cfg(test)]
#[path = "history_fork_tests.rs"]
mod fork_tests;
