//! `cairn acp` with an editor that offers more than the protocol's minimum: `fs/*` (the model
//! reads the editor's unsaved buffer, writes go to the editor and not to the disk, and undo
//! still takes back a write the editor saved) and the terminal view commands' output is
//! mirrored to (the command still runs in cairn's sandbox).
#![allow(clippy::unwrap_used)]

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, FileSystemCapabilities, InitializeRequest, NewSessionRequest, SessionId,
    SessionUpdate, StopReason, ToolCallContent, ToolCallStatus,
};
use agent_client_protocol::{Agent, Error};
use serde_json::json;

use crate::acp::prompt;
use crate::support::cairn_cmd::Sandbox;
use crate::support::editor::Editor;
use cairn::testing::{MockLlm, Script};

/// Initializes offering `fs/*` and, when `terminal`, the terminal view; opens a session.
async fn session_offering(
    cx: &ConnectionTo<Agent>,
    ws: &std::path::Path,
    fs: bool,
    terminal: bool,
) -> Result<SessionId, Error> {
    let mut caps = ClientCapabilities::new();
    if fs {
        caps = caps.fs(FileSystemCapabilities::new()
            .read_text_file(true)
            .write_text_file(true));
    }
    if terminal {
        caps.terminal = true;
        let mut meta = serde_json::Map::new();
        meta.insert("terminal_output".into(), json!(true));
        caps.meta = Some(meta);
    }
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
        .block_task()
        .await?;
    let session = cx
        .send_request(NewSessionRequest::new(ws))
        .block_task()
        .await?;
    Ok(session.session_id)
}

fn read_then_edit() -> Vec<Script> {
    vec![
        Script::tool_call("c1", "read_file", json!({"path": "notes.txt"})),
        Script::tool_call(
            "c2",
            "edit_file",
            json!({"path": "notes.txt", "old_string": "world", "new_string": "cairn"}),
        ),
        Script::text("edited"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_fs_offered_reads_take_the_unsaved_buffer_and_writes_go_to_the_editor() {
    let sb = Sandbox::new().file("notes.txt", "hello world\n");
    let llm = MockLlm::start(read_then_edit()).await;
    let ws = sb.workspace();
    let file = ws.join("notes.txt");
    // The editor has unsaved changes the disk does not.
    let editor = Editor::default().buffer(file.clone(), "hello unsaved world\n");
    let stop = editor
        .run(&sb, &["--base-url", &llm.url()], async |cx| {
            let session = session_offering(&cx, &ws, true, false).await?;
            prompt(&cx, &session, "rename world").await
        })
        .await;
    assert_eq!(stop, StopReason::EndTurn);
    let read = llm.tool_result(1, "c1").unwrap();
    assert!(read.contains("hello unsaved world"), "{read}");
    assert!(editor.reads.lock().unwrap().contains(&file));
    // The edit was made on the buffer's text and handed to the editor; the disk is untouched.
    assert_eq!(
        editor.writes(),
        vec![(file.clone(), "hello unsaved cairn\n".to_string())]
    );
    let edited = llm.tool_result(2, "c2").unwrap();
    assert!(!edited.starts_with("Error"), "{edited}");
    assert_eq!(sb.read("notes.txt"), "hello world\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_the_editor_saved_is_checkpointed_and_undone() {
    let sb = Sandbox::new().file("notes.txt", "hello world\n");
    let llm = MockLlm::start(read_then_edit()).await;
    let ws = sb.workspace();
    let file = ws.join("notes.txt");
    let editor = Editor {
        saves: true,
        ..Editor::default()
    };
    let disk = file.clone();
    let stops = editor
        .run(&sb, &["--base-url", &llm.url()], async |cx| {
            let session = session_offering(&cx, &ws, true, false).await?;
            let first = prompt(&cx, &session, "rename world").await?;
            assert_eq!(std::fs::read_to_string(&disk).unwrap(), "hello cairn\n");
            let undo = prompt(&cx, &session, "/undo").await?;
            Ok((first, undo))
        })
        .await;
    assert_eq!(stops, (StopReason::EndTurn, StopReason::EndTurn));
    assert_eq!(editor.writes(), vec![(file, "hello cairn\n".to_string())]);
    assert_eq!(sb.read("notes.txt"), "hello world\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commands_output_is_mirrored_to_the_editors_terminal_view() {
    let sb = Sandbox::new();
    let llm = MockLlm::start(vec![
        Script::tool_call(
            "c1",
            "bash",
            json!({"command": "echo mirrored; echo oops >&2"}),
        ),
        Script::text("ran"),
    ])
    .await;
    let ws = sb.workspace();
    let editor = Editor::default();
    let stop = editor
        .run(
            &sb,
            &["--base-url", &llm.url(), "--mode", "never"],
            async |cx| {
                let session = session_offering(&cx, &ws, false, true).await?;
                prompt(&cx, &session, "run it").await
            },
        )
        .await;
    assert_eq!(stop, StopReason::EndTurn);
    let updates = editor.take();
    let call = updates
        .iter()
        .find_map(|u| match u {
            SessionUpdate::ToolCall(c) if &*c.tool_call_id.0 == "c1" => Some(c.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        matches!(&call.content[..], [ToolCallContent::Terminal(t)] if &*t.terminal_id.0 == "c1"),
        "{call:?}"
    );
    let info = &call.meta.as_ref().unwrap()["terminal_info"];
    assert_eq!(info["terminal_id"], "c1");
    assert_eq!(info["cwd"], ws.display().to_string());
    // The output as it came (or with the end), then the exit.
    let mut shown = String::new();
    let mut exit = None;
    for update in &updates {
        let SessionUpdate::ToolCallUpdate(u) = update else {
            continue;
        };
        let Some(meta) = &u.meta else { continue };
        if let Some(data) = meta.get("terminal_output").and_then(|o| o["data"].as_str()) {
            shown.push_str(data);
        }
        if let Some(end) = meta.get("terminal_exit") {
            exit = Some((end.clone(), u.fields.status));
        }
    }
    assert!(shown.contains("mirrored\r\n"), "{shown:?}");
    let (end, status) = exit.expect("no terminal_exit");
    assert_eq!(end["exit_code"], 0, "{end}");
    assert_eq!(status, Some(ToolCallStatus::Completed));
    // The model got the command's result as always.
    assert!(llm.tool_result(1, "c1").unwrap().contains("mirrored"));
}
