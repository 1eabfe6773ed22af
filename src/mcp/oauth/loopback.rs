//! The loopback redirect of a login (RFC 8252 §7.3): a listener on 127.0.0.1 at a port the
//! system picks (or the configured one), `http://127.0.0.1:PORT/callback` as the redirect URI.
//! The browser comes back with the code and the `state`; the page it shows says to go back to
//! the terminal. Requests for other paths (a favicon) are answered 404 and waiting goes on.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use super::OAuthError;

/// The path of the redirect.
const CALLBACK: &str = "/callback";
/// The most of a request's head read.
const MAX_HEAD: usize = 16 * 1024;

pub struct Loopback {
    listener: TcpListener,
    port: u16,
}

/// What came back to the redirect.
enum Callback {
    Code { code: String, state: String },
    Refused(String),
    Other,
}

impl Loopback {
    /// Listens on 127.0.0.1 at `port` (0: any free port).
    pub async fn bind(port: u16) -> Result<Self, OAuthError> {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(OAuthError::Loopback)?;
        let port = listener.local_addr().map_err(OAuthError::Loopback)?.port();
        Ok(Self { listener, port })
    }

    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK}", self.port)
    }

    /// Waits for the browser's return, at most `limit`; the code when `state` matches.
    pub async fn code(&self, state: &str, limit: Duration) -> Result<String, OAuthError> {
        let waited = tokio::time::timeout(limit, async {
            loop {
                let (mut socket, _) = self.listener.accept().await.map_err(OAuthError::Loopback)?;
                match read(&mut socket).await {
                    Ok(Callback::Code { code, state: back }) if back == state => {
                        answer(&mut socket, "200 OK", "Logged in. You can close this tab and go back to the terminal.").await;
                        return Ok(code);
                    }
                    Ok(Callback::Code { .. }) => {
                        // Not the request this login made (a stale tab, or a forged one).
                        answer(&mut socket, "400 Bad Request", "This login's state does not match; start it again with `cairn mcp login`.").await;
                        return Err(OAuthError::Refused(
                            "the redirect came back with another login's state".into(),
                        ));
                    }
                    Ok(Callback::Refused(why)) => {
                        answer(&mut socket, "200 OK", "The login was refused; the terminal says why.").await;
                        return Err(OAuthError::Refused(why));
                    }
                    Ok(Callback::Other) | Err(_) => {
                        answer(&mut socket, "404 Not Found", "Not found.").await;
                    }
                }
            }
        })
        .await;
        waited.unwrap_or(Err(OAuthError::TimedOut(limit.as_secs())))
    }
}

async fn read(socket: &mut TcpStream) -> std::io::Result<Callback> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), socket.read(&mut chunk))
            .await
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
        if n == 0 || head.len() + n > MAX_HEAD {
            break;
        }
        head.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    let target = head
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("GET "))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or("");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if path != CALLBACK {
        return Ok(Callback::Other);
    }
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let get = |name: &str| {
        pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    if let Some(error) = get("error") {
        let why = match get("error_description") {
            Some(description) => format!("{error} ({description})"),
            None => error,
        };
        return Ok(Callback::Refused(why));
    }
    match (get("code"), get("state")) {
        (Some(code), Some(state)) => Ok(Callback::Code { code, state }),
        _ => Ok(Callback::Other),
    }
}

async fn answer(socket: &mut TcpStream, status: &str, text: &str) {
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>cairn</title></head><body><p>{text}</p></body></html>"
    );
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\ncache-control: no-store\r\n\r\n",
        body.len()
    );
    let _ = socket.write_all(head.as_bytes()).await;
    let _ = socket.write_all(body.as_bytes()).await;
    let _ = socket.shutdown().await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Sends `GET target` to the loopback and returns the status line of its answer.
    async fn visit(port: u16, target: &str) -> String {
        let mut socket = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let request = format!("GET {target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
        socket.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        socket.read_to_string(&mut answer).await.unwrap();
        answer.lines().next().unwrap_or("").to_string()
    }

    #[tokio::test]
    async fn the_code_comes_back_with_its_state_and_nothing_else_is_taken_for_it() {
        let loopback = Loopback::bind(0).await.unwrap();
        let port = loopback.port;
        assert_eq!(
            loopback.redirect_uri(),
            format!("http://127.0.0.1:{port}/callback")
        );
        let browser = tokio::spawn(async move {
            let favicon = visit(port, "/favicon.ico").await;
            let code = visit(port, "/callback?code=abc&state=s1").await;
            (favicon, code)
        });
        let code = loopback.code("s1", Duration::from_secs(10)).await.unwrap();
        assert_eq!(code, "abc");
        let (favicon, back) = browser.await.unwrap();
        assert!(favicon.contains("404"), "{favicon}");
        assert!(back.contains("200"), "{back}");

        // Another login's state is refused, and so is the user's "deny".
        let loopback = Loopback::bind(0).await.unwrap();
        let port = loopback.port;
        tokio::spawn(async move { visit(port, "/callback?code=abc&state=other").await });
        assert!(matches!(
            loopback.code("s1", Duration::from_secs(10)).await,
            Err(OAuthError::Refused(_))
        ));
        let loopback = Loopback::bind(0).await.unwrap();
        let port = loopback.port;
        tokio::spawn(async move {
            visit(
                port,
                "/callback?error=access_denied&error_description=no%20thanks",
            )
            .await
        });
        match loopback.code("s1", Duration::from_secs(10)).await {
            Err(OAuthError::Refused(why)) => assert_eq!(why, "access_denied (no thanks)"),
            _ => panic!("a denial is a refusal"),
        }
    }
}
