#![allow(clippy::unwrap_used)]

use super::*;
use crate::bus::{CallId, StepId};

fn kinds(updates: &[SessionUpdate]) -> Vec<&'static str> {
    updates
        .iter()
        .map(|u| match u {
            SessionUpdate::AgentMessageChunk(_) => "message",
            SessionUpdate::AgentThoughtChunk(_) => "thought",
            SessionUpdate::UserMessageChunk(_) => "user",
            SessionUpdate::ToolCall(_) => "tool_call",
            SessionUpdate::ToolCallUpdate(_) => "update",
            SessionUpdate::Plan(_) => "plan",
            _ => "other",
        })
        .collect()
}

#[test]
fn streamed_text_is_not_sent_twice_and_replayed_text_is_sent_whole() {
    let mut t = Translator::new(PathBuf::from("/w"));
    let step = StepId(1);
    let whole = AgentEvent::Conversation(ConversationEvent::AssistantMessage {
        step,
        text: "hi".into(),
        reasoning: "hm".into(),
    });
    let user = AgentEvent::Conversation(ConversationEvent::UserMessage {
        text: "do it".into(),
        images: Vec::new(),
        files: Vec::new(),
        typed: None,
    });
    // Replayed (before the first Idle): the user's message and the whole reply.
    assert_eq!(kinds(&t.translate(&user)), ["user"]);
    assert_eq!(kinds(&t.translate(&whole)), ["thought", "message"]);
    t.translate(&AgentEvent::Conversation(ConversationEvent::Idle));
    // Live: the editor shows what it sent, and the deltas are the reply.
    assert!(t.translate(&user).is_empty());
    let delta = AgentEvent::Conversation(ConversationEvent::TextDelta {
        step,
        text: "hi".into(),
    });
    assert_eq!(kinds(&t.translate(&delta)), ["message"]);
    assert_eq!(kinds(&t.translate(&whole)), ["thought"]);
}

#[test]
fn a_failed_call_fails_and_a_todo_list_is_a_plan() {
    let mut t = Translator::new(PathBuf::from("/w"));
    let call = CallId::new("c1");
    let requested = AgentEvent::Tool(ToolEvent::Requested {
        call: call.clone(),
        name: "bash".into(),
        args: serde_json::json!({"command": "false"}),
    });
    assert_eq!(kinds(&t.translate(&requested)), ["tool_call"]);
    let failed = AgentEvent::Tool(ToolEvent::Finished {
        call: call.clone(),
        name: "bash".into(),
        result: ToolResult::error("no"),
    });
    let SessionUpdate::ToolCallUpdate(update) = &t.translate(&failed)[0] else {
        panic!()
    };
    assert_eq!(update.fields.status, Some(ToolCallStatus::Failed));
    let todos = AgentEvent::Tool(ToolEvent::Finished {
        call,
        name: "todo_write".into(),
        result: ToolResult::ok(ToolOutput::Todos {
            todos: vec![crate::tool_output::TodoItem {
                content: "a".into(),
                status: crate::tool_output::TodoStatus::Pending,
            }],
        }),
    });
    assert_eq!(kinds(&t.translate(&todos)), ["update", "plan"]);
}
