//! What the small HTTP test servers share: the accept loop (every connection served on a task
//! of its own until the server's token is cancelled, its owner dropped) and reading one
//! request off a connection.

use std::future::Future;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// Spawns the loop: `serve` answers each connection; its error only ends that connection.
pub fn spawn_accept_loop<F, Fut>(listener: TcpListener, stop: CancellationToken, serve: F)
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = std::io::Result<()>> + Send + 'static,
{
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = stop.cancelled() => return,
            };
            let Ok((socket, _)) = accepted else { return };
            tokio::spawn(serve(socket));
        }
    });
}

/// One request as read: its method and target, its headers (names lowercased), its body.
pub struct RawRequest {
    pub method: String,
    /// The request line's target: the path, with `?query` when there is one.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawRequest {
    /// The target's path and query (without the `?`; empty when there is none).
    pub fn path_and_query(&self) -> (&str, &str) {
        self.target.split_once('?').unwrap_or((&self.target, ""))
    }
}

/// Reads one request: the head up to the blank line (at most `max_head` bytes), then
/// `Content-Length` bytes of body, answering `Expect: 100-continue` first (curl waits a second
/// for it before a body over 1 KiB). None when the client closed the connection first.
pub async fn read_request(
    socket: &mut TcpStream,
    max_head: usize,
) -> std::io::Result<Option<RawRequest>> {
    let mut buf = Vec::with_capacity(8192);
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buf.len() > max_head {
            return Err(std::io::Error::other("request head too large"));
        }
        let mut chunk = [0u8; 8192];
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let method = request_line.next().unwrap_or_default().to_string();
    let target = request_line.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buf.split_off(head_end + 4);
    let expects_continue = headers
        .iter()
        .any(|(name, value)| name == "expect" && value.eq_ignore_ascii_case("100-continue"));
    if expects_continue && body.len() < length {
        socket.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
    }
    while body.len() < length {
        let mut chunk = vec![0u8; (length - body.len()).min(64 * 1024)];
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(Some(RawRequest {
        method,
        target,
        headers,
        body,
    }))
}
