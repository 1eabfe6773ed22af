//! Output throughput and memory of the bash tool, end to end (spawn, capture, spill, model
//! text): `seq 1 5000000` (39 MB) must finish in under 0.4 s, and a command printing 1 GB must
//! grow cairn's peak RSS by less than 16 MB. Run by hand: `cargo bench --bench bash_output`.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use cairn::process;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cairn::tool_output::{CommandRun, ToolOutput};
use cairn::tools::bash::Bash;
use cairn::tools::{Tool, ToolCx, ToolEnv};
use serde_json::json;

/// A field of /proc/self/status in kB (`VmRSS`, `VmHWM`).
fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|line| line.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

async fn run_command(cx: &ToolCx, command: &str) -> (CommandRun, String, Duration) {
    let started = Instant::now();
    let output = Bash
        .run(json!({ "command": command, "timeout_ms": 600_000 }), cx)
        .await
        .unwrap();
    let elapsed = started.elapsed();
    let text = output.model_text();
    let ToolOutput::Command(run) = output else {
        panic!("not a command run")
    };
    if let Some(path) = &run.spill_path {
        let _ = std::fs::remove_file(path);
    }
    (run, text, elapsed)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let env = Arc::new(ToolEnv::new(
        dir.path().to_path_buf(),
        &cairn::dirs::Dirs::from_env(),
        process::Settings::default(),
    ));
    let mut cx = ToolCx::new(env);
    // The agent always attaches a live tail; count what it receives, as a UI would.
    let tail_bytes = Arc::new(AtomicUsize::new(0));
    let counter = tail_bytes.clone();
    cx.tail = Some(Arc::new(move |chunk: &str| {
        counter.fetch_add(chunk.len(), Ordering::Relaxed);
    }));
    runtime.block_on(async {
        // Warm up: the first spawn pays for loading bash.
        run_command(&cx, "true").await;

        // The same commands writing to /dev/null: the floor set by the commands themselves.
        for command in ["yes | head -c 1000000000 > /dev/null", "seq 1 5000000 > /dev/null"] {
            let started = Instant::now();
            std::process::Command::new("bash").args(["-c", command]).status().unwrap();
            println!("baseline `{command}`: {:.0} ms", started.elapsed().as_secs_f64() * 1000.0);
        }

        // 1 GB first, so the peak it causes is not hidden by an earlier one.
        let hwm_before = status_kb("VmHWM");
        let (run_1g, text, elapsed) = run_command(&cx, "yes | head -c 1000000000").await;
        let hwm_after = status_kb("VmHWM");
        println!(
            "1 GB (yes | head -c 1000000000): {:.2} s, {:.0} MB/s, peak RSS {} kB -> {} kB (growth {} kB), model text {} bytes, stdout_bytes {}",
            elapsed.as_secs_f64(),
            1000.0 / elapsed.as_secs_f64(),
            hwm_before,
            hwm_after,
            hwm_after - hwm_before,
            text.len(),
            run_1g.stdout_bytes,
        );
        println!("live tail received {} bytes for the 1 GB run", tail_bytes.swap(0, Ordering::Relaxed));

        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..7 {
            let (run, text, elapsed) = run_command(&cx, "seq 1 5000000").await;
            times.push(elapsed);
            last = Some((run, text));
        }
        times.sort();
        let (run, text) = last.unwrap();
        println!(
            "seq 1 5000000 ({} bytes): min {:.0} ms, median {:.0} ms, max {:.0} ms over {} runs; model text {} bytes; RSS now {} kB, peak {} kB",
            run.stdout_bytes,
            times[0].as_secs_f64() * 1000.0,
            times[times.len() / 2].as_secs_f64() * 1000.0,
            times[times.len() - 1].as_secs_f64() * 1000.0,
            times.len(),
            text.len(),
            status_kb("VmRSS"),
            status_kb("VmHWM"),
        );

        let mut small = Vec::new();
        for _ in 0..50 {
            small.push(run_command(&cx, "echo hi").await.2);
        }
        small.sort();
        println!(
            "echo hi: median {:.1} ms, max {:.1} ms over {} runs",
            small[small.len() / 2].as_secs_f64() * 1000.0,
            small[small.len() - 1].as_secs_f64() * 1000.0,
            small.len()
        );
    });
}
