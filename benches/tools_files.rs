//! File tool figures, run by hand: `cargo bench --bench tools_files`.
//! - grep over a generated tree of 20,000 files, against the `rg` binary on the same tree;
//! - read_file of a window near the end of a 200 MB file;
//! - edit_file of a 20 MB file.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use cairn::process;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn::tool_output::ToolOutput;
use cairn::tools::edit_file::EditFile;
use cairn::tools::grep::Grep;
use cairn::tools::read_file::ReadFile;
use cairn::tools::{Tool, ToolCx, ToolEnv};
use serde_json::json;

const TREE_DIRS: usize = 200;
const FILES_PER_DIR: usize = 100;
const RUNS: usize = 5;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let cx = ToolCx::new(Arc::new(ToolEnv::new(
        root.clone(),
        &cairn::dirs::Dirs::from_env(),
        process::Settings::default(),
    )));

    println!("tools_files bench ({RUNS} runs each, median)");
    bench_grep(&runtime, &cx, &root);
    bench_read(&runtime, &cx, &root);
    bench_edit(&runtime, &cx, &root);
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn bench_grep(runtime: &tokio::runtime::Runtime, cx: &ToolCx, root: &Path) {
    let tree = root.join("tree");
    let started = Instant::now();
    let mut bytes = 0;
    for d in 0..TREE_DIRS {
        let sub = tree.join(format!("mod_{d:03}"));
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..FILES_PER_DIR {
            let mut text = String::new();
            for line in 0..60 {
                text.push_str(&format!(
                    "    let value_{line} = compute(input_{line}, {d}, {f}); // plain line\n"
                ));
            }
            if (d * FILES_PER_DIR + f).is_multiple_of(97) {
                text.push_str("    // NEEDLE_MARK: rare match\n");
            }
            bytes += text.len();
            std::fs::write(sub.join(format!("file_{f:03}.rs")), text).unwrap();
        }
    }
    let files = TREE_DIRS * FILES_PER_DIR;
    println!(
        "grep: generated {files} files, {:.1} MB, in {}",
        bytes as f64 / 1e6,
        ms(started.elapsed())
    );

    let args = json!({"pattern": "NEEDLE_MARK", "path": "tree", "output_mode": "content"});
    let mut found = 0;
    let times = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let out = runtime.block_on(Grep.run(args.clone(), cx)).unwrap();
            let elapsed = started.elapsed();
            if let ToolOutput::Matches(m) = out {
                found = m.total_matches;
            }
            elapsed
        })
        .collect();
    println!(
        "grep (cairn, content mode): {} for {found} matches",
        ms(median(times))
    );

    let rg_works = Command::new("rg")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !rg_works {
        println!("grep (rg): skipped, the rg binary is not installed");
        return;
    }
    let mut rg_found = 0;
    let times = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let out = Command::new("rg")
                .args(["-n", "NEEDLE_MARK"])
                .arg(&tree)
                .output()
                .unwrap();
            let elapsed = started.elapsed();
            rg_found = out
                .stdout
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .count();
            elapsed
        })
        .collect();
    println!(
        "grep (rg -n, same tree): {} for {rg_found} matches",
        ms(median(times))
    );
}

fn bench_read(runtime: &tokio::runtime::Runtime, cx: &ToolCx, root: &Path) {
    let path = root.join("huge.log");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut lines = 0usize;
    let mut written = 0usize;
    while written < 200 * 1024 * 1024 {
        let line = format!(
            "2026-11-29T12:00:00Z INFO request {lines} served in {} ms from cache shard {}\n",
            lines % 997,
            lines % 13
        );
        file.write_all(line.as_bytes()).unwrap();
        written += line.len();
        lines += 1;
    }
    file.flush().unwrap();
    drop(file);
    let offset = lines - 50;
    let args = json!({"path": "huge.log", "offset": offset, "limit": 40});
    // One warm-up so the page cache holds the file, as it would after it was written.
    runtime.block_on(ReadFile.run(args.clone(), cx)).unwrap();
    let times = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            runtime.block_on(ReadFile.run(args.clone(), cx)).unwrap();
            started.elapsed()
        })
        .collect();
    println!(
        "read_file: {} MB, {lines} lines, window at offset {offset}: {}",
        written / (1024 * 1024),
        ms(median(times))
    );
    let floor = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let mut file = std::fs::File::open(&path).unwrap();
            let mut buf = vec![0u8; 256 * 1024];
            while std::io::Read::read(&mut file, &mut buf).unwrap() > 0 {}
            started.elapsed()
        })
        .collect();
    println!(
        "  floor: plain sequential read of the same file: {}",
        ms(median(floor))
    );
    std::fs::remove_file(&path).unwrap();
}

fn bench_edit(runtime: &tokio::runtime::Runtime, cx: &ToolCx, root: &Path) {
    let path = root.join("big.rs");
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 20 * 1024 * 1024 {
        text.push_str(&format!("fn function_{i}() -> u64 {{ {i} * 2 }}\n"));
        if i == 250_000 {
            text.push_str("const TOGGLE: u32 = 0;\n");
        }
        i += 1;
    }
    std::fs::write(&path, &text).unwrap();
    runtime
        .block_on(ReadFile.run(json!({"path": "big.rs", "limit": 1}), cx))
        .unwrap();
    let times = (0..RUNS * 2)
        .map(|run| {
            let (old, new) = if run % 2 == 0 { ("= 0;", "= 1;") } else { ("= 1;", "= 0;") };
            let args = json!({"path": "big.rs", "old_string": format!("const TOGGLE: u32 {old}"), "new_string": format!("const TOGGLE: u32 {new}")});
            let started = Instant::now();
            runtime.block_on(EditFile.run(args, cx)).unwrap();
            started.elapsed()
        })
        .collect();
    println!(
        "edit_file: {:.1} MB file, one replacement: {}",
        text.len() as f64 / 1e6,
        ms(median(times))
    );
    let floor = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let bytes = std::fs::read(&path).unwrap();
            let temp = root.join("big.rs.tmp");
            std::fs::write(&temp, &bytes).unwrap();
            std::fs::rename(&temp, &path).unwrap();
            started.elapsed()
        })
        .collect();
    println!(
        "  floor: plain read + write + rename of the same file: {}",
        ms(median(floor))
    );
}
