//! Walk figures, run by hand: `cargo bench --bench walk` (or `--profile dev` for a quick look).
//! list_dir (depth 20), glob `**/*.rs` and grep over a generated tree of 20,000 files in 400
//! directories (two levels, a `.gitignore` at the top and in every tenth directory), each
//! repeated and reported as a median. For the same run's baseline, the same three walks are
//! also done the path-based way (`ignore::WalkBuilder` with cairn's settings, no confinement).
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use cairn::process;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use cairn::tool_output::ToolOutput;
use cairn::tools::glob::Glob;
use cairn::tools::grep::Grep;
use cairn::tools::list_dir::ListDir;
use cairn::tools::{Tool, ToolCx, ToolEnv};
use grep_regex::RegexMatcher;
use grep_searcher::Searcher;
use grep_searcher::sinks::UTF8;
use ignore::{WalkBuilder, WalkState};
use serde_json::{Value, json};

const TOP_DIRS: usize = 20;
const SUB_DIRS: usize = 20;
const FILES_PER_DIR: usize = 50;
const RUNS: usize = 9;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let files = generate(&root);
    let cx = ToolCx::new(Arc::new(ToolEnv::new(
        root.clone(),
        &cairn::dirs::Dirs::from_env(),
        process::Settings::default(),
    )));
    println!("walk bench: {files} files, {RUNS} runs each, median");

    let tool_runs: [(&str, &dyn Tool, Value); 3] = [
        (
            "list_dir depth 20",
            &ListDir,
            json!({"path": "tree", "depth": 20}),
        ),
        ("glob **/*.rs", &Glob, json!({"pattern": "tree/**/*.rs"})),
        (
            "grep NEEDLE_MARK",
            &Grep,
            json!({"pattern": "NEEDLE_MARK", "path": "tree"}),
        ),
    ];
    for (name, tool, args) in tool_runs {
        let mut size = 0;
        let time = median(RUNS, || {
            let out = runtime.block_on(tool.run(args.clone(), &cx)).unwrap();
            size = match out {
                ToolOutput::Listing(l) => l.entries.len(),
                ToolOutput::Matches(m) => m.total_matches as usize,
                _ => 0,
            };
        });
        println!("{name:<22} cairn tool:   {} ({size} results)", ms(time));
    }

    let tree = root.join("tree");
    let walked = median(RUNS, || {
        let count = AtomicU64::new(0);
        builder(&tree).max_depth(Some(20)).build_parallel().run(|| {
            let count = &count;
            Box::new(move |_| {
                count.fetch_add(1, Ordering::Relaxed);
                WalkState::Continue
            })
        });
    });
    println!("{:<22} path walk:    {}", "list/glob (ignore)", ms(walked));
    let matcher = RegexMatcher::new("NEEDLE_MARK").unwrap();
    let grepped = median(RUNS, || {
        let found = Mutex::new(0u64);
        builder(&tree).build_parallel().run(|| {
            let (matcher, found) = (&matcher, &found);
            let mut searcher = Searcher::new();
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if entry.file_type().is_some_and(|t| t.is_file()) {
                    let mut hits = 0;
                    let _ = searcher.search_path(
                        matcher,
                        entry.path(),
                        UTF8(|_, _| {
                            hits += 1;
                            Ok(true)
                        }),
                    );
                    *found.lock().unwrap() += hits;
                }
                WalkState::Continue
            })
        });
    });
    println!(
        "{:<22} path walk:    {}",
        "grep (ignore+searcher)",
        ms(grepped)
    );
}

/// The old, path-based walker settings of list_dir, glob and grep.
fn builder(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git");
    builder
}

/// 20 × 20 directories of 50 small Rust files; every tenth directory ignores its `*.tmp`.
fn generate(root: &Path) -> usize {
    let tree = root.join("tree");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join(".gitignore"), "target/\n*.log\n").unwrap();
    let mut files = 0;
    for a in 0..TOP_DIRS {
        for b in 0..SUB_DIRS {
            let sub = tree.join(format!("mod_{a:02}/part_{b:02}"));
            std::fs::create_dir_all(&sub).unwrap();
            if (a * SUB_DIRS + b).is_multiple_of(10) {
                std::fs::write(sub.join(".gitignore"), "*.tmp\n").unwrap();
            }
            for f in 0..FILES_PER_DIR {
                let mut text = String::new();
                for line in 0..30 {
                    text.push_str(&format!("    let value_{line} = compute({a}, {b}, {f});\n"));
                }
                if files % 97 == 0 {
                    text.push_str("    // NEEDLE_MARK: rare match\n");
                }
                std::fs::write(sub.join(format!("file_{f:03}.rs")), text).unwrap();
                files += 1;
            }
        }
    }
    files
}

fn median(runs: usize, mut once: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            once();
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
