//! Time hooks add to a tool call: the `pre_tool` point (`Hooks::run`, what the agent awaits
//! before a call's gate answer is carried out) with no hook, one no-op hook (`cat >/dev/null`:
//! reads its JSON, says nothing) and five of them, beside `true` run as a bash call runs (the
//! cheapest tool call there is), median of 100 runs each, interleaved so load hits all alike.
//! The user's hooks run unsandboxed, as in a session. Run by hand: `cargo bench --bench hooks`.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use cairn::config::{HookEntry, HooksFile};
use cairn::hooks::{Context, Event, Hooks, RunSettings, Subject};
use cairn::process::{self, CommandSpec, Grant, OnTimeout};
use tokio_util::sync::CancellationToken;

const RUNS: usize = 100;

fn hooks(n: usize, ws: &Path, data: &Path) -> Hooks {
    let file = HooksFile {
        pre_tool: (0..n)
            .map(|_| HookEntry {
                command: "cat >/dev/null".into(),
                ..HookEntry::default()
            })
            .collect(),
        ..HooksFile::default()
    };
    let run = RunSettings {
        workspace: ws.to_path_buf(),
        ..RunSettings::default()
    };
    let trust = cairn::trust::ProcessTrust::new(data, ws);
    cairn::hooks::load(&file, Path::new("bench.toml"), None, run, trust)
        .unwrap()
        .hooks
}

fn median(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1e3
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let ws_path = std::fs::canonicalize(ws.path()).unwrap();
    let sets = [0, 1, 5].map(|n| hooks(n, &ws_path, data.path()));
    let cx = Context {
        session_id: "bench".into(),
        workspace: ws_path.clone(),
        ..Context::default()
    };
    let subject = Subject::Tool {
        name: "bash".into(),
        call_id: "c1".into(),
        arguments: serde_json::json!({"command": "true"}),
        result: None,
        is_error: false,
    };
    let cancel = CancellationToken::new();
    let settings = process::Settings::default();
    let mut times: [Vec<Duration>; 4] = Default::default();
    for _ in 0..RUNS {
        for (i, hooks) in sets.iter().enumerate() {
            let started = Instant::now();
            let outcome = hooks.run(Event::PreTool, &cx, &subject, &cancel).await;
            times[i].push(started.elapsed());
            assert!(outcome.blocked.is_none(), "{:?}", outcome.notices);
        }
        let spec = CommandSpec {
            command: "true",
            cwd: &ws_path,
            settings: &settings,
            grant: Grant::Unsandboxed,
        };
        let started = Instant::now();
        process::run(
            &spec,
            Duration::from_secs(10),
            &cancel,
            None,
            OnTimeout::Kill,
        )
        .await
        .unwrap();
        times[3].push(started.elapsed());
    }
    let [none, one, five, call] = times.map(median);
    println!("pre_tool point, no hook:      {none:.3} ms (median of {RUNS})");
    println!(
        "pre_tool point, 1 no-op hook: {one:.3} ms (adds {:.3} ms)",
        one - none
    );
    println!(
        "pre_tool point, 5 no-op hooks: {five:.3} ms (adds {:.3} ms)",
        five - none
    );
    println!("a bash call of `true` itself: {call:.3} ms");
}
