//! A directory swapped for a symlink to outside, in a tight loop, while calls run: the gate's
//! check and the tool's use may see different trees, and nothing may land (or be read)
//! outside because of it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use nix::fcntl::{RenameFlags, renameat2};
use serde_json::{Value, json};

use super::Ws;
use cairn::tool_output::ToolOutput;
use cairn::tools::edit_file::EditFile;
use cairn::tools::read_file::ReadFile;
use cairn::tools::write_file::WriteFile;
use cairn::tools::{Access, Tool};

/// Swaps `ws/d` (a real directory) and `ws/swap` (a symlink to outside) until stopped.
struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Swapper {
    fn start(ws: &Ws) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicUsize::new(0));
        let dir = std::fs::File::open(&ws.root).unwrap();
        let (flag, count) = (Arc::clone(&stop), Arc::clone(&swaps));
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                renameat2(&dir, "d", &dir, "swap", RenameFlags::RENAME_EXCHANGE).unwrap();
                count.fetch_add(1, Ordering::Relaxed);
            }
        });
        Self {
            stop,
            swaps,
            thread: Some(thread),
        }
    }

    fn swaps(&self) -> usize {
        self.swaps.load(Ordering::Relaxed)
    }

    /// Whether the run has seen enough: the minimum of calls, one that got through, and the
    /// swapper really racing them (a loaded machine may need more calls for both).
    fn enough(&self, calls: usize, through: usize, deadline: std::time::Instant) -> bool {
        calls >= 400
            && ((through > 0 && self.swaps() > 100) || std::time::Instant::now() > deadline)
    }

    fn finish(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
        self.swaps.load(Ordering::Relaxed)
    }
}

fn setup() -> (Ws, tempfile::TempDir, std::path::PathBuf) {
    let ws = Ws::new().file("d/secret.txt", "inside\n");
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().canonicalize().unwrap();
    std::fs::write(out.join("secret.txt"), "OUTSIDE\n").unwrap();
    std::os::unix::fs::symlink(&out, ws.root.join("swap")).unwrap();
    (ws, outside, out)
}

/// Runs a call as the agent does in `auto-edit`: the gate runs writes and reads inside the
/// workspace unasked and holds the rest (here: skipped, as nobody approves). `None` when held.
async fn unasked(ws: &Ws, tool: &dyn Tool, args: Value) -> Option<Result<ToolOutput, String>> {
    let access = tool.access(&args, &ws.cx).ok()?;
    let runs = match &access {
        Access::Read => true,
        Access::Write { path, .. } => path.inside_workspace(),
        _ => false,
    };
    if !runs {
        return None;
    }
    let cx = ws.cx.clone().passing(access);
    Some(tool.run(args, &cx).await.map_err(|e| e.to_string()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_swap_during_400_writes_and_edits_never_lands_outside() {
    let (ws, _outside, out) = setup();
    let swapper = Swapper::start(&ws);
    let mut landed = 0;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut i = 0;
    while !swapper.enough(i, landed, deadline) {
        i += 1;
        let path = format!("d/w{i}.txt");
        if i % 2 == 0 {
            let args = json!({"path": path, "content": "x"});
            if let Some(Ok(_)) = unasked(&ws, &WriteFile, args).await {
                landed += 1;
            }
        } else {
            let _ = unasked(&ws, &ReadFile, json!({"path": "d/secret.txt"})).await;
            let args = json!({"path": "d/secret.txt", "old_string": "\n", "new_string": "\n.\n"});
            if let Some(Ok(_)) = unasked(&ws, &EditFile, args).await {
                landed += 1;
            }
        }
    }
    let swaps = swapper.finish();
    let outside: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "secret.txt")
        .collect();
    assert_eq!(outside, Vec::<String>::new(), "files written outside");
    assert_eq!(
        std::fs::read_to_string(out.join("secret.txt")).unwrap(),
        "OUTSIDE\n"
    );
    assert!(swaps > 100, "the swapper barely ran ({swaps} swaps)");
    assert!(landed > 0, "no call got through at all");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_swap_during_400_reads_never_returns_outside_content() {
    let (ws, _outside, _out) = setup();
    let swapper = Swapper::start(&ws);
    let mut read_inside = 0;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut calls = 0;
    while !swapper.enough(calls, read_inside, deadline) {
        calls += 1;
        if let Some(Ok(out)) = unasked(&ws, &ReadFile, json!({"path": "d/secret.txt"})).await {
            let text = out.model_text();
            assert!(!text.contains("OUTSIDE"), "read outside content: {text}");
            read_inside += 1;
        }
    }
    let swaps = swapper.finish();
    assert!(swaps > 100, "the swapper barely ran ({swaps} swaps)");
    assert!(read_inside > 0, "no read got through at all");
}
