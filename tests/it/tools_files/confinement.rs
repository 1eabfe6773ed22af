//! Workspace confinement: where writes really land (through `..`, absolute paths and
//! symlinks), as reported to the permission gate by `access`.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Ws, edit, read};
use cairn::tools::edit_file::EditFile;
use cairn::tools::write_file::WriteFile;
use cairn::tools::{Access, Tool};
fn write_access(ws: &Ws, tool: &dyn Tool, args: Value) -> (PathBuf, bool) {
    match tool.access(&args, &ws.cx).unwrap() {
        Access::Write { path, .. } => (path.as_path().to_path_buf(), path.inside_workspace()),
        other => panic!("expected a write access, got {other:?}"),
    }
}

#[tokio::test]
async fn writes_outside_the_workspace_are_reported_to_the_gate() {
    let ws = Ws::new().file("inside.txt", "x\n");
    let outside = tempfile::tempdir().unwrap();
    let outside_root = outside.path().canonicalize().unwrap();
    std::os::unix::fs::symlink(&outside_root, ws.root.join("linked")).unwrap();
    std::fs::write(outside_root.join("target.txt"), "t\n").unwrap();
    std::os::unix::fs::symlink(outside_root.join("target.txt"), ws.root.join("file-link")).unwrap();

    let abs = outside_root.join("abs.txt");
    let cases: Vec<(&dyn Tool, Value, PathBuf)> = vec![
        (
            &WriteFile,
            json!({"path": "../escape.txt", "content": "x"}),
            ws.root.parent().unwrap().join("escape.txt"),
        ),
        (
            &WriteFile,
            json!({"path": abs.to_str().unwrap(), "content": "x"}),
            abs.clone(),
        ),
        (
            &WriteFile,
            json!({"path": "linked/new/f.txt", "content": "x"}),
            outside_root.join("new/f.txt"),
        ),
        (
            &EditFile,
            json!({"path": "file-link", "old_string": "t", "new_string": "u"}),
            outside_root.join("target.txt"),
        ),
    ];
    for (tool, args, expected) in cases {
        assert_eq!(
            write_access(&ws, tool, args.clone()),
            (expected, false),
            "{args}"
        );
    }
    let (path, inside) = write_access(
        &ws,
        &WriteFile,
        json!({"path": "new/dir/../f.txt", "content": "x"}),
    );
    assert_eq!((path, inside), (ws.root.join("new/f.txt"), true));
    let (_, inside) = write_access(
        &ws,
        &EditFile,
        json!({"path": "./inside.txt", "old_string": "x", "new_string": "y"}),
    );
    assert!(inside);
}

#[tokio::test]
async fn reads_through_a_symlink_count_for_the_real_file() {
    let ws = Ws::new().file("real.txt", "content\n");
    std::os::unix::fs::symlink(ws.root.join("real.txt"), ws.root.join("alias.txt")).unwrap();
    read(&ws, json!({"path": "alias.txt"})).await.unwrap();
    edit(
        &ws,
        json!({"path": "real.txt", "old_string": "content", "new_string": "changed"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.read("real.txt"), "changed\n");
    assert!(
        std::fs::symlink_metadata(ws.root.join("alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
