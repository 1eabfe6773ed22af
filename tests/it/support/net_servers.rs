//! Servers the network tests start on 127.0.0.1: a test CA and TLS front (certificates made at
//! test time), a CONNECT proxy that may require basic auth, a SOCKS5 server, a server that
//! accepts and never answers, and a port where nothing listens. Each forwards to a backend
//! (usually the scripted mock) whatever host the client named, so a request for a name that
//! does not exist (`api.corp.test`) can still arrive, the way it would through a real proxy.

#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use base64::Engine;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A CA made for one test.
pub struct TestCa {
    pub pem: String,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

impl TestCa {
    pub fn new(common_name: &str) -> TestCa {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, common_name);
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "cairn tests");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        TestCa {
            pem: cert.pem(),
            issuer: rcgen::Issuer::new(params, key),
        }
    }

    /// A server configuration with a certificate for `names` signed by this CA.
    pub fn server_config(&self, names: &[&str]) -> Arc<rustls::ServerConfig> {
        let params =
            rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        let key = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key)
            .unwrap();
        Arc::new(config)
    }
}

/// TLS in front of `backend`: every connection is decrypted and forwarded.
pub async fn tls_front(config: Arc<rustls::ServerConfig>, backend: SocketAddr) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(socket).await else {
                    return;
                };
                if let Ok(mut upstream) = TcpStream::connect(backend).await {
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut upstream).await;
                }
            });
        }
    });
    addr
}

/// What a proxy saw.
#[derive(Debug, Default, Clone)]
pub struct ProxyLog {
    /// Connections accepted.
    pub connections: usize,
    /// `CONNECT host:port` targets (or SOCKS targets), in order.
    pub targets: Vec<String>,
    /// The `Proxy-Authorization` headers received, decoded (`user:password`).
    pub credentials: Vec<String>,
}

pub struct Proxy {
    pub addr: SocketAddr,
    log: Arc<Mutex<ProxyLog>>,
}

impl Proxy {
    pub fn log(&self) -> ProxyLog {
        self.log.lock().unwrap().clone()
    }
}

/// An HTTP CONNECT proxy tunnelling every target to `backend`; with `auth`, a request without
/// those exact credentials gets a 407.
pub async fn connect_proxy(auth: Option<(&str, &str)>, backend: SocketAddr) -> Proxy {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = Arc::new(Mutex::new(ProxyLog::default()));
    let expected = auth.map(|(u, p)| format!("{u}:{p}"));
    let shared = Arc::clone(&log);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            shared.lock().unwrap().connections += 1;
            let log = Arc::clone(&shared);
            let expected = expected.clone();
            tokio::spawn(async move {
                let Some(head) = read_head(&mut socket).await else {
                    return;
                };
                let mut lines = head.lines();
                let request_line = lines.next().unwrap_or_default().to_string();
                let given = lines
                    .filter_map(|l| l.split_once(':'))
                    .find(|(name, _)| name.trim().eq_ignore_ascii_case("proxy-authorization"))
                    .and_then(|(_, value)| value.trim().strip_prefix("Basic ").map(str::to_string))
                    .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
                    .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
                {
                    let mut log = log.lock().unwrap();
                    let target = request_line.split_whitespace().nth(1).unwrap_or("");
                    log.targets.push(target.to_string());
                    if let Some(given) = &given {
                        log.credentials.push(given.clone());
                    }
                }
                if expected.is_some() && given != expected {
                    let _ = socket
                        .write_all(
                            b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\nContent-Type: text/html\r\nContent-Length: 29\r\n\r\n<html>squid says no</html>\r\n",
                        )
                        .await;
                    return;
                }
                if !request_line.starts_with("CONNECT ") {
                    let _ = socket
                        .write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                        .await;
                    return;
                }
                let Ok(mut upstream) = TcpStream::connect(backend).await else {
                    return;
                };
                if socket
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await
                    .is_ok()
                {
                    let _ = tokio::io::copy_bidirectional(&mut socket, &mut upstream).await;
                }
            });
        }
    });
    Proxy { addr, log }
}

/// Reads a request head up to the blank line.
async fn read_head(socket: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if socket.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
        if head.len() > 16 * 1024 {
            return None;
        }
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// A SOCKS5 server without authentication, connecting every target to `backend`; the log's
/// targets are what the client asked for (`name:port` when the client left the name to it).
pub async fn socks5_server(backend: SocketAddr) -> Proxy {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = Arc::new(Mutex::new(ProxyLog::default()));
    let shared = Arc::clone(&log);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            shared.lock().unwrap().connections += 1;
            let log = Arc::clone(&shared);
            tokio::spawn(async move {
                let Some(target) = socks5_handshake(&mut socket).await else {
                    return;
                };
                log.lock().unwrap().targets.push(target);
                let Ok(mut upstream) = TcpStream::connect(backend).await else {
                    return;
                };
                if socket
                    .write_all(&[5, 0, 0, 1, 127, 0, 0, 1, 0, 0])
                    .await
                    .is_ok()
                {
                    let _ = tokio::io::copy_bidirectional(&mut socket, &mut upstream).await;
                }
            });
        }
    });
    Proxy { addr, log }
}

async fn socks5_handshake(socket: &mut TcpStream) -> Option<String> {
    let mut greeting = [0u8; 2];
    socket.read_exact(&mut greeting).await.ok()?;
    let mut methods = vec![0u8; usize::from(greeting[1])];
    socket.read_exact(&mut methods).await.ok()?;
    socket.write_all(&[5, 0]).await.ok()?;
    let mut request = [0u8; 4];
    socket.read_exact(&mut request).await.ok()?;
    let host = match request[3] {
        1 => {
            let mut ip = [0u8; 4];
            socket.read_exact(&mut ip).await.ok()?;
            std::net::Ipv4Addr::from(ip).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            socket.read_exact(&mut len).await.ok()?;
            let mut name = vec![0u8; usize::from(len[0])];
            socket.read_exact(&mut name).await.ok()?;
            String::from_utf8_lossy(&name).into_owned()
        }
        4 => {
            let mut ip = [0u8; 16];
            socket.read_exact(&mut ip).await.ok()?;
            std::net::Ipv6Addr::from(ip).to_string()
        }
        _ => return None,
    };
    let mut port = [0u8; 2];
    socket.read_exact(&mut port).await.ok()?;
    Some(format!("{host}:{}", u16::from_be_bytes(port)))
}

/// A server that accepts connections and never sends a byte; counts them.
pub async fn silent_server() -> (SocketAddr, Arc<Mutex<usize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(Mutex::new(0usize));
    let shared = Arc::clone(&count);
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            *shared.lock().unwrap() += 1;
            held.push(socket);
        }
    });
    (addr, count)
}

/// A port on 127.0.0.1 where nothing listens (bound, then released).
pub fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `/models` server that names `model`'s context window, the way vLLM does.
pub async fn models_server(model: &'static str, window: u64) -> (SocketAddr, Arc<Mutex<usize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(Mutex::new(0usize));
    let shared = Arc::clone(&count);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            *shared.lock().unwrap() += 1;
            tokio::spawn(async move {
                let _ = read_head(&mut socket).await;
                let body = format!(r#"{{"data":[{{"id":"{model}","max_model_len":{window}}}]}}"#);
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(body.as_bytes()).await;
            });
        }
    });
    (addr, count)
}
