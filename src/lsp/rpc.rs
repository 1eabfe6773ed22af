//! The JSON-RPC layer under the language-server client: `Content-Length` framing over a
//! server's pipes, request ids and their answers, notifications, and the few requests a
//! server sends the client (answered by the `RpcHandler`). Small on purpose: a language server is
//! one child on two pipes, talked to by one client, and the process service already owns
//! starting and stopping it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

use crate::sync::MutexExt;

/// The largest message read from a server (a workspace's symbols can be large; a runaway
/// server must not take the client's memory).
const MAX_MESSAGE: usize = 32 * 1024 * 1024;

/// Why a request got no result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RpcError {
    #[error("the server answered with error {code}: {message}")]
    Server { code: i64, message: String },
    #[error("the server has exited")]
    Closed,
    #[error("no answer within {0:?}")]
    Timeout(Duration),
}

/// What the server sends that is not an answer: notifications, and requests to the client.
pub trait RpcHandler: Send + Sync + 'static {
    fn notification(&self, method: &str, params: Value);
    /// The result of a server's request (`workspace/configuration`, `client/registerCapability`).
    fn request(&self, method: &str, params: Value) -> Value;
    /// The server's stdout closed: it exited or crashed.
    fn closed(&self);
}

type Waiters = Arc<std::sync::Mutex<HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>>>;

/// One connection to a server.
pub struct RpcConnection {
    out: mpsc::UnboundedSender<Vec<u8>>,
    waiting: Waiters,
    next_id: AtomicI64,
}

impl RpcConnection {
    /// Starts the reader and the writer over the server's pipes.
    pub fn start(
        input: impl AsyncRead + Unpin + Send + 'static,
        output: impl AsyncWrite + Unpin + Send + 'static,
        handler: Arc<dyn RpcHandler>,
    ) -> Self {
        let (out, rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let waiting: Waiters = Arc::default();
        tokio::spawn(write_loop(output, rx));
        tokio::spawn(read_loop(input, waiting.clone(), out.clone(), handler));
        Self {
            out,
            waiting,
            next_id: AtomicI64::new(1),
        }
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let _ = self.out.send(frame(&message));
    }

    /// Sends a request and waits for its answer at most `limit` (then it is cancelled).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.waiting.locked().insert(id, tx);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if self.out.send(frame(&message)).is_err() {
            self.waiting.locked().remove(&id);
            return Err(RpcError::Closed);
        }
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(RpcError::Closed),
            Err(_) => {
                self.waiting.locked().remove(&id);
                self.notify("$/cancelRequest", json!({"id": id}));
                Err(RpcError::Timeout(limit))
            }
        }
    }
}

/// A message with its `Content-Length` header.
pub fn frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}

/// Reads one framed message; `None` at the end of the stream (or a broken frame).
pub async fn read_message(input: &mut (impl AsyncBufReadExt + Unpin)) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if input.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let length = length.filter(|n| *n <= MAX_MESSAGE)?;
    let mut body = vec![0; length];
    input.read_exact(&mut body).await.ok()?;
    // A message that does not parse is skipped, not the end of the stream.
    Some(serde_json::from_slice(&body).unwrap_or(Value::Null))
}

async fn write_loop(mut output: impl AsyncWrite + Unpin, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(bytes) = rx.recv().await {
        if output.write_all(&bytes).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}

async fn read_loop(
    input: impl AsyncRead + Unpin,
    waiting: Waiters,
    out: mpsc::UnboundedSender<Vec<u8>>,
    handler: Arc<dyn RpcHandler>,
) {
    let mut input = BufReader::new(input);
    while let Some(message) = read_message(&mut input).await {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").filter(|id| !id.is_null());
        match (method, id) {
            (Some(method), Some(id)) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                let result = handler.request(method, params);
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
                let _ = out.send(frame(&answer));
            }
            (Some(method), None) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                handler.notification(method, params);
            }
            (None, Some(id)) => {
                let Some(id) = id.as_i64() else { continue };
                let Some(tx) = waiting.locked().remove(&id) else {
                    continue;
                };
                let answer = match message.get("error") {
                    Some(error) => Err(RpcError::Server {
                        code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                        message: error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    }),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = tx.send(answer);
            }
            (None, None) => {}
        }
    }
    // Every request still waiting fails now, not at its timeout.
    waiting.locked().clear();
    handler.closed();
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn frames_read_back_and_a_bad_length_ends_the_stream() {
        let mut bytes = frame(&json!({"a": 1}));
        bytes.extend(frame(&json!({"b": "é"})));
        bytes.extend(b"Content-Length: 99999999999\r\n\r\n");
        let mut input = BufReader::new(&bytes[..]);
        assert_eq!(read_message(&mut input).await, Some(json!({"a": 1})));
        assert_eq!(read_message(&mut input).await, Some(json!({"b": "é"})));
        assert_eq!(read_message(&mut input).await, None);
    }
}
