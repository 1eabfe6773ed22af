//! What the status line's counters are fed: the agent's count of every request of the
//! session, which a rewind does not take back (the tokens were paid for), and no cost at all
//! before the first request (never `$-0.0000`).
#![allow(clippy::unwrap_used)]

use crate::support::agent::TestAgent;
use cairn::bus::Mode;
use cairn::bus::{AgentEvent, Restore, Usage, UserCommand};
use cairn::bus::{ConversationEvent, ReportEvent, TimeTravelEvent};
use cairn::testing::{MockLlm, Script};

fn idle(e: &AgentEvent) -> bool {
    matches!(e, AgentEvent::Conversation(ConversationEvent::Idle))
}

fn answer(text: &str, prompt_tokens: u64) -> Script {
    Script {
        usage: Some(Usage {
            prompt_tokens,
            completion_tokens: 10,
            cached_tokens: 0,
        }),
        ..Script::text(text)
    }
}

fn last_session_usage(seen: &[AgentEvent]) -> Option<(Usage, u64)> {
    seen.iter().rev().find_map(|e| match e {
        AgentEvent::Report(ReportEvent::SessionUsage { totals, requests }) => {
            Some((*totals, *requests))
        }
        _ => None,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_count_keeps_the_requests_a_rewind_left_behind() {
    let (ws, data) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let llm = MockLlm::start(vec![answer("one", 1000), answer("two", 3000)]).await;
    let mut agent = TestAgent::new_session(ws.path(), data.path(), &llm.url(), Mode::Ask).await;
    agent.wait_for(idle).await;
    // Before any request: nothing spent, and no cost said at all.
    assert_eq!(last_session_usage(&agent.seen), Some((Usage::default(), 0)));
    assert!(agent.seen.iter().all(|e| !matches!(
        e,
        AgentEvent::Report(ReportEvent::Context {
            cost_usd: Some(_),
            ..
        })
    )));
    agent.submit("first").await;
    agent.wait_for(idle).await;
    agent.submit("second").await;
    agent.wait_for(idle).await;
    let (totals, requests) = last_session_usage(&agent.seen).unwrap();
    assert_eq!((totals.prompt_tokens, requests), (4000, 2));

    // Back to before the second message: the branch kept has one request, both were paid.
    agent.send(UserCommand::ListRewindPoints).await;
    let AgentEvent::TimeTravel(TimeTravelEvent::RewindPoints { points }) = agent
        .wait_for(|e| {
            matches!(
                e,
                AgentEvent::TimeTravel(TimeTravelEvent::RewindPoints { .. })
            )
        })
        .await
    else {
        unreachable!()
    };
    let at = points.iter().find(|p| p.text == "second").unwrap().at;
    agent
        .restore(Restore::Rewind {
            at,
            files: false,
            conversation: true,
        })
        .await;
    agent
        .wait_for(|e| matches!(e, AgentEvent::Report(ReportEvent::SessionUsage { .. })))
        .await;
    let (totals, requests) = last_session_usage(&agent.seen).unwrap();
    assert_eq!(
        (totals.prompt_tokens, totals.completion_tokens, requests),
        (4000, 20, 2),
        "a rewind takes back no tokens"
    );
    agent.shutdown().await;
}
