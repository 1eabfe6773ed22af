//! The per-real-path write queue under load: many parallel edits of one file through
//! different spellings of its path all land, each on its predecessor's result, while a
//! change by someone else is still caught.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use cairn::bus::CallId;
use cairn::tools::edit_file::EditFile;
use cairn::tools::read_file::ReadFile;
use cairn::tools::write_file::WriteFile;
use cairn::tools::{Tool, ToolCx, ToolOutput};
use serde_json::json;

use super::tools_files::{Ws, call};

const EDITS: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_parallel_edits_through_different_spellings_all_land() {
    let original: String = (0..EDITS)
        .map(|i| format!("marker-{i:02} = old\n"))
        .collect();
    let ws = Ws::new().file("x", &original);
    std::fs::create_dir(ws.root.join("sub")).unwrap();
    std::os::unix::fs::symlink(ws.root.join("x"), ws.root.join("link-to-x")).unwrap();
    std::os::unix::fs::symlink(&ws.root, ws.root.join("sub/ws")).unwrap();
    call(&ws, &ReadFile, json!({"path": "x"})).await.unwrap();

    let absolute = ws.root.join("x").to_string_lossy().into_owned();
    let spellings = [
        "x",
        "./x",
        absolute.as_str(),
        "link-to-x",
        "sub/../x",
        "sub/ws/x",
    ];
    let env = ws.env();
    let mut tasks = Vec::new();
    for i in 0..EDITS {
        let cx = ToolCx::new(Arc::clone(&env), CallId::new(format!("edit-{i}")));
        let args = json!({
            "path": spellings[i % spellings.len()],
            "old_string": format!("marker-{i:02} = old"),
            "new_string": format!("marker-{i:02} = new"),
        });
        tasks.push(tokio::spawn(async move {
            EditFile.run(args, &cx).await.map_err(|e| e.to_string())
        }));
    }
    for task in tasks {
        let out = task.await.unwrap().unwrap();
        assert!(matches!(out, ToolOutput::FileChanged(_)));
    }
    let expected: String = (0..EDITS)
        .map(|i| format!("marker-{i:02} = new\n"))
        .collect();
    assert_eq!(ws.read("x"), expected);
    assert!(
        std::fs::symlink_metadata(ws.root.join("link-to-x"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        env.writes.busy_paths(),
        0,
        "the queue forgets finished paths"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_writes_to_different_files_all_land() {
    let ws = Ws::new();
    let env = ws.env();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let cx = ToolCx::new(Arc::clone(&env), CallId::new(format!("w-{i}")));
        let args = json!({"path": format!("out/{i}.txt"), "content": format!("file {i}")});
        tasks.push(tokio::spawn(async move {
            WriteFile.run(args, &cx).await.map_err(|e| e.to_string())
        }));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    for i in 0..20 {
        assert_eq!(ws.read(&format!("out/{i}.txt")), format!("file {i}\n"));
    }
}

#[tokio::test]
async fn a_change_by_someone_else_between_queued_edits_is_caught() {
    let ws = Ws::new().file("f.txt", "a\nb\n");
    call(&ws, &ReadFile, json!({"path": "f.txt"}))
        .await
        .unwrap();
    call(
        &ws,
        &EditFile,
        json!({"path": "f.txt", "old_string": "a", "new_string": "A"}),
    )
    .await
    .unwrap();
    // Another program rewrites the file between the model's edits.
    ws.put("f.txt", "A\nb\nadded elsewhere\n");
    let err = call(
        &ws,
        &EditFile,
        json!({"path": "f.txt", "old_string": "b", "new_string": "B"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("changed on disk since it was last read"),
        "{err}"
    );
    assert_eq!(ws.read("f.txt"), "A\nb\nadded elsewhere\n");
}

#[tokio::test]
async fn a_cancelled_call_waiting_in_the_queue_changes_nothing() {
    let ws = Ws::new().file("f.txt", "a\n");
    call(&ws, &ReadFile, json!({"path": "f.txt"}))
        .await
        .unwrap();
    let real = cairn::tools::paths::resolve(&ws.root, "f.txt").unwrap();
    let turn = ws.cx.env.writes.lock(&real).await;
    let cx = ToolCx::new(ws.env(), CallId::new("waiting"));
    let cancel = cx.cancel.clone();
    let args = json!({"path": "f.txt", "old_string": "a", "new_string": "b"});
    let waiting =
        tokio::spawn(async move { EditFile.run(args, &cx).await.map_err(|e| e.to_string()) });
    cancel.cancel();
    let err = waiting.await.unwrap().unwrap_err();
    drop(turn);
    assert!(
        err.contains("[cancelled]") && err.contains("nothing was written"),
        "{err}"
    );
    assert_eq!(ws.read("f.txt"), "a\n");
}

#[tokio::test]
async fn a_read_waits_for_a_running_write_of_the_same_file() {
    use futures_util::FutureExt;
    let ws = Ws::new().file("f.txt", "before\n");
    let real = cairn::tools::paths::resolve(&ws.root, "./f.txt").unwrap();
    let turn = ws.cx.env.writes.lock(&real).await;
    let mut reading = Box::pin(ReadFile.run(json!({"path": "f.txt"}), &ws.cx));
    assert!(
        (&mut reading).now_or_never().is_none(),
        "the read must wait for the write"
    );
    // The write lands while the read waits; the read then sees and stamps the new content.
    ws.put("f.txt", "after\n");
    drop(turn);
    let out = reading.await.unwrap();
    assert_eq!(out.model_text(), "     1\tafter\n");
    call(
        &ws,
        &EditFile,
        json!({"path": "f.txt", "old_string": "after", "new_string": "done"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.read("f.txt"), "done\n");
}
