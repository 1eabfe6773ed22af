//! Rebuilding across forks: alone, twice, before and after a compaction, with todos; the
//! branch left stays in the replay events only.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::bus::{ConversationEvent, TimeTravelEvent};
use crate::tool_output::TodoStatus;

fn user(text: &str) -> Record {
    Record::user(text)
}

fn reply(text: &str) -> Record {
    Record::Assistant {
        text: text.into(),
        reasoning: Default::default(),
        tool_calls: Vec::new(),
    }
}

fn compacted(summarized: usize, summary: &str) -> Record {
    Record::Compacted {
        stubs: Vec::new(),
        summary: Some(summary.into()),
        summarized,
        before: 100,
        after: 10,
        usage: None,
    }
}

/// The conversation as (role, text) pairs.
fn texts(rebuilt: &Rebuilt) -> Vec<String> {
    rebuilt
        .messages
        .iter()
        .map(|m| match m {
            ChatMessage::User { content } => format!("u:{}", content.as_text()),
            ChatMessage::Assistant { content, .. } => {
                format!("a:{}", content.clone().unwrap_or_default())
            }
            other => format!("{other:?}"),
        })
        .collect()
}

fn user_events(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Conversation(ConversationEvent::UserMessage { text, .. }) => {
                Some(text.clone())
            }
            AgentEvent::TimeTravel(TimeTravelEvent::Rewound { at, .. }) => {
                Some(format!("<rewound to {at}>"))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_fork_goes_back_to_just_before_the_message_and_replay_keeps_the_branch_left() {
    let records = vec![
        user("one"),
        reply("r1"),
        user("two"),
        reply("r2"),
        Record::Fork { at: 1 },
        user("two again"),
        reply("r2'"),
    ];
    let rebuilt = rebuild(&records);
    assert_eq!(texts(&rebuilt), ["u:one", "a:r1", "u:two again", "a:r2'"]);
    assert_eq!(rebuilt.request_text, "two again");
    let ats: Vec<usize> = rebuilt.users.iter().map(|u| u.at).collect();
    assert_eq!(ats, [0, 2], "the current branch's messages, by log ordinal");
    assert_eq!(user_events(&rebuilt.events), ["one", "two again"]);
    let all = rebuild_all(&records);
    assert_eq!(texts(&all), texts(&rebuilt), "the same conversation");
    assert_eq!(
        user_events(&all.events),
        ["one", "two", "<rewound to 1>", "two again"]
    );
}

#[test]
fn two_forks_and_a_fork_to_the_first_message() {
    let records = vec![
        user("one"),
        reply("r1"),
        user("two"),
        reply("r2"),
        Record::Fork { at: 1 },
        user("three"),
        reply("r3"),
        // Back to before "three" (ordinal 2): the first fork's result.
        Record::Fork { at: 2 },
        user("four"),
    ];
    let rebuilt = rebuild(&records);
    assert_eq!(texts(&rebuilt), ["u:one", "a:r1", "u:four"]);
    let ats: Vec<usize> = rebuilt.users.iter().map(|u| u.at).collect();
    assert_eq!(ats, [0, 3]);
    let mut records = records;
    records.push(reply("r4"));
    records.push(Record::Fork { at: 0 });
    let rebuilt = rebuild(&records);
    assert!(rebuilt.messages.is_empty(), "{:?}", texts(&rebuilt));
    assert!(rebuilt.users.is_empty());
    assert!(rebuilt.request_text.is_empty());
}

#[test]
fn a_compaction_after_a_fork_applies_to_the_new_branch() {
    let records = vec![
        user("one"),
        reply("r1"),
        user("two"),
        reply("r2"),
        Record::Fork { at: 1 },
        user("three"),
        reply("r3"),
        // Live, the agent compacted [one, r1, three, r3]: the first two into a summary.
        compacted(2, "summary of one"),
        user("four"),
    ];
    assert_eq!(
        texts(&rebuild(&records)),
        ["u:summary of one", "u:three", "a:r3", "u:four"]
    );
}

#[test]
fn a_fork_after_a_compaction_goes_back_to_the_conversation_as_it_was_then() {
    let records = vec![
        user("one"),
        reply("r1"),
        user("two"),
        reply("r2"),
        compacted(2, "summary of one"),
        user("three"),
        reply("r3"),
    ];
    // To a message after the compaction: the compacted conversation before it.
    let mut to_three = records.clone();
    to_three.push(Record::Fork { at: 2 });
    assert_eq!(
        texts(&rebuild(&to_three)),
        ["u:summary of one", "u:two", "a:r2"]
    );
    // To a message the compaction summarised: the whole conversation before it, as it was
    // sent then.
    let mut to_two = records;
    to_two.push(Record::Fork { at: 1 });
    assert_eq!(texts(&rebuild(&to_two)), ["u:one", "a:r1"]);
}

#[test]
fn todos_come_back_with_the_conversation_and_session_rules_stay() {
    let todo_call = LoggedCall {
        id: CallId::new("t1"),
        name: "todo_write".into(),
        arguments: "{}".into(),
    };
    let records = vec![
        user("one"),
        Record::Assistant {
            text: String::new(),
            reasoning: Default::default(),
            tool_calls: vec![todo_call],
        },
        // Left without a result: the fork answers it before the branch is dropped.
        Record::SessionRule {
            prefix: "cargo test".into(),
        },
        user("two"),
        Record::Assistant {
            text: String::new(),
            reasoning: Default::default(),
            tool_calls: vec![LoggedCall {
                id: CallId::new("t2"),
                name: "todo_write".into(),
                arguments: "{}".into(),
            }],
        },
        Record::ToolResult {
            call: CallId::new("t2"),
            name: "todo_write".into(),
            result: ToolResult::ok(ToolOutput::Todos {
                todos: vec![TodoItem {
                    content: "later".into(),
                    status: TodoStatus::Pending,
                }],
            }),
        },
        Record::Fork { at: 1 },
    ];
    let rebuilt = rebuild(&records);
    assert!(rebuilt.todos.is_empty(), "{:?}", rebuilt.todos);
    assert_eq!(rebuilt.session_rules, ["cargo test"]);
    // The kept branch's open call is answered, once.
    assert_eq!(rebuilt.messages.len(), 3, "{:?}", texts(&rebuilt));
    assert_eq!(rebuilt.interrupted, [CallId::new("t1")]);
}

#[test]
fn a_fork_naming_no_message_is_ignored() {
    let records = vec![user("one"), reply("r1"), Record::Fork { at: 5 }];
    assert_eq!(texts(&rebuild(&records)), ["u:one", "a:r1"]);
}

#[test]
fn a_users_command_comes_back_on_resume_and_only_a_bang_one_reaches_the_model() {
    let shell = |id: &str, context: bool| Record::Shell {
        id: id.into(),
        command: "echo hi".into(),
        context,
        result: ToolResult::ok(ToolOutput::Command(crate::tool_output::CommandRun {
            command: "echo hi".into(),
            stdout: "hi\n".into(),
            exit_code: Some(0),
            ..Default::default()
        })),
        told: context.then(|| "[the user ran] $ echo hi\nhi\n".to_string()),
    };
    let records = [
        user("start"),
        reply("ok"),
        shell("s1", true),
        shell("s2", false),
        Record::Withdrawn {
            id: "q-1".into(),
            text: "never mind".into(),
        },
    ];
    let rebuilt = rebuild(&records);
    assert_eq!(
        texts(&rebuilt),
        ["u:start", "a:ok", "u:[the user ran] $ echo hi\nhi\n"]
    );
    let cards: Vec<(String, bool)> = rebuilt
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Shell(ShellEvent::Finished { id, context, .. }) => {
                Some((id.clone(), *context))
            }
            _ => None,
        })
        .collect();
    assert_eq!(cards, [("s1".into(), true), ("s2".into(), false)]);
}
