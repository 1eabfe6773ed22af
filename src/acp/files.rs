//! The editor's `fs/read_text_file` and `fs/write_text_file` as the engine's `Buffers`: when
//! the editor offers both, the file tools read its buffers (unsaved changes included) and
//! write through it. The tools keep everything else (confinement, the write queue, the
//! read-before-write stamps, checkpoints): only the text crosses here.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ReadTextFileRequest, SessionId, WriteTextFileRequest,
};
use async_trait::async_trait;

use crate::fs::buffers::{BufferError, Buffers};

/// Longest the editor may take to answer one file request: a read or write it never answers
/// must not hold the path's write queue (and the turn) forever.
const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(60);

/// Where the session's id goes once the engine is started.
pub type SessionCell = Arc<OnceLock<SessionId>>;

/// One session's way to the editor's files.
pub struct EditorFiles {
    cx: ConnectionTo<Client>,
    /// Known once the engine is started (the session's id is the engine's).
    session: SessionCell,
}

impl EditorFiles {
    /// The editor's files for a session about to start, when the editor offers both methods
    /// (reading buffers without writing through the editor would leave its buffer behind the
    /// disk); the returned cell takes the session's id once known.
    pub fn offered(
        client: &ClientCapabilities,
        cx: &ConnectionTo<Client>,
    ) -> Option<(Arc<dyn Buffers>, SessionCell)> {
        if !(client.fs.read_text_file && client.fs.write_text_file) {
            return None;
        }
        let session = Arc::new(OnceLock::new());
        let files = EditorFiles {
            cx: cx.clone(),
            session: Arc::clone(&session),
        };
        Some((Arc::new(files), session))
    }

    fn session(&self) -> Result<SessionId, BufferError> {
        self.session
            .get()
            .cloned()
            .ok_or_else(|| BufferError("the editor session is not started yet".into()))
    }
}

fn editor_error(err: agent_client_protocol::Error) -> BufferError {
    BufferError(err.to_string())
}

async fn answered<T>(
    what: &str,
    answer: impl std::future::Future<Output = Result<T, agent_client_protocol::Error>>,
) -> Result<T, BufferError> {
    match tokio::time::timeout(ANSWER_WITHIN, answer).await {
        Ok(answer) => answer.map_err(editor_error),
        Err(_) => Err(BufferError(format!(
            "the editor did not answer {what} within {} s",
            ANSWER_WITHIN.as_secs()
        ))),
    }
}

#[async_trait]
impl Buffers for EditorFiles {
    async fn read(&self, path: &Path) -> Result<String, BufferError> {
        let request = ReadTextFileRequest::new(self.session()?, path);
        let answer = answered(
            "fs/read_text_file",
            self.cx.send_request(request).block_task(),
        )
        .await?;
        Ok(answer.content)
    }

    async fn write(&self, path: &Path, text: &str) -> Result<(), BufferError> {
        let request = WriteTextFileRequest::new(self.session()?, path, text);
        answered(
            "fs/write_text_file",
            self.cx.send_request(request).block_task(),
        )
        .await?;
        Ok(())
    }
}
