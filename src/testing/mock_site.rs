//! A local web site for the web tools' tests: pages, redirects, binary files, a page that
//! never answers and one too large to download, served on an address of 127.0.0.0/8 the test
//! picks. It counts connections and requests and tells how a large body ended, so a test can
//! assert that a server received nothing, was asked once, or saw its client hang up early.
//! Plain HTTP/1.1, one request per connection. Also the SearXNG stand-in (a JSON page).

use crate::sync::MutexExt;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// What a path answers.
#[derive(Debug, Clone)]
pub struct Page {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: PageBody,
}

#[derive(Debug, Clone)]
pub enum PageBody {
    Bytes(Vec<u8>),
    /// Accepts the request and never answers.
    Stall,
    /// `total` bytes of `fill`, written in 64 KiB pieces; how it ended is recorded.
    Large {
        total: u64,
        fill: u8,
    },
}

impl Page {
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Page {
        Page {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: PageBody::Bytes(body.into()),
        }
    }
    pub fn html(body: &str) -> Page {
        Page::new(200, "text/html; charset=utf-8", body)
    }
    pub fn json(body: &str) -> Page {
        Page::new(200, "application/json", body)
    }
    pub fn redirect(status: u16, location: &str) -> Page {
        Page {
            status,
            headers: vec![("Location".into(), location.into())],
            body: PageBody::Bytes(Vec::new()),
        }
    }
    pub fn stall() -> Page {
        Page {
            status: 200,
            headers: Vec::new(),
            body: PageBody::Stall,
        }
    }
    pub fn large(total: u64, content_type: &str) -> Page {
        Page {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: PageBody::Large { total, fill: b'a' },
        }
    }
    pub fn header(mut self, name: &str, value: &str) -> Page {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// How the last large body of a path ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LargeEnd {
    /// Bytes the server managed to write before the end.
    pub sent: u64,
    /// The client closed the connection before the whole body was written.
    pub cut_by_client: bool,
}

#[derive(Default)]
struct MockSiteShared {
    pages: Mutex<HashMap<String, Page>>,
    /// Request targets (path and query) in arrival order.
    requests: Mutex<Vec<String>>,
    /// The whole request heads (request line and headers), in arrival order.
    heads: Mutex<Vec<String>>,
    connections: AtomicUsize,
    large_ends: Mutex<HashMap<String, LargeEnd>>,
    changed: Option<watch::Sender<usize>>,
}

/// The running site; dropping it stops it.
pub struct MockSite {
    addr: SocketAddr,
    shared: Arc<MockSiteShared>,
    changes: watch::Receiver<usize>,
    shutdown: CancellationToken,
}

impl Drop for MockSite {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl MockSite {
    /// On a free port of 127.0.0.1. Panics when it cannot listen (a test set-up failure).
    pub async fn start() -> MockSite {
        Self::start_on(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)
            .await
            .expect("the mock site could not listen on 127.0.0.1")
    }

    /// On `ip:port` (port 0: a free one), such as 127.0.0.2 for a name mapped there.
    pub async fn start_on(ip: IpAddr, port: u16) -> std::io::Result<MockSite> {
        let listener = TcpListener::bind((ip, port)).await?;
        let addr = listener.local_addr()?;
        let (tx, changes) = watch::channel(0);
        let shared = Arc::new(MockSiteShared {
            changed: Some(tx),
            ..MockSiteShared::default()
        });
        let shutdown = CancellationToken::new();
        tokio::spawn(accept_loop(listener, Arc::clone(&shared), shutdown.clone()));
        Ok(MockSite {
            addr,
            shared,
            changes,
            shutdown,
        })
    }

    pub fn route(&self, path: &str, page: Page) -> &Self {
        self.shared.pages.locked().insert(path.into(), page);
        self
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
    pub fn port(&self) -> u16 {
        self.addr.port()
    }
    /// `http://IP:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
    /// `host:port` for `[web] allow_private`.
    pub fn host_port(&self) -> String {
        self.addr.to_string()
    }
    /// Every request target received so far (path and query).
    pub fn requests(&self) -> Vec<String> {
        self.shared.requests.locked().clone()
    }
    /// Every request head received so far (request line and headers, as sent).
    pub fn heads(&self) -> Vec<String> {
        self.shared.heads.locked().clone()
    }
    /// Requests of `path` (the query ignored).
    pub fn hits(&self, path: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.split('?').next() == Some(path))
            .count()
    }
    /// Connections accepted, whether or not a request came on them.
    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// Waits (at most 10 s) until the large body of `path` ended, and says how.
    pub async fn large_end(&self, path: &str) -> Option<LargeEnd> {
        let mut changes = self.changes.clone();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            if let Some(end) = self.shared.large_ends.locked().get(path) {
                return Some(*end);
            }
            if tokio::time::timeout_at(deadline, changes.changed())
                .await
                .is_err()
            {
                return None;
            }
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<MockSiteShared>,
    shutdown: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.cancelled() => return,
        };
        let Ok((stream, _)) = accepted else { continue };
        shared.connections.fetch_add(1, Ordering::SeqCst);
        let shared = Arc::clone(&shared);
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = serve(stream, &shared) => {}
                () = shutdown.cancelled() => {}
            }
        });
    }
}

fn notify(shared: &MockSiteShared) {
    if let Some(tx) = &shared.changed {
        tx.send_modify(|n| *n += 1);
    }
}

async fn serve(mut stream: TcpStream, shared: &MockSiteShared) {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if head.len() > 64 * 1024 {
            return;
        }
    }
    let text = String::from_utf8_lossy(&head);
    let target = text
        .lines()
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .unwrap_or("/")
        .to_string();
    shared.heads.locked().push(text.to_string());
    shared.requests.locked().push(target.clone());
    notify(shared);
    let path = target.split('?').next().unwrap_or("/").to_string();
    let page = shared.pages.locked().get(&path).cloned();
    let page = page.unwrap_or_else(|| Page::new(404, "text/plain", "not found"));
    let mut out = format!("HTTP/1.1 {} X\r\nConnection: close\r\n", page.status);
    for (name, value) in &page.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    match page.body {
        PageBody::Stall => {
            std::future::pending::<()>().await;
        }
        PageBody::Bytes(body) => {
            out.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
            let _ = stream.write_all(out.as_bytes()).await;
            let _ = stream.write_all(&body).await;
            let _ = stream.shutdown().await;
        }
        PageBody::Large { total, fill } => {
            out.push_str(&format!("Content-Length: {total}\r\n\r\n"));
            let piece = vec![fill; 64 * 1024];
            let mut sent = 0u64;
            let mut cut = stream.write_all(out.as_bytes()).await.is_err();
            while !cut && sent < total {
                let n = usize::try_from((total - sent).min(piece.len() as u64)).unwrap_or(0);
                match stream.write_all(&piece[..n]).await {
                    Ok(()) => sent += n as u64,
                    Err(_) => cut = true,
                }
            }
            shared.large_ends.locked().insert(
                path,
                LargeEnd {
                    sent,
                    cut_by_client: cut,
                },
            );
            notify(shared);
        }
    }
}
