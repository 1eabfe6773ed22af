//! Long-session benchmarks of the context window, driving the real `cairn exec` binary against
//! the in-process scripted mock:
//! - cairn's CPU time per step at step 300 of a long session vs at step 10 (target: under
//!   1.2x), read from `/proc` so that other load on the machine hardly matters;
//! - peak RSS of `cairn exec` over a 1,000-step session whose tool results are 64 KiB each
//!   (target: under 64 MB);
//! - the share of prompt bytes a request shares as a prefix with the one before, over a
//!   100-step session with a todo update every 5 steps (target: over 95%).
//!
//! Set `CAIRN_BASELINE_BIN` to another build of cairn to measure it the same way, in the same
//! run, for comparison (per-step overhead and cache ratio).
//!
//! Run with `cargo bench --bench context` (or `cargo test --bench context` for a debug build);
//! figures are printed, nothing is asserted.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn::testing::{MockLlm, Script};
use serde_json::json;

const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

/// CPU time (ns) all threads of process `pid` have used so far (`/proc/PID/task/*/schedstat`):
/// unlike wall time, hardly disturbed by other work on a loaded machine.
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// Runs `cairn exec` to the end; returns whether it succeeded and its peak RSS in KiB.
fn run_exec(
    bin: &str,
    dir: &Path,
    url: &str,
    max_steps: u32,
    config: &str,
    pid_out: &AtomicU32,
) -> (bool, i64) {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("config.toml"), config).unwrap();
    let child = Command::new(bin)
        .current_dir(dir.join("ws"))
        .env("CAIRN_DATA_DIR", &data)
        .env("CAIRN_CONFIG_DIR", &data)
        .env_remove("DEEPSEEK_API_KEY")
        .args(["exec", "--base-url", url, "--mode", "never", "--max-steps"])
        .arg(max_steps.to_string())
        .arg("work through the files")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    pid_out.store(child.id(), Ordering::SeqCst);
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

fn workspace(files: usize, bytes: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let line = "the quick brown fox jumps over the lazy dog, again and again and again\n";
    for f in 0..files {
        let text = line.repeat(bytes / line.len());
        std::fs::write(ws.join(format!("f{f}.txt")), text).unwrap();
    }
    dir
}

/// Tool-offering requests only (a compaction's summary request offers none).
fn is_step(body: &serde_json::Value) -> bool {
    body.get("tools").is_some()
}

/// A session of `steps` reads of `files` files (a todo update every `todo_every` steps),
/// then an answer. Returns the mock (with its records), the CPU time cairn had used when each
/// step's request arrived, and cairn's peak RSS in KiB.
async fn session(
    dir: &Path,
    steps: usize,
    files: usize,
    todo_every: usize,
    bin: &str,
    config: &str,
    forget_bodies: bool,
) -> (MockLlm, Vec<u64>, i64) {
    let llm = MockLlm::start(Vec::new()).await;
    if forget_bodies {
        llm.forget_bodies();
    }
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&arrivals);
    let pid = Arc::new(AtomicU32::new(0));
    let cairn_pid = Arc::clone(&pid);
    llm.respond_with(move |body| {
        if !is_step(body) {
            return Some(Script::text(
                "## Goal\nread the files\n## Done so far\nread them",
            ));
        }
        let mut seen = seen.lock().unwrap();
        let n = seen.len();
        seen.push(cpu_ns(cairn_pid.load(Ordering::SeqCst)));
        let id = format!("c{n}");
        Some(if n >= steps {
            Script::text("done")
        } else if todo_every > 0 && n % todo_every == 0 {
            Script::tool_call(
                &id,
                "todo_write",
                json!({"todos": [
                    {"content": format!("step {n}"), "status": "in_progress"},
                    {"content": "report", "status": "pending"},
                ]}),
            )
        } else {
            Script::tool_call(
                &id,
                "read_file",
                json!({"path": format!("f{}.txt", n % files)}),
            )
        })
    });
    let url = llm.url();
    let (bin, dir, config) = (bin.to_string(), dir.to_path_buf(), config.to_string());
    let (ok, rss) = tokio::task::spawn_blocking(move || {
        run_exec(&bin, &dir, &url, steps as u32 + 1, &config, &pid)
    })
    .await
    .unwrap();
    assert!(ok, "the session failed");
    let arrivals = arrivals.lock().unwrap().clone();
    (llm, arrivals, rss)
}

fn median(samples: &[Duration]) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

/// Sessions per window: one session's ten-step medians swing by a third on a busy machine, so
/// the figure pools the steps of several.
const STEP_ROUNDS: usize = 3;

async fn step_overhead(bin: &str, build: &str) {
    for (label, config) in [
        ("default 128k window", ""),
        ("32k window", "context_window = 32768\n"),
    ] {
        let (mut early, mut late, mut rounds) = (Vec::new(), Vec::new(), Vec::new());
        let (mut sizes, mut summaries) = ((0, 0), 0);
        for _ in 0..STEP_ROUNDS {
            let dir = workspace(7, 8 * 1024);
            let (llm, arrivals, _) = session(dir.path(), 320, 7, 5, bin, config, false).await;
            let steps: Vec<Duration> = arrivals
                .windows(2)
                .map(|w| Duration::from_nanos(w[1].saturating_sub(w[0])))
                .collect();
            let (this_early, this_late) = (&steps[5..15], &steps[295..305]);
            rounds.push(median(this_late).as_secs_f64() / median(this_early).as_secs_f64());
            early.extend_from_slice(this_early);
            late.extend_from_slice(this_late);
            summaries = llm.recorded().iter().filter(|r| !is_step(&r.body)).count();
            let size = |i: usize| llm.request_tokens().get(i).copied().unwrap_or(0);
            sizes = (size(10), size(300 + summaries));
        }
        let rounds: Vec<String> = rounds.iter().map(|r| format!("{r:.2}x")).collect();
        println!(
            "{build}: cairn CPU time per step, 8 KiB reads, {label}, {STEP_ROUNDS} sessions pooled: steps 5-15 median {:?} (request ~{} tokens); steps 295-305 median {:?} (~{} tokens); ratio {:.2}x (per session {}); {summaries} summaries",
            median(&early),
            sizes.0,
            median(&late),
            sizes.1,
            median(&late).as_secs_f64() / median(&early).as_secs_f64(),
            rounds.join(", "),
        );
    }
}

async fn peak_rss() {
    let dir = workspace(4, 64 * 1024);
    let (llm, _, rss) = session(dir.path(), 1000, 4, 0, CAIRN, "", true).await;
    let largest = llm.request_tokens().into_iter().max().unwrap_or(0);
    println!(
        "1,000 steps of 64 KiB reads: cairn peak RSS {:.1} MB; largest request {largest} tokens by the mock's count",
        rss as f64 / 1024.0
    );
}

/// Sum over requests of the bytes shared with the previous request's messages, over the sum of
/// their messages' bytes.
fn prefix_ratio(bodies: &[Vec<u8>]) -> f64 {
    let messages = |raw: &[u8]| -> Vec<u8> {
        let end = raw
            .windows(11)
            .position(|w| w == b"],\"stream\":")
            .unwrap_or(raw.len());
        raw[..end].to_vec()
    };
    let (mut shared, mut total) = (0usize, 0usize);
    for pair in bodies.windows(2) {
        let (a, b) = (messages(&pair[0]), messages(&pair[1]));
        shared += a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        total += b.len();
    }
    shared as f64 / total.max(1) as f64
}

async fn cache_ratio(bin: &str, label: &str) {
    let dir = workspace(7, 1024);
    let (llm, _, _) = session(dir.path(), 100, 7, 5, bin, "", false).await;
    let bodies: Vec<Vec<u8>> = llm
        .recorded()
        .into_iter()
        .filter(|r| is_step(&r.body))
        .map(|r| r.raw)
        .collect();
    println!(
        "{label}: 100 steps, todo update every 5: {:.1}% of prompt bytes are a prefix of the previous request",
        prefix_ratio(&bodies) * 100.0
    );
}

#[tokio::main]
async fn main() {
    let only = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let run = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));
    // First: a child's ru_maxrss starts from this process's own resident pages at spawn, and
    // the other runs leave the mock holding hundreds of MB of recorded requests.
    if run("rss") {
        peak_rss().await;
    }
    if run("cache") {
        cache_ratio(CAIRN, "this build").await;
        if let Some(baseline) = std::env::var_os("CAIRN_BASELINE_BIN") {
            let baseline = PathBuf::from(baseline);
            cache_ratio(&baseline.to_string_lossy(), "baseline").await;
        }
    }
    if run("step") {
        step_overhead(CAIRN, "this build").await;
        if let Some(baseline) = std::env::var_os("CAIRN_BASELINE_BIN") {
            let baseline = PathBuf::from(baseline);
            step_overhead(&baseline.to_string_lossy(), "baseline").await;
        }
    }
}
