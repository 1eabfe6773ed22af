//! list_dir, glob and grep as an attacker tries them: a workspace directory swapped for a
//! symlink to outside in a tight loop while the walks run, links to outside from the start,
//! `..` in paths and patterns, FIFOs, devices and unreadable directories in the tree. Nothing
//! outside — not a name, not a byte — may come back from a call the gate ran unasked.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use nix::fcntl::{RenameFlags, renameat2};
use serde_json::{Value, json};

use super::super::tools_files::Ws;
use cairn::tools::glob::Glob;
use cairn::tools::grep::Grep;
use cairn::tools::list_dir::ListDir;
use cairn::tools::{Access, Tool};

const CANARY_NAME: &str = "CANARY-NAME-31337";
const CANARY_CONTENT: &str = "CANARY-CONTENT-27182";

/// A workspace with `d/` (a real directory) and `swap` (a symlink to an outside directory
/// holding a canary file, and a canary directory below it).
fn setup() -> (Ws, tempfile::TempDir) {
    let ws = Ws::new()
        .file("d/inside.txt", "inside words\n")
        .file("d/sub/more.txt", "inside words\n")
        .file("top.txt", "inside words\n");
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().canonicalize().unwrap();
    std::fs::write(out.join(CANARY_NAME), format!("{CANARY_CONTENT}\n")).unwrap();
    std::fs::create_dir_all(out.join(format!("{CANARY_NAME}-dir"))).unwrap();
    std::fs::write(
        out.join(format!("{CANARY_NAME}-dir/f.txt")),
        format!("{CANARY_CONTENT} deeper\n"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&out, ws.root.join("swap")).unwrap();
    (ws, outside)
}

/// Runs a call as `auto-edit` does: reads inside the workspace unasked, anything else held
/// (`None`: nobody approves here). Errors come back as text: they must not leak either.
async fn unasked(ws: &Ws, tool: &dyn Tool, args: Value) -> Option<String> {
    let access = tool.access(&args, &ws.cx).ok()?;
    if access != Access::Read {
        return None;
    }
    let cx = ws.cx.clone().passing(access);
    Some(match tool.run(args, &cx).await {
        Ok(out) => out.model_text(),
        Err(err) => err.to_string(),
    })
}

fn assert_no_canary(text: &str, call: &Value) {
    assert!(
        !text.contains(CANARY_NAME) && !text.contains(CANARY_CONTENT),
        "{call} brought outside in:\n{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_link_out_never_leaks_names_or_content() {
    let (ws, _outside) = setup();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let racer = {
        let dir = std::fs::File::open(&ws.root).unwrap();
        let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat2(&dir, "d", &dir, "swap", RenameFlags::RENAME_EXCHANGE).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let calls: [(&dyn Tool, Value); 6] = [
        (&ListDir, json!({"path": ".", "depth": 6})),
        (&ListDir, json!({"path": "d", "depth": 6})),
        (&Glob, json!({"pattern": "**/*"})),
        (&Glob, json!({"pattern": "d/**/*"})),
        (&Grep, json!({"pattern": "CANARY|inside"})),
        (&Grep, json!({"pattern": "CANARY|inside", "path": "d"})),
    ];
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut rounds, mut saw_inside) = (0, 0);
    while (rounds < 300 || swaps.load(Ordering::Relaxed) < 100 || saw_inside == 0)
        && Instant::now() < deadline
    {
        rounds += 1;
        for (tool, args) in &calls {
            if let Some(text) = unasked(&ws, *tool, args.clone()).await {
                assert_no_canary(&text, args);
                saw_inside += usize::from(text.contains("inside.txt:1:inside words"));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    racer.join().unwrap();
    let swaps = swaps.load(Ordering::Relaxed);
    assert!(rounds >= 300, "only {rounds} rounds before the deadline");
    assert!(swaps >= 100, "the swapper barely ran ({swaps} swaps)");
    assert!(saw_inside > 0, "grep never found the inside file");
}

#[tokio::test]
async fn a_link_to_outside_is_listed_but_never_entered_or_read() {
    let (ws, _outside) = setup();
    let out = std::fs::read_link(ws.root.join("swap")).unwrap();
    std::os::unix::fs::symlink(out.join(CANARY_NAME), ws.root.join("canary-link")).unwrap();
    let calls = [
        (&ListDir as &dyn Tool, json!({"depth": 5})),
        (&Glob, json!({"pattern": "**/*"})),
        (&Glob, json!({"pattern": "swap/*"})),
        (&Grep, json!({"pattern": "CANARY"})),
        (&Grep, json!({"pattern": "CANARY", "glob": "canary-link"})),
    ];
    let mut texts = Vec::new();
    for (tool, args) in calls {
        match unasked(&ws, tool, args.clone()).await {
            Some(text) => {
                assert_no_canary(&text, &args);
                texts.push(text);
            }
            // `swap/*` names the outside directory: the gate asks for it.
            None => assert_eq!(args, json!({"pattern": "swap/*"})),
        }
    }
    // Listed as entries (not directories), so the model knows they are there.
    assert!(texts[0].lines().any(|l| l == "swap"), "{}", texts[0]);
    assert!(texts[0].lines().any(|l| l == "canary-link"), "{}", texts[0]);
    assert!(texts[1].contains("swap\n") && texts[1].contains("canary-link"));
}

#[tokio::test]
async fn dot_dot_in_paths_and_patterns_reaches_nothing_unasked() {
    let (ws, _outside) = setup();
    let held = [
        (&ListDir as &dyn Tool, json!({"path": "d/../.."})),
        (&ListDir, json!({"path": "swap/.."})),
        (&Glob, json!({"pattern": "../**/*"})),
        (&Glob, json!({"pattern": "d/../../*"})),
        (&Glob, json!({"pattern": "*", "path": ".."})),
        (&Grep, json!({"pattern": "CANARY", "path": "../"})),
    ];
    for (tool, args) in held {
        assert_eq!(unasked(&ws, tool, args.clone()).await, None, "{args}");
    }
    // `..` after a wildcard is part of the glob: matched against names walked inside, it
    // matches nothing and reaches nothing.
    let ran = [
        (&Glob as &dyn Tool, json!({"pattern": "*/../../*"})),
        (&Glob, json!({"pattern": "**/../**"})),
        (&Grep, json!({"pattern": "CANARY|inside", "glob": "../*"})),
        (
            &Grep,
            json!({"pattern": "CANARY|inside", "glob": "*/../../**"}),
        ),
    ];
    for (tool, args) in ran {
        let text = unasked(&ws, tool, args.clone()).await.unwrap();
        assert_no_canary(&text, &args);
    }
}

#[tokio::test]
async fn fifos_and_devices_in_the_tree_do_not_hang_grep() {
    let ws = Ws::new()
        .file("a.txt", "needle\n")
        .file("sub/b.txt", "needle\n");
    let mode = nix::sys::stat::Mode::S_IRWXU;
    nix::unistd::mkfifo(&ws.root.join("pipe"), mode).unwrap();
    // A FIFO where a rule file is read: opening it for reading would wait for a writer.
    nix::unistd::mkfifo(&ws.root.join("sub/.gitignore"), mode).unwrap();
    // A device node needs CAP_MKNOD; where it is missing the FIFOs still make the point.
    let _ = nix::sys::stat::mknod(
        &ws.root.join("zero"),
        nix::sys::stat::SFlag::S_IFCHR,
        mode,
        nix::sys::stat::makedev(1, 5),
    );
    std::os::unix::fs::symlink("/dev/zero", ws.root.join("zero-link")).unwrap();
    for args in [
        json!({"pattern": "needle"}),
        json!({"pattern": "needle", "glob": "*"}),
        json!({"pattern": "needle", "output_mode": "count"}),
    ] {
        let run = unasked(&ws, &Grep, args.clone());
        let text = tokio::time::timeout(Duration::from_secs(20), run)
            .await
            .unwrap_or_else(|_| panic!("{args} hung"))
            .unwrap();
        assert!(
            text.contains("a.txt") && text.contains("sub/b.txt"),
            "{text}"
        );
    }
    let err = unasked(&ws, &Grep, json!({"pattern": "x", "path": "pipe"}))
        .await
        .unwrap();
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn unreadable_directories_and_files_are_reported_not_fatal() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Ws::new()
        .file("locked/secret.txt", "needle\n")
        .file("open/a.txt", "needle\n")
        .file("open/private.txt", "needle\n");
    let mode = |rel: &str, mode: u32| {
        let perms = std::fs::Permissions::from_mode(mode);
        std::fs::set_permissions(ws.root.join(rel), perms).unwrap();
    };
    mode("locked", 0o000);
    mode("open/private.txt", 0o000);
    let texts = cairn::testing::privileges::without_dac_override(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut texts = Vec::new();
            for (tool, args) in [
                (&ListDir as &dyn Tool, json!({"depth": 3})),
                (&Glob, json!({"pattern": "**/*.txt"})),
                (&Grep, json!({"pattern": "needle"})),
            ] {
                texts.push(unasked(&ws, tool, args).await.unwrap());
            }
            texts
        })
    });
    mode("locked", 0o755);
    mode("open/private.txt", 0o644);
    let Some(texts) = texts else {
        return; // No way to drop the privilege here: nothing is ever denied.
    };
    let denied = "[not read: locked/ (permission denied)]";
    for text in &texts {
        assert!(text.contains(denied), "{text}");
        assert!(!text.contains("secret.txt"), "{text}");
    }
    assert!(texts[0].contains("open/a.txt\n"), "{}", texts[0]);
    assert!(texts[1].contains("open/a.txt"), "{}", texts[1]);
    assert!(texts[2].contains("open/a.txt:1:needle"), "{}", texts[2]);
    assert!(
        texts[2].contains("[not read: open/private.txt (permission denied)]"),
        "{}",
        texts[2]
    );
}
