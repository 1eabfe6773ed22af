//! Checkpoint figures, run by hand: `cargo bench --bench checkpoint`.
//! - a 20,000-file workspace (200 dirs × 100 files of ~1 KB, a git repository with all of it
//!   committed): the first checkpoint, then the median checkpoint after a command that
//!   changed nothing and after editing one file, as a session takes them (file notifications)
//!   and as the scan fallback does (network file systems, an overflowed queue, `cairn undo`),
//!   against `git status` on the same tree (what every git user already waits for); and an
//!   edit's checkpoint written as the agent writes it (deferred, then one pack) against taken
//!   and written at once (one pack too, before it returns);
//! - a session editing 10 files, 100 checkpoints: the store's size on disk against the size
//!   of the files and of all the versions written (with `maintain` after each checkpoint, as
//!   the agent runs it after each turn, and a turn takes at least two).
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cairn::checkpoint::{CheckpointStore, StoreOptions, phases};

const TREE_DIRS: usize = 200;
const FILES_PER_DIR: usize = 100;
const RUNS: usize = 21;

fn main() {
    println!("checkpoint bench (median of {RUNS} runs where repeated)");
    bench_large_workspace();
    bench_store_size();
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Wall and CPU time of `f`.
fn timed(f: impl FnOnce()) -> (Duration, Duration) {
    let (start, cpu) = (Instant::now(), phases::process_cpu());
    f();
    (start.elapsed(), phases::process_cpu() - cpu)
}

/// Median wall and median CPU time, printed.
fn medians(runs: Vec<(Duration, Duration)>) -> String {
    let (wall, cpu): (Vec<_>, Vec<_>) = runs.into_iter().unzip();
    format!("{:>8.1?} wall, {:>8.1?} CPU", median(wall), median(cpu))
}

fn source_text(dir: usize, file: usize, version: usize) -> String {
    let mut text = String::new();
    for line in 0..30 {
        text.push_str(&format!(
            "fn item_{dir}_{file}_{line}() -> u64 {{ {} }} // v{version}\n",
            dir * 7919 + file * 104_729 + line
        ));
    }
    text
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["-c", "user.name=b", "-c", "user.email=b@b"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn bench_large_workspace() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = ws.path();
    let mut bytes = 0;
    for d in 0..TREE_DIRS {
        let dir = root.join(format!("src/m{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES_PER_DIR {
            let text = source_text(d, f, 0);
            bytes += text.len();
            std::fs::write(dir.join(format!("f{f:03}.rs")), text).unwrap();
        }
    }
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "tree"]);
    // A real workspace's files are older than its first checkpoint; files written in the
    // same second as git's index are re-hashed (git's racy-clean rule), which would measure
    // the tree's creation instead.
    std::thread::sleep(Duration::from_millis(1100));
    println!(
        "workspace: {} files, {:.1} MB",
        TREE_DIRS * FILES_PER_DIR,
        bytes as f64 / 1e6
    );

    let status: Vec<_> = (0..RUNS)
        .map(|_| timed(|| git(root, &["status", "--porcelain"])))
        .collect();

    let session = StoreOptions {
        session_start: true,
        notifications: true,
    };
    let store = CheckpointStore::open_with(data.path(), root, session).unwrap();
    assert!(store.watching(), "file notifications unavailable here");
    cairn::checkpoint::phases::reset();
    let first = timed(|| {
        store.snapshot().unwrap();
    });
    let first_phases = cairn::checkpoint::phases::totals();
    // The next one re-checks entries the first recorded in the same second as their files.
    std::thread::sleep(Duration::from_millis(1100));
    store.snapshot().unwrap();
    let (unchanged, edited) = steps(&store, root, 0);
    println!("  git status --porcelain (baseline): {}", medians(status));
    println!(
        "  first checkpoint:                  {} (target < 2 s)",
        medians(vec![first])
    );
    for t in first_phases {
        println!(
            "    {:<40} {:>9.1?} wall {:>9.1?} CPU",
            t.phase.name(),
            t.wall,
            t.cpu
        );
    }
    println!("  with file notifications (a session):");
    println!(
        "    after a command that changed nothing: {}",
        medians(unchanged)
    );
    println!(
        "    after a 1-file edit:                  {}",
        medians(edited)
    );
    let (packed, loose) = edit_writes(&store, root);
    println!("  an edit's checkpoint with its write (interleaved, a new directory each):");
    println!(
        "    deferred, then written as one pack (the agent's): {}",
        medians(packed)
    );
    println!(
        "    taken and written at once:                        {}",
        medians(loose)
    );
    // As `cairn undo` and a workspace without notifications take them: by stat of every file.
    let scanning = CheckpointStore::open(data.path(), root).unwrap();
    scanning.snapshot().unwrap();
    let (unchanged, edited) = steps(&scanning, root, RUNS);
    println!("  scan fallback (no notifications):");
    println!(
        "    after a command that changed nothing: {}",
        medians(unchanged)
    );
    println!(
        "    after a 1-file edit:                  {} (target < 50 ms)",
        medians(edited)
    );
    println!("  store size: {:.1} MB", store.disk_usage() as f64 / 1e6);
}

/// RUNS checkpoints with nothing changed, then RUNS each after a one-file edit.
type Runs = Vec<(Duration, Duration)>;
fn steps(store: &CheckpointStore, root: &Path, version: usize) -> (Runs, Runs) {
    let unchanged: Vec<_> = (0..RUNS)
        .map(|_| {
            timed(|| {
                store.snapshot().unwrap();
            })
        })
        .collect();
    let edited: Vec<_> = (0..RUNS)
        .map(|run| {
            let d = run * 7 % TREE_DIRS;
            let path = root.join(format!("src/m{d:03}/f001.rs"));
            std::fs::write(&path, source_text(d, 1, version + run + 1)).unwrap();
            timed(|| {
                store.snapshot().unwrap();
            })
        })
        .collect();
    (unchanged, edited)
}

fn bench_store_size() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let root = ws.path();
    let mut files_size = 0;
    for f in 0..10 {
        let text = big_source(f, 0);
        files_size += text.len();
        std::fs::write(root.join(format!("file{f}.rs")), text).unwrap();
    }
    let store = CheckpointStore::open(data.path(), root).unwrap();
    store.snapshot().unwrap();
    let base = store.disk_usage();
    let mut written = 0;
    for step in 1..=100 {
        let f = step % 10;
        let text = big_source(f, step);
        written += text.len();
        std::fs::write(root.join(format!("file{f}.rs")), text).unwrap();
        store.snapshot().unwrap();
        store.maintain().unwrap();
    }
    let size = store.disk_usage();
    println!(
        "session of 100 checkpoints editing 10 files ({:.0} KB in all; {:.0} KB of versions written):",
        files_size as f64 / 1e3,
        written as f64 / 1e3
    );
    println!(
        "  store: {:.0} KB ({:.0} KB of it the first checkpoint) = {:.2}x the files, {:.2}x the versions written (target < 2x)",
        size as f64 / 1e3,
        base as f64 / 1e3,
        size as f64 / files_size as f64,
        size as f64 / written as f64
    );
}

/// A 200-line file whose one line `version` changes, like an edit does.
fn big_source(file: usize, version: usize) -> String {
    let mut text = String::new();
    for line in 0..200 {
        if line == version % 200 {
            text.push_str(&format!(
                "    let edited_{version} = {line}; // step {version}\n"
            ));
        } else {
            text.push_str(&format!(
                "    let value_{file}_{line} = compute({line}, \"{}\");\n",
                file * 31 + line
            ));
        }
    }
    text
}

/// RUNS one-file edits checkpointed as the agent checkpoints an edit (deferred, then written
/// as one pack), interleaved with RUNS taken and written at once: the same look, hash, trees
/// and commit, written two ways. Each edit is in a directory of its own.
fn edit_writes(store: &CheckpointStore, root: &Path) -> (Runs, Runs) {
    let (mut packed, mut loose) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        for deferred in [true, false] {
            let d = (run * 2 + usize::from(deferred)) * 11 % TREE_DIRS;
            let path = root.join(format!("src/m{d:03}/f002.rs"));
            std::fs::write(&path, source_text(d, 2, run + 100)).unwrap();
            let time = timed(|| {
                if deferred {
                    store.snapshot_deferred(&[&path]).unwrap();
                    store.flush().unwrap();
                } else {
                    store.snapshot_paths(&[&path]).unwrap();
                }
            });
            if deferred {
                packed.push(time);
            } else {
                loose.push(time);
            }
        }
    }
    (packed, loose)
}
