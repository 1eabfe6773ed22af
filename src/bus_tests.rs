//! The wire shape of events: `exec --json` scripts and the logs read these objects, so the
//! grouping of `AgentEvent` into enums must not show in them.

use serde_json::json;

use super::*;

fn round_trip(event: AgentEvent, expected: serde_json::Value) {
    let value = serde_json::to_value(&event).expect("serializes");
    assert_eq!(value, expected, "{event:?}");
    let back: AgentEvent = serde_json::from_value(value).expect("deserializes");
    assert_eq!(back, event);
}

#[test]
fn every_group_serializes_as_one_flat_object_tagged_by_type() {
    round_trip(
        AgentEvent::Conversation(ConversationEvent::Idle),
        json!({"type": "idle"}),
    );
    round_trip(
        AgentEvent::Conversation(ConversationEvent::TextDelta {
            step: StepId(3),
            text: "hi".into(),
        }),
        json!({"type": "text_delta", "turn": 3, "text": "hi"}),
    );
    round_trip(
        AgentEvent::Queue(QueueEvent::Withdrawn { id: "q1".into() }),
        json!({"type": "withdrawn", "id": "q1"}),
    );
    round_trip(
        AgentEvent::Report(ReportEvent::Warning {
            message: "careful".into(),
        }),
        json!({"type": "warning", "message": "careful"}),
    );
    round_trip(
        AgentEvent::Report(ReportEvent::Usage(Usage::default())),
        serde_json::to_value(Usage::default())
            .map(|mut usage| {
                usage["type"] = json!("usage");
                usage
            })
            .expect("usage serializes"),
    );
    round_trip(
        AgentEvent::TimeTravel(TimeTravelEvent::Rewound {
            at: 2,
            text: "again".into(),
        }),
        json!({"type": "rewound", "at": 2, "text": "again"}),
    );
    round_trip(
        AgentEvent::JobList(JobListEvent::Jobs { jobs: Vec::new() }),
        json!({"type": "jobs", "jobs": []}),
    );
    round_trip(
        AgentEvent::Tool(ToolEvent::Started {
            call: CallId("c1".into()),
        }),
        json!({"type": "tool", "event": "started", "call": "c1"}),
    );
}

#[test]
fn an_unknown_type_is_an_error_not_a_guess() {
    let unknown = serde_json::from_value::<AgentEvent>(json!({"type": "no_such_event"}));
    assert!(unknown.is_err());
    let wrong_fields = serde_json::from_value::<AgentEvent>(json!({"type": "warning"}));
    assert!(wrong_fields.is_err(), "{wrong_fields:?}");
}
