//! An editor for `cairn acp` tests, written on the client side of the same ACP crate: it
//! starts `cairn acp` in a sandbox, keeps every `session/update`, answers
//! `session/request_permission` from a script, and serves `fs/*` from its own buffers when it
//! offers them. `Raw` is an editor without the SDK: JSON lines on cairn's stdin and stdout.
#![allow(clippy::unwrap_used, dead_code)]

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ReadTextFileRequest, ReadTextFileResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification, SessionUpdate,
    WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Client, Error};
use tokio_util::compat::{TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};

use super::cairn_cmd::Sandbox;

/// What the editor saw and how it answers.
#[derive(Clone, Default)]
pub struct Editor {
    pub updates: Arc<Mutex<Vec<SessionNotification>>>,
    /// Option ids to pick, in order; `cancel` answers `cancelled`. Empty: cancelled.
    pub answers: Arc<Mutex<VecDeque<&'static str>>>,
    pub asked: Arc<Mutex<Vec<RequestPermissionRequest>>>,
    /// Open buffers by absolute path (what `fs/read_text_file` returns).
    pub buffers: Arc<Mutex<HashMap<PathBuf, String>>>,
    pub writes: Arc<Mutex<Vec<(PathBuf, String)>>>,
    pub reads: Arc<Mutex<Vec<PathBuf>>>,
    /// A write is saved to disk too (as Zed does), not only kept in the buffer.
    pub saves: bool,
}

impl Editor {
    pub fn answering(answers: &[&'static str]) -> Self {
        let editor = Editor::default();
        editor
            .answers
            .lock()
            .unwrap()
            .extend(answers.iter().copied());
        editor
    }

    /// The updates so far, and forgets them.
    pub fn take(&self) -> Vec<SessionUpdate> {
        std::mem::take(&mut *self.updates.lock().unwrap())
            .into_iter()
            .map(|n| n.update)
            .collect()
    }

    /// The editor holds `text` for `path`, unsaved.
    pub fn buffer(self, path: PathBuf, text: &str) -> Self {
        self.buffers.lock().unwrap().insert(path, text.to_string());
        self
    }

    pub fn writes(&self) -> Vec<(PathBuf, String)> {
        self.writes.lock().unwrap().clone()
    }

    pub fn asked(&self) -> Vec<RequestPermissionRequest> {
        self.asked.lock().unwrap().clone()
    }

    /// Starts `cairn acp ARGS` in `sb` and runs `body` as the editor connected to it; the
    /// connection closes (and cairn exits) when it returns.
    pub async fn run<R>(
        &self,
        sb: &Sandbox,
        args: &[&str],
        body: impl AsyncFnOnce(ConnectionTo<Agent>) -> Result<R, Error>,
    ) -> R {
        let mut full = vec!["acp"];
        full.extend_from_slice(args);
        let mut child = sb
            .command(&full, &[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let transport = ByteStreams::new(
            child.stdin.take().unwrap().compat_write(),
            child.stdout.take().unwrap().compat(),
        );
        let (updates, answers, asked) = (
            Arc::clone(&self.updates),
            Arc::clone(&self.answers),
            Arc::clone(&self.asked),
        );
        let (buffers, reads, writes) = (
            Arc::clone(&self.buffers),
            Arc::clone(&self.reads),
            Arc::clone(&self.writes),
        );
        let written = Arc::clone(&self.buffers);
        let saves = self.saves;
        let result = Client
            .v1()
            .name("test-editor")
            .on_receive_notification(
                async move |notification: SessionNotification, _cx| {
                    updates.lock().unwrap().push(notification);
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_request(
                async move |request: RequestPermissionRequest, responder, _cx| {
                    asked.lock().unwrap().push(request);
                    let outcome = match answers.lock().unwrap().pop_front() {
                        Some("cancel") | None => RequestPermissionOutcome::Cancelled,
                        Some(id) => {
                            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id))
                        }
                    };
                    responder.respond(RequestPermissionResponse::new(outcome))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: ReadTextFileRequest, responder, _cx| {
                    reads.lock().unwrap().push(request.path.clone());
                    let buffer = buffers.lock().unwrap().get(&request.path).cloned();
                    match buffer {
                        Some(text) => responder.respond(ReadTextFileResponse::new(text)),
                        None => match std::fs::read_to_string(&request.path) {
                            Ok(text) => responder.respond(ReadTextFileResponse::new(text)),
                            Err(err) => responder.respond_with_error(
                                agent_client_protocol::v1::schema::Error::resource_not_found(Some(
                                    request.path.display().to_string(),
                                ))
                                .data(serde_json::json!(err.to_string()))
                                .into(),
                            ),
                        },
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: WriteTextFileRequest, responder, _cx| {
                    writes
                        .lock()
                        .unwrap()
                        .push((request.path.clone(), request.content.clone()));
                    written
                        .lock()
                        .unwrap()
                        .insert(request.path.clone(), request.content.clone());
                    if saves {
                        std::fs::write(&request.path, &request.content).unwrap();
                    }
                    responder.respond(WriteTextFileResponse::new())
                },
                agent_client_protocol::on_receive_request!(),
            )
            .connect_with(transport, body)
            .await;
        // The editor hung up: cairn shuts its sessions down and exits.
        let status = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait())
            .await
            .expect("cairn acp did not exit after the editor hung up")
            .unwrap();
        assert!(status.success(), "cairn acp exited with {status}");
        result.unwrap()
    }
}

/// The text of the agent's message chunks, joined.
pub fn message_text(updates: &[SessionUpdate]) -> String {
    updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AgentMessageChunk(chunk) => match &chunk.content {
                agent_client_protocol::v1::schema::ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// A raw editor: JSON lines on cairn's stdin and stdout, no SDK in between.
pub struct Raw {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl Raw {
    pub fn start(sb: &Sandbox, args: &[&str]) -> Raw {
        let mut full = vec!["acp"];
        full.extend_from_slice(args);
        let mut child = sb
            .command(&full, &[])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        use tokio::io::AsyncBufReadExt as _;
        let stdin = child.stdin.take().unwrap();
        let lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        Raw {
            child,
            stdin,
            lines,
        }
    }

    pub async fn send(&mut self, line: &str) {
        use tokio::io::AsyncWriteExt as _;
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next frame; every line on stdout must be one JSON-RPC message.
    pub async fn next(&mut self) -> serde_json::Value {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), self.lines.next_line())
            .await
            .expect("no frame from cairn acp")
            .unwrap()
            .expect("cairn acp closed stdout");
        let frame: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|err| panic!("not a JSON frame ({err}): {:.200}", line));
        assert_eq!(frame["jsonrpc"], "2.0", "{:.200}", line);
        frame
    }

    /// Frames until the response to request `id`, which is returned with what came before.
    pub async fn until_response(&mut self, id: i64) -> (serde_json::Value, Vec<serde_json::Value>) {
        let mut before = Vec::new();
        loop {
            let frame = self.next().await;
            if frame["id"] == id && frame.get("method").is_none() {
                return (frame, before);
            }
            before.push(frame);
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap()
    }

    pub async fn close(mut self) {
        drop(self.stdin);
        let status = tokio::time::timeout(std::time::Duration::from_secs(20), self.child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "{status}");
    }
}
