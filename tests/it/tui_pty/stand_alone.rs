//! No key typed as text answers anything, in the real binary: bursts of typing written at a
//! seeded sweep of offsets from 0 to 1,500 ms after an approval prompt, the trust box or a
//! revert preview appears answer nothing, trust nothing, revert nothing, and every character
//! arrives in the input in order (checked where it ends up: the message the model receives).
//! A lone key after the prompt's dead time acts (`Tui::press` waits `harness::PAUSE`, the dead
//! time plus 150 ms), and a lone `a` widens nothing without its confirmation.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::time::{Duration, Instant};

use serde_json::json;

use super::harness::{PAUSE, Tui};
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::{MockLlm, Script};

/// Offsets from 0 to 1,500 ms after a prompt appears: both ends, and `n - 2` drawn between
/// them by a fixed-seed generator (the seed is in every failure message).
fn sweep(seed: u64, n: usize) -> Vec<u64> {
    let mut state = seed;
    let mut out = vec![0, 1500];
    while out.len() < n {
        // SplitMix64: a seeded, portable sequence.
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        out.push((z ^ (z >> 31)) % 1501);
    }
    out
}

const SEED: u64 = 31;

/// Typed as one write: every key of an approval prompt is in it (y, a, p, u, n, m).
const BURST: &str = "any plum yes ";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_bursts_at_any_offset_after_an_approval_answer_nothing_and_reach_the_input() {
    let offsets = sweep(SEED, 8);
    let sb = Sandbox::new();
    let mut script: Vec<Script> = (0..offsets.len())
        .map(|i| {
            Script::tool_call(
                &format!("c{i}"),
                "bash",
                json!({"command": format!("touch marker-{i}")}),
            )
        })
        .collect();
    script.push(Script::text("Left them all."));
    script.push(Script::text("Read you."));
    let llm = MockLlm::start(script).await;
    // The first message comes from the command line: nothing is typed before the prompts.
    let mut tui = Tui::start_args(
        &sb,
        &[
            "--base-url",
            &llm.url(),
            "--mode",
            "auto-edit",
            "set things up",
        ],
        120,
        40,
    );
    for (i, offset) in offsets.iter().enumerate() {
        let shown = format!("touch marker-{i}");
        tui.wait_for(&format!("the prompt for {shown}"), |s| {
            s.contains("Allow bash?") && s.contains(&shown)
        })
        .await;
        tokio::time::sleep(Duration::from_millis(*offset)).await;
        tui.send(BURST);
        // Longer than any window of the rule: whatever the burst would do is done by now.
        tokio::time::sleep(PAUSE).await;
        let screen = tui.contents();
        assert!(
            screen.contains("Allow bash?") && screen.contains(&shown),
            "seed {SEED}, offset {offset} ms: the prompt was answered:\n{screen}"
        );
        assert_eq!(
            llm.requests().len(),
            i + 1,
            "seed {SEED}, offset {offset} ms: a decision reached the model"
        );
        assert!(!sb.path(&format!("marker-{i}")).exists());
        tui.send("n");
    }
    tui.wait_for("the turn's end", |s| {
        s.contains("Left them all.") && s.contains("idle")
    })
    .await;
    for i in 0..offsets.len() {
        assert!(!sb.path(&format!("marker-{i}")).exists(), "marker-{i}");
        let told = llm.tool_result(i + 1, &format!("c{i}")).unwrap();
        assert!(told.contains("denied"), "c{i}: {told}");
    }
    // Everything typed is in the input, in order: it is the next message.
    tui.send("\r");
    tui.wait_for_text("Read you.").await;
    let sent = llm.request(offsets.len() + 1).to_string();
    let typed = BURST.repeat(offsets.len());
    assert!(
        sent.contains(typed.trim_end()),
        "seed {SEED}: the typing did not arrive whole and in order: {sent}"
    );
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_lone_y_approves_and_a_lone_a_widens_nothing_until_confirmed() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "bash", json!({"command": "touch one"})),
        Script::tool_call("c2", "bash", json!({"command": "touch two"})),
        Script::tool_call("c3", "bash", json!({"command": "touch two"})),
        Script::text("All made."),
    ])
    .await;
    let mut tui = Tui::start_args(
        &sb,
        &["--base-url", &llm.url(), "--mode", "auto-edit", "make them"],
        120,
        40,
    );
    tui.wait_for("the first prompt", |s| {
        s.contains("touch one") && s.contains("approve once")
    })
    .await;
    // A lone y after the dead time (PAUSE = dead time + 150 ms) approves this call.
    tui.press("y").await;
    tui.wait_for("the second prompt", |s| {
        s.contains("touch two") && s.contains("approve once")
    })
    .await;
    assert!(sb.path("one").exists());
    // A lone a asks first: nothing runs, nothing is allowed for the session.
    tui.press("a").await;
    tui.wait_for_text("for the rest of this session, without asking again?")
        .await;
    tokio::time::sleep(PAUSE).await;
    assert!(!sb.path("two").exists(), "a alone approved");
    assert_eq!(llm.requests().len(), 2);
    // The confirmation's y allows `touch two` for the session: the same call again does not
    // ask.
    tui.press("y").await;
    tui.wait_for_text("All made.").await;
    assert!(sb.path("two").exists());
    let again = llm.tool_result(3, "c3").unwrap();
    assert!(!again.contains("denied"), "{again}");
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_message_typed_at_any_offset_after_the_trust_box_trusts_nothing_and_is_sent() {
    const SHIPPED: &str = "[permissions]\nallow = [\"curl\"]\n";
    for offset in sweep(SEED, 5) {
        let sb = Sandbox::new().file(".cairn/config.toml", SHIPPED);
        let llm = MockLlm::start(vec![Script::text("On it.")]).await;
        let mut tui = Tui::start(&sb, &llm.url(), "auto-edit", 100, 30);
        tui.wait_for_text("Trust this project's rules?").await;
        tokio::time::sleep(Duration::from_millis(offset)).await;
        // `y` first: a message starting with it must not trust `allow curl`.
        tui.send("yes list the files\r");
        tui.wait_for_text("On it.").await;
        let screen = tui.contents();
        assert!(
            screen.contains("Trust this project's rules?"),
            "seed {SEED}, offset {offset} ms: the box was answered:\n{screen}"
        );
        assert!(!screen.contains("project rules trusted"), "{screen}");
        let sent = llm.request(0).to_string();
        assert!(
            sent.contains("yes list the files"),
            "offset {offset} ms: {sent}"
        );
        let store = cairn::permissions::trust::TrustStore::in_data_dir(&sb.data_dir());
        assert!(
            !store.current_trusted(&sb.workspace()),
            "offset {offset} ms"
        );
        // Trusting takes y and the confirmation's y.
        tui.press("y").await;
        tui.wait_for_text("yes, trust").await;
        tui.press("y").await;
        tui.wait_for_text("project rules trusted").await;
        tui.quit().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_typing_at_any_offset_after_a_revert_preview_reverts_nothing() {
    let sb = Sandbox::new().file("f.txt", "one\ntwo\n");
    let llm = MockLlm::start(vec![
        Script::tool_call("c1", "read_file", json!({"path": "f.txt"})),
        Script::tool_call(
            "c2",
            "edit_file",
            json!({"path": "f.txt", "old_string": "two", "new_string": "TWO"}),
        ),
        Script::text("Edited."),
        Script::text("Fine."),
    ])
    .await;
    let mut tui = Tui::start(&sb, &llm.url(), "never", 120, 40);
    tui.submit("edit f.txt").await;
    tui.wait_for("the edit", |s| s.contains("Edited.") && s.contains("idle"))
        .await;
    let offsets = sweep(SEED, 5);
    let mut typed = String::new();
    for offset in &offsets {
        // The diff pane, then `r` alone: the preview.
        tui.press("\t\t\t").await;
        tui.wait_for_text("1 edit · 1 file").await;
        tui.press("r").await;
        tui.wait_for("the preview", |s| {
            s.contains("Revert?") && s.contains("y apply…")
        })
        .await;
        tokio::time::sleep(Duration::from_millis(*offset)).await;
        // `y` (apply) and `r` in a burst of one write.
        tui.send("yes really ");
        typed.push_str("yes really ");
        tokio::time::sleep(PAUSE).await;
        let screen = tui.contents();
        assert!(
            screen.contains("Revert?") && !screen.contains("yes, revert"),
            "seed {SEED}, offset {offset} ms: the preview was answered:\n{screen}"
        );
        assert_eq!(sb.read("f.txt"), "one\nTWO\n", "offset {offset} ms");
        tui.send("\x1b");
        tui.wait_for("the preview closed", |s| !s.contains("Revert?"))
            .await;
    }
    // The focus is on the input now: everything typed is the next message, in order.
    tui.send("\r");
    tui.wait_for_text("Fine.").await;
    let sent = llm.request(3).to_string();
    assert!(sent.contains(typed.trim_end()), "seed {SEED}: {sent}");
    assert_eq!(sb.read("f.txt"), "one\nTWO\n");
    tui.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_pty_a_lone_y_after_the_dead_time_acts_within_its_window_and_a_frame() {
    const PRESSES: usize = 5;
    let sb = Sandbox::new();
    let mut script: Vec<Script> = (0..PRESSES)
        .map(|i| {
            Script::tool_call(
                &format!("c{i}"),
                "bash",
                json!({"command": format!("touch lone-{i}")}),
            )
        })
        .collect();
    script.push(Script::text("All there."));
    let llm = MockLlm::start(script).await;
    let mut tui = Tui::start_args(
        &sb,
        &[
            "--base-url",
            &llm.url(),
            "--mode",
            "auto-edit",
            "touch them",
        ],
        120,
        40,
    );
    let mut delays = Vec::new();
    for i in 0..PRESSES {
        let shown = format!("touch lone-{i}");
        tui.wait_for(&format!("the prompt for {shown}"), |s| {
            s.contains("approve once") && s.contains(&shown)
        })
        .await;
        tokio::time::sleep(PAUSE).await;
        let sent = Instant::now();
        tui.send("y");
        // The prompt closes on the frame after the key acted; polled finely to measure it.
        loop {
            let screen = tui.contents();
            if !(screen.contains("approve once") && screen.contains(&shown)) {
                break;
            }
            assert!(sent.elapsed() < super::harness::DEADLINE, "{screen}");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        delays.push(sent.elapsed());
    }
    tui.wait_for_text("All there.").await;
    for i in 0..PRESSES {
        assert!(sb.path(&format!("lone-{i}")).exists(), "lone-{i}");
    }
    delays.sort();
    let after = cairn::tui::stand_alone::AFTER;
    eprintln!(
        "lone-key delay (write to prompt closed): median {:?}, max {:?}; window {after:?}",
        delays[PRESSES / 2],
        delays[PRESSES - 1]
    );
    // The window, a frame, and room for a loaded machine: a deliberate press is not held
    // back noticeably.
    assert!(delays[PRESSES / 2] >= after, "{delays:?}");
    assert!(
        delays[PRESSES / 2] < after + Duration::from_millis(400),
        "{delays:?}"
    );
    tui.quit().await;
}
