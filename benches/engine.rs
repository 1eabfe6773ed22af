//! Engine benchmarks against the standalone scripted mock (`mock-llm`), driving the real
//! `cairn exec` binary: a one-turn prompt, a 200-step tool session, a 200,000-token answer,
//! the size of the first request, resuming a 100,000-record log in process, and two edits of
//! different files in one reply against one edit (they run concurrently).
//! Run with `cargo bench --bench engine`; figures are printed, nothing is asserted.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::print_stderr)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");
const MOCK: &str = env!("CARGO_BIN_EXE_mock-llm");

/// A running `mock-llm` with its script and its record of requests.
struct Mock {
    child: Child,
    url: String,
    record: PathBuf,
}

impl Mock {
    fn start(dir: &Path, name: &str, script: serde_json::Value) -> Mock {
        let script_path = dir.join(format!("{name}.json"));
        std::fs::write(&script_path, serde_json::to_vec(&script).unwrap()).unwrap();
        let record = dir.join(format!("{name}.requests.jsonl"));
        let mut child = Command::new(MOCK)
            .arg("--script")
            .arg(&script_path)
            .arg("--record")
            .arg(&record)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().trim_start_matches("listening ").to_string();
        Mock { child, url, record }
    }

    fn first_request_bytes(&self) -> usize {
        let text = std::fs::read_to_string(&self.record).unwrap_or_default();
        text.lines().next().map_or(0, str::len)
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Wall time and peak RSS (KiB) of one `cairn exec`.
fn run_exec(dir: &Path, url: &str, extra: &[&str], prompt: &str) -> (Duration, i64, bool) {
    let data = dir.join("data");
    // The 200,000-token answers are larger than the default reply cap a real model never hits.
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("config.toml"), "max_reply_bytes = 8388608\n").unwrap();
    let start = Instant::now();
    let child = Command::new(CAIRN)
        .current_dir(dir)
        .env("CAIRN_DATA_DIR", &data)
        .env("CAIRN_CONFIG_DIR", &data)
        .env_remove("DEEPSEEK_API_KEY")
        .args(["exec", "--base-url", url, "--mode", "never"])
        .args(extra)
        .arg(prompt)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (ok, rss_kib) = wait_with_rusage(child);
    (start.elapsed(), rss_kib, ok)
}

/// Waits for the child and reads its peak RSS from the kernel (`wait4`).
fn wait_with_rusage(child: Child) -> (bool, i64) {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own unreaped child; status and usage are valid out-pointers.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    std::mem::forget(child);
    (
        waited == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        usage.ru_maxrss,
    )
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn one_turn(dir: &Path) {
    let mock = Mock::start(dir, "one_turn", json!([]));
    let mut times = Vec::new();
    let mut rss = 0;
    for _ in 0..20 {
        let (t, r, ok) = run_exec(dir, &mock.url, &[], "hello");
        assert!(ok, "one-turn exec failed");
        times.push(t);
        rss = rss.max(r);
    }
    println!(
        "one-turn exec: median {:.1} ms, peak RSS {:.1} MB (target < 50 ms, < 20 MB)",
        median(times).as_secs_f64() * 1e3,
        rss as f64 / 1024.0
    );
    println!(
        "first request for a one-word prompt: {} bytes (target < 8 KB)",
        mock.first_request_bytes()
    );
}

fn many_steps(dir: &Path) {
    const STEPS: usize = 200;
    let mut turns: Vec<serde_json::Value> = (0..STEPS)
        .map(|i| {
            json!({"tool_calls": [{"id": format!("c{i}"), "name": "todo_write",
                "arguments": {"todos": [{"content": format!("step {i}"), "status": "in_progress"}]}}]})
        })
        .collect();
    turns.push(json!({"text": "done"}));
    let mock = Mock::start(dir, "steps", json!(turns));
    let (t, rss, ok) = run_exec(dir, &mock.url, &["--max-steps", "400"], "go");
    assert!(ok, "200-step exec failed");
    let base = Mock::start(dir, "steps_base", json!([]));
    let (t1, _, _) = run_exec(dir, &base.url, &[], "go");
    let per_step = (t.saturating_sub(t1)).as_secs_f64() * 1e3 / STEPS as f64;
    println!(
        "{STEPS}-step session: {:.0} ms total, {per_step:.2} ms per step beyond a one-turn run, peak RSS {:.1} MB (target < 2 ms/step)",
        t.as_secs_f64() * 1e3,
        rss as f64 / 1024.0
    );
}

fn huge_answer(dir: &Path) {
    let mock = Mock::start(dir, "huge", json!([{"text_tokens": 200_000}]));
    // The mock alone: read the whole stream over plain HTTP.
    let start = Instant::now();
    let bytes = fetch_stream(&mock.url);
    let mock_alone = start.elapsed();
    let mock2 = Mock::start(dir, "huge2", json!([{"text_tokens": 200_000}]));
    let (t, rss, ok) = run_exec(dir, &mock2.url, &[], "write a lot");
    assert!(ok, "huge-answer exec failed");
    println!(
        "200,000-token answer: exec {:.0} ms, peak RSS {:.1} MB; the mock alone sends its {:.1} MB in {:.0} ms (target < 600 ms, < 40 MB)",
        t.as_secs_f64() * 1e3,
        rss as f64 / 1024.0,
        bytes as f64 / 1e6,
        mock_alone.as_secs_f64() * 1e3
    );
}

fn fetch_stream(url: &str) -> usize {
    let rest = url.trim_start_matches("http://");
    let (host, path) = rest.split_once('/').unwrap();
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    let body = br#"{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}"#;
    write!(
        stream,
        "POST /{path}/chat/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(body).unwrap();
    let mut all = Vec::new();
    std::io::Read::read_to_end(&mut stream, &mut all).unwrap();
    all.len()
}

fn resume_big_log(dir: &Path) {
    use cairn::bus::{CallId, SessionId, ToolResult};
    use cairn::session_log::{LoggedCall, Record, SessionLog, read_log};
    const RECORDS: usize = 100_000;
    let logs = dir.join("logs");
    let id = SessionId("20260101-000000-beef".into());
    let mut log = SessionLog::create(&logs, &id).unwrap();
    log.append(&Record::Meta {
        id: id.clone(),
        cwd: dir.display().to_string(),
        provider: "custom".into(),
        model: "m".into(),
        version: "0".into(),
        started: "2026-01-01T00:00:00Z".into(),
        parent: None,
    })
    .unwrap();
    let mut written = 1;
    let mut i = 0;
    while written < RECORDS {
        let call = CallId(format!("c{i}"));
        log.append(&Record::user(format!("request {i}"))).unwrap();
        log.append(&Record::Assistant {
            text: "Let me look.".into(),
            reasoning: Default::default(),
            tool_calls: vec![LoggedCall {
                id: call.clone(),
                name: "bash".into(),
                arguments: r#"{"command":"ls -la"}"#.into(),
            }],
        })
        .unwrap();
        log.append(&Record::ToolResult {
            call,
            name: "bash".into(),
            result: ToolResult {
                is_error: false,
                text: "total 0\nfile-a\nfile-b\n".into(),
                output: None,
            },
        })
        .unwrap();
        written += 3;
        i += 1;
    }
    let path = log.path().to_path_buf();
    drop(log);
    let size = std::fs::metadata(&path).unwrap().len();
    let start = Instant::now();
    let loaded = read_log(&path).unwrap();
    let rebuilt = cairn::agent::history::rebuild(&loaded.records);
    let t = start.elapsed();
    println!(
        "resume of a {RECORDS}-record log ({:.1} MB): {:.0} ms to read and rebuild {} messages (target < 1 s)",
        size as f64 / 1e6,
        t.as_secs_f64() * 1e3,
        rebuilt.messages.len()
    );
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wants = |name: &str| only.is_empty() || only.iter().any(|o| name.contains(o.as_str()));
    if wants("one_turn") {
        one_turn(dir.path());
    }
    if wants("steps") {
        many_steps(dir.path());
    }
    if wants("huge") {
        huge_answer(dir.path());
    }
    if wants("resume") {
        resume_big_log(dir.path());
    }
    if wants("writes") {
        concurrent_writes(dir.path());
    }
}

/// Two edits of different 20 MB files in one reply against one edit in a reply of its own, and
/// against the same two edits in consecutive replies (one after the other), timed from the
/// `cairn exec --json` events as they arrive: from the first call's `requested` to the last
/// call's `finished`.
fn concurrent_writes(dir: &Path) {
    const RUNS: usize = 7;
    let ws = dir.join("writes");
    std::fs::create_dir_all(&ws).unwrap();
    let names = ["one.rs", "two_a.rs", "two_b.rs"];
    for name in names {
        let mut text = String::new();
        let mut i = 0;
        while text.len() < 20 * 1024 * 1024 {
            text.push_str(&format!("fn function_{i}() -> u64 {{ {i} * 2 }}\n"));
            if i == 250_000 {
                text.push_str("const TOGGLE: u32 = 0;\n");
            }
            i += 1;
        }
        std::fs::write(ws.join(name), text).unwrap();
    }
    let edit = |id: String, name: &str, run: usize| {
        let (old, new) = if run.is_multiple_of(2) {
            ("= 0;", "= 1;")
        } else {
            ("= 1;", "= 0;")
        };
        json!({"id": id, "name": "edit_file", "arguments": {"path": name,
            "old_string": format!("const TOGGLE: u32 {old}"),
            "new_string": format!("const TOGGLE: u32 {new}")}})
    };
    let reads: Vec<_> = names
        .iter()
        .map(|name| json!({"id": format!("r-{name}"), "name": "read_file", "arguments": {"path": name, "limit": 1}}))
        .collect();
    let mut turns = vec![json!({ "tool_calls": reads })];
    for run in 0..RUNS {
        turns.push(json!({"tool_calls": [edit(format!("one-{run}"), names[0], run)]}));
        turns.push(json!({"tool_calls": [
            edit(format!("a-{run}"), names[1], 0),
            edit(format!("b-{run}"), names[2], 0),
        ]}));
        // The same two edits one after the other (two replies): the sequential baseline.
        turns.push(json!({"tool_calls": [edit(format!("sa-{run}"), names[1], 1)]}));
        turns.push(json!({"tool_calls": [edit(format!("sb-{run}"), names[2], 1)]}));
    }
    turns.push(json!({"text": "done"}));
    let mock = Mock::start(dir, "writes", json!(turns));
    let data = dir.join("writes-data");
    std::fs::create_dir_all(&data).unwrap();
    let mut child = Command::new(CAIRN)
        .current_dir(&ws)
        .env("CAIRN_DATA_DIR", &data)
        .env("CAIRN_CONFIG_DIR", &data)
        .env_remove("DEEPSEEK_API_KEY")
        .args(["exec", "--json", "--max-steps", "100", "--mode", "never"])
        .args(["--base-url", &mock.url, "edit"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut seen: std::collections::HashMap<(String, String), Instant> = Default::default();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let event: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if event["type"] == "tool"
            && let (Some(kind), Some(call)) = (event["event"].as_str(), event["call"].as_str())
        {
            if kind == "finished" {
                assert!(
                    event["result"]["is_error"] == false,
                    "{call} failed: {}",
                    event["result"]["text"]
                );
            }
            seen.insert((kind.to_owned(), call.to_owned()), Instant::now());
        }
    }
    assert!(child.wait().unwrap().success(), "the writes exec failed");
    let span = |first: &str, last: &str| {
        seen[&("finished".to_owned(), last.to_owned())]
            - seen[&("requested".to_owned(), first.to_owned())]
    };
    let one = median(
        (0..RUNS)
            .map(|run| span(&format!("one-{run}"), &format!("one-{run}")))
            .collect(),
    );
    let two = median(
        (0..RUNS)
            .map(|run| span(&format!("a-{run}"), &format!("b-{run}")))
            .collect(),
    );
    let apart = median(
        (0..RUNS)
            .map(|run| span(&format!("sa-{run}"), &format!("sb-{run}")))
            .collect(),
    );
    println!(
        "edits of 20 MB files: two different files in one reply {:.1} ms, one file {:.1} ms: {:.2}x (target < 1.3x); the same two in consecutive replies {:.1} ms: {:.2}x ({RUNS} runs, median)",
        two.as_secs_f64() * 1e3,
        one.as_secs_f64() * 1e3,
        two.as_secs_f64() / one.as_secs_f64(),
        apart.as_secs_f64() * 1e3,
        apart.as_secs_f64() / one.as_secs_f64()
    );
}
