//! read_file, write_file and edit_file driven as the model drives them: JSON arguments in,
//! canonical value and model text (or a correctable error) out, in a temp workspace.
#![allow(clippy::unwrap_used)]

use cairn::process;
use std::path::PathBuf;
use std::sync::Arc;

use cairn::tool_output::{FileChange, ToolOutput};
use cairn::tools::edit_file::EditFile;
use cairn::tools::read_file::ReadFile;
use cairn::tools::write_file::WriteFile;
use cairn::tools::{Tool, ToolCx, ToolEnv, ToolError};
use serde_json::{Value, json};
use tempfile::TempDir;

mod confinement;
mod edit;
mod encodings;
mod guarded;
mod line_endings;
mod race;

/// A small program most edit tests start from.
pub const CODE: &str =
    "fn main() {\n    let a = 1;\n    let b = 2;\n    println!(\"{}\", a + b);\n}\n";

pub struct Ws {
    _dir: TempDir,
    pub root: PathBuf,
    pub cx: ToolCx,
}

impl Ws {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let cx = ToolCx::new(Arc::new(ToolEnv::new(
            root.clone(),
            &cairn::dirs::Dirs::from_env(),
            process::Settings::default(),
        )));
        Self {
            _dir: dir,
            root,
            cx,
        }
    }
    /// A workspace at `root` (canonical, existing) with this file policy.
    pub fn at(root: PathBuf, files: cairn::fs::places::FilePolicy) -> Self {
        let cx = ToolCx::new(Arc::new(
            ToolEnv::new(
                root.clone(),
                &cairn::dirs::Dirs::from_env(),
                process::Settings::default(),
            )
            .with_files(files),
        ));
        Self {
            _dir: tempfile::tempdir().unwrap(),
            root,
            cx,
        }
    }
    pub fn file(self, rel: &str, content: impl AsRef<[u8]>) -> Self {
        self.put(rel, content);
        self
    }
    pub fn put(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }
    pub fn env(&self) -> Arc<ToolEnv> {
        self.cx.env.clone()
    }
}

/// Runs a tool the way the agent does once the gate passed the call: `access` first (it
/// validates), then `run` with that access as the one passed.
pub async fn call(ws: &Ws, tool: &dyn Tool, args: Value) -> Result<ToolOutput, ToolError> {
    let access = tool.access(&args, &ws.cx)?;
    tool.run(args, &ws.cx.clone().passing(access)).await
}

async fn read(ws: &Ws, args: Value) -> Result<String, String> {
    call(ws, &ReadFile, args)
        .await
        .map(|out| out.model_text())
        .map_err(|err| err.to_string())
}

async fn write(ws: &Ws, path: &str, content: &str) -> Result<FileChange, String> {
    match call(ws, &WriteFile, json!({"path": path, "content": content})).await {
        Ok(ToolOutput::FileChanged(change)) => Ok(change),
        Ok(other) => panic!("unexpected output {other:?}"),
        Err(err) => Err(err.to_string()),
    }
}

async fn edit(ws: &Ws, args: Value) -> Result<FileChange, String> {
    match call(ws, &EditFile, args).await {
        Ok(ToolOutput::FileChanged(change)) => Ok(change),
        Ok(other) => panic!("unexpected output {other:?}"),
        Err(err) => Err(err.to_string()),
    }
}

// ---- read_file ----

#[tokio::test]
async fn read_numbers_lines_and_says_where_to_continue() {
    let ws = Ws::new().file("a.txt", "one\ntwo\nthree\n");
    assert_eq!(
        read(&ws, json!({"path": "a.txt"})).await.unwrap(),
        "     1\tone\n     2\ttwo\n     3\tthree\n"
    );
    assert_eq!(
        read(&ws, json!({"path": "a.txt", "offset": 2, "limit": 1}))
            .await
            .unwrap(),
        "     2\ttwo\n[1 more line of 3; continue with offset 3]\n"
    );
}

#[tokio::test]
async fn read_a_window_deep_in_a_huge_file() {
    let text: String = (1..=200_000)
        .map(|i| format!("line number {i}\n"))
        .collect();
    let ws = Ws::new().file("big.log", &text);
    let out = read(
        &ws,
        json!({"path": "big.log", "offset": 199_990, "limit": 5}),
    )
    .await
    .unwrap();
    assert_eq!(
        out,
        "199990\tline number 199990\n199991\tline number 199991\n199992\tline number 199992\n\
         199993\tline number 199993\n199994\tline number 199994\n\
         [6 more lines of 200000; continue with offset 199995]\n"
    );
}

#[tokio::test]
async fn read_errors_say_what_to_do() {
    let ws = Ws::new()
        .file("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
        .file("src/main.rs", "fn main() {}\n")
        .file("short.txt", "1\n2\n");
    let err = read(&ws, json!({"path": "logo.png"})).await.unwrap_err();
    assert!(err.contains("binary file (16 bytes)"), "{err}");
    let err = read(&ws, json!({"path": "src"})).await.unwrap_err();
    assert!(err.contains("is a directory; use list_dir"), "{err}");
    let err = read(&ws, json!({"path": "src/mian.rs"})).await.unwrap_err();
    assert!(
        err.contains("no such file") && err.contains("main.rs"),
        "{err}"
    );
    let err = read(&ws, json!({"path": "short.txt", "offset": 10}))
        .await
        .unwrap_err();
    assert!(
        err.contains("offset 10 is past the end of short.txt, which has 2 lines"),
        "{err}"
    );
    let err = read(&ws, json!({"path": "short.txt", "limit": "lots"}))
        .await
        .unwrap_err();
    assert!(err.starts_with("invalid arguments"), "{err}");
}

#[tokio::test]
async fn read_decodes_a_latin1_line_after_a_long_ascii_head() {
    let mut bytes = "ok line\n".repeat(2000).into_bytes();
    bytes.extend_from_slice(b"caf\xe9 au lait\n");
    let ws = Ws::new().file("latin.txt", &bytes);
    let out = read(&ws, json!({"path": "latin.txt", "offset": 2001}))
        .await
        .unwrap();
    assert_eq!(
        out,
        "[encoding: windows-1252; writes and edits keep it]\n  2001\tcaf\u{e9} au lait\n"
    );
}

#[tokio::test]
async fn read_shows_a_stray_byte_in_a_utf8_file_lossily() {
    let mut bytes = "caf\u{e9} cr\u{e8}me \u{4e16}\u{754c}\n"
        .repeat(20)
        .into_bytes();
    bytes.extend_from_slice(b"bad \xff byte\n");
    let ws = Ws::new().file("utf8.txt", &bytes);
    let out = read(&ws, json!({"path": "utf8.txt", "offset": 21}))
        .await
        .unwrap();
    assert_eq!(
        out,
        "    21\tbad \u{fffd} byte [invalid UTF-8 shown as \u{fffd}]\n"
    );
}

#[tokio::test]
async fn read_cuts_very_long_lines_with_a_marker() {
    let ws = Ws::new().file("min.js", format!("{}\nend\n", "x".repeat(10_000)));
    let out = read(&ws, json!({"path": "min.js"})).await.unwrap();
    let first = out.lines().next().unwrap();
    assert!(
        first.ends_with("[line cut: 10000 bytes in all]"),
        "{}",
        &first[first.len() - 60..]
    );
    assert!(
        out.ends_with("     2\tend\n[1 long line was cut; use grep to search inside them]\n"),
        "{out}"
    );
}

#[tokio::test]
async fn pipes_and_devices_are_refused_without_blocking() {
    let ws = Ws::new();
    nix::unistd::mkfifo(&ws.root.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let err = read(&ws, json!({"path": "pipe"})).await.unwrap_err();
    assert!(err.contains("not a regular file"), "{err}");
    let err = read(&ws, json!({"path": "/dev/zero"})).await.unwrap_err();
    assert!(err.contains("not a regular file"), "{err}");
    let err = edit(
        &ws,
        json!({"path": "pipe", "old_string": "a", "new_string": "b"}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("not a regular file"), "{err}");
}

#[tokio::test]
async fn read_an_empty_file() {
    let ws = Ws::new().file("empty", "");
    assert_eq!(
        read(&ws, json!({"path": "empty"})).await.unwrap(),
        "[empty is empty]\n"
    );
}

// ---- write_file ----

#[tokio::test]
async fn write_creates_a_new_nested_file_with_a_final_newline() {
    let ws = Ws::new();
    let change = write(&ws, "deep/new/dir/file.rs", "fn x() {}")
        .await
        .unwrap();
    assert_eq!(ws.read("deep/new/dir/file.rs"), "fn x() {}\n");
    assert!(change.created);
    assert_eq!(
        change.diff,
        "--- /dev/null\n+++ b/deep/new/dir/file.rs\n@@ -0,0 +1 @@\n+fn x() {}\n"
    );
    assert_eq!(
        ToolOutput::FileChanged(change).model_text(),
        "Created deep/new/dir/file.rs (1 line)."
    );
}

#[tokio::test]
async fn overwriting_needs_a_read_of_the_current_content() {
    let ws = Ws::new().file("a.txt", "old\n");
    let err = write(&ws, "a.txt", "new").await.unwrap_err();
    assert_eq!(
        err,
        "a.txt: not read in this session; call read_file on it first"
    );
    assert_eq!(ws.read("a.txt"), "old\n");

    read(&ws, json!({"path": "a.txt"})).await.unwrap();
    ws.put("a.txt", "changed by the user\n");
    let err = write(&ws, "a.txt", "new").await.unwrap_err();
    assert_eq!(
        err,
        "a.txt: changed on disk since it was last read; read it again before changing it"
    );
    assert_eq!(ws.read("a.txt"), "changed by the user\n");

    read(&ws, json!({"path": "a.txt"})).await.unwrap();
    let change = write(&ws, "a.txt", "new").await.unwrap();
    assert_eq!(ws.read("a.txt"), "new\n");
    assert_eq!(
        (change.created, change.added, change.removed),
        (false, 1, 1)
    );
    // Our own write refreshed the stamp: a following edit needs no re-read.
    edit(
        &ws,
        json!({"path": "a.txt", "old_string": "new", "new_string": "newer"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.read("a.txt"), "newer\n");
}

#[tokio::test]
async fn write_keeps_permissions_and_crlf() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Ws::new().file("run.bat", "@echo off\r\n");
    std::fs::set_permissions(
        ws.root.join("run.bat"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    read(&ws, json!({"path": "run.bat"})).await.unwrap();
    write(&ws, "run.bat", "@echo on\nexit").await.unwrap();
    assert_eq!(ws.read("run.bat"), "@echo on\r\nexit\r\n");
    let mode = std::fs::metadata(ws.root.join("run.bat"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[tokio::test]
async fn writing_identical_content_changes_nothing() {
    let ws = Ws::new().file("same.txt", "same\n");
    let before = std::fs::metadata(ws.root.join("same.txt"))
        .unwrap()
        .modified()
        .unwrap();
    read(&ws, json!({"file_path": "same.txt", "offset": 0}))
        .await
        .unwrap();
    let change = write(&ws, "same.txt", "same").await.unwrap();
    assert_eq!(
        (change.added, change.removed, change.diff.as_str()),
        (0, 0, "")
    );
    assert_eq!(
        ToolOutput::FileChanged(change).model_text(),
        "same.txt unchanged: the new content is identical to the old."
    );
    let after = std::fs::metadata(ws.root.join("same.txt"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
}

#[tokio::test]
async fn writing_a_directory_is_refused() {
    let ws = Ws::new().file("dir/x", "");
    let err = write(&ws, "dir", "text").await.unwrap_err();
    assert!(err.contains("dir is a directory"), "{err}");
}
