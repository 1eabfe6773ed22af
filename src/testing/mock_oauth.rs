//! A test authorization server on 127.0.0.1 fronting a streamable-HTTP test MCP server (the
//! MCP authorization spec's roles, in one listener): the protected-resource metadata (RFC 9728)
//! and the authorization server's (RFC 8414), dynamic client registration (RFC 7591), an
//! authorize endpoint that redirects at once to the client's loopback with a code (the test
//! plays the user and the browser), a token endpoint that checks the code against the PKCE
//! verifier, the redirect and the `resource`, and refreshes. `/mcp` answers 401 with a
//! `WWW-Authenticate` naming the metadata unless the request carries a live access token;
//! then it is passed on to the MCP server behind. Tokens are random and recorded, so a test
//! can look for them where they must not be.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use tokio::io::AsyncWriteExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use crate::sync::MutexExt;

/// A code waiting for its exchange.
struct PendingCode {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    resource: String,
}

#[derive(Default)]
struct OAuthLedger {
    /// Registered clients and their redirect URIs.
    clients: HashMap<String, Vec<String>>,
    codes: HashMap<String, PendingCode>,
    /// Access tokens the MCP server takes now.
    live: Vec<String>,
    /// Refresh tokens the token endpoint takes now.
    refreshable: Vec<String>,
    /// Every token issued, in order.
    access_issued: Vec<String>,
    refresh_issued: Vec<String>,
    /// The `Authorization` header of each `/mcp` request.
    mcp_authorizations: Vec<Option<String>>,
    /// Every request, as `METHOD path`.
    seen: Vec<String>,
}

struct OAuthMockState {
    base: String,
    upstream: String,
    expires_in: u64,
    ledger: Mutex<OAuthLedger>,
    refreshes: AtomicUsize,
    serial: AtomicUsize,
    http: reqwest::Client,
}

pub struct MockOAuth {
    addr: SocketAddr,
    state: Arc<OAuthMockState>,
    shutdown: CancellationToken,
}

impl Drop for MockOAuth {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl MockOAuth {
    /// Starts on a free port of 127.0.0.1 in front of the MCP server at `upstream` (panics when
    /// it cannot: a test set-up failure).
    pub async fn start(upstream: String) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("the mock authorization server could not listen on 127.0.0.1");
        let addr = listener.local_addr().expect("its address");
        let state = Arc::new(OAuthMockState {
            base: format!("http://{addr}"),
            upstream,
            expires_in: 3600,
            ledger: Mutex::default(),
            refreshes: AtomicUsize::new(0),
            serial: AtomicUsize::new(0),
            http: reqwest::Client::builder()
                .no_proxy()
                .build()
                .expect("a plain HTTP client"),
        });
        let shutdown = CancellationToken::new();
        let served = state.clone();
        crate::testing::accept::spawn_accept_loop(listener, shutdown.clone(), move |socket| {
            let state = served.clone();
            async move { serve(socket, &state).await }
        });
        Self {
            addr,
            state,
            shutdown,
        }
    }

    /// The protected MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Every access token issued, in order.
    pub fn access_tokens(&self) -> Vec<String> {
        self.state.ledger.locked().access_issued.clone()
    }

    /// Every refresh token issued, in order.
    pub fn refresh_tokens(&self) -> Vec<String> {
        self.state.ledger.locked().refresh_issued.clone()
    }

    /// How many refresh grants were answered.
    pub fn refreshes(&self) -> usize {
        self.state.refreshes.load(Ordering::SeqCst)
    }

    /// The `Authorization` header of each `/mcp` request, in order.
    pub fn mcp_authorizations(&self) -> Vec<Option<String>> {
        self.state.ledger.locked().mcp_authorizations.clone()
    }

    /// Every request as `METHOD path`.
    pub fn seen(&self) -> Vec<String> {
        self.state.ledger.locked().seen.clone()
    }

    /// Every access token issued so far stops working (as when it expired on the server's
    /// side); refresh tokens still work.
    pub fn expire_access_tokens(&self) {
        self.state.ledger.locked().live.clear();
    }

    /// Every refresh token issued so far is refused (the grant was revoked): only a new login
    /// gets tokens again.
    pub fn revoke_refresh_tokens(&self) {
        self.state.ledger.locked().refreshable.clear();
    }
}

/// One request as received.
struct Received {
    method: String,
    path: String,
    query: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn form(&self, text: &[u8]) -> HashMap<String, String> {
        url::form_urlencoded::parse(text).into_owned().collect()
    }
}

/// An answer: status line, headers, body.
struct MockReply {
    status: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn reply_json(status: &str, value: &Value) -> MockReply {
    MockReply {
        status: status.into(),
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("cache-control".into(), "no-store".into()),
        ],
        body: value.to_string().into_bytes(),
    }
}

fn oauth_error(error: &str, description: &str) -> MockReply {
    reply_json(
        "400 Bad Request",
        &json!({"error": error, "error_description": description}),
    )
}

async fn serve(mut socket: TcpStream, state: &OAuthMockState) -> std::io::Result<()> {
    while let Some(request) = read(&mut socket).await? {
        state
            .ledger
            .locked()
            .seen
            .push(format!("{} {}", request.method, request.path));
        let reply = answer(state, &request).await;
        let mut head = format!(
            "HTTP/1.1 {}\r\ncontent-length: {}\r\nconnection: keep-alive\r\n",
            reply.status,
            reply.body.len()
        );
        for (name, value) in reply.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        socket.write_all(head.as_bytes()).await?;
        socket.write_all(&reply.body).await?;
    }
    Ok(())
}

async fn answer(state: &OAuthMockState, request: &Received) -> MockReply {
    let base = &state.base;
    match (request.method.as_str(), request.path.as_str()) {
        ("GET", "/.well-known/oauth-protected-resource/mcp") => reply_json(
            "200 OK",
            &json!({
                "resource": format!("{base}/mcp"),
                "authorization_servers": [base],
                "scopes_supported": ["mcp:tools"],
                "bearer_methods_supported": ["header"],
            }),
        ),
        ("GET", "/.well-known/oauth-authorization-server") => reply_json(
            "200 OK",
            &json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            }),
        ),
        ("POST", "/register") => register(state, request),
        ("GET", "/authorize") => authorize(state, request),
        ("POST", "/token") => token(state, request),
        (_, "/mcp") => mcp(state, request).await,
        _ => MockReply {
            status: "404 Not Found".into(),
            headers: Vec::new(),
            body: b"not found".to_vec(),
        },
    }
}

fn register(state: &OAuthMockState, request: &Received) -> MockReply {
    let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
        return oauth_error("invalid_client_metadata", "not JSON");
    };
    let redirects: Vec<String> = body["redirect_uris"]
        .as_array()
        .map(|uris| {
            uris.iter()
                .filter_map(|u| u.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if redirects.is_empty() {
        return oauth_error("invalid_redirect_uri", "no redirect_uris");
    }
    let n = state.serial.fetch_add(1, Ordering::SeqCst) + 1;
    let id = format!("client-{n}");
    state
        .ledger
        .locked()
        .clients
        .insert(id.clone(), redirects.clone());
    reply_json(
        "201 Created",
        &json!({
            "client_id": id,
            "redirect_uris": redirects,
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
        }),
    )
}

fn authorize(state: &OAuthMockState, request: &Received) -> MockReply {
    let query = request.form(request.query.as_bytes());
    let get = |name: &str| query.get(name).cloned().unwrap_or_default();
    let (client_id, redirect_uri) = (get("client_id"), get("redirect_uri"));
    let registered = state
        .ledger
        .locked()
        .clients
        .get(&client_id)
        .is_some_and(|uris| uris.contains(&redirect_uri));
    let expected_resource = format!("{}/mcp", state.base);
    let problem = if get("response_type") != "code" {
        Some("response_type must be code")
    } else if !registered {
        Some("unknown client or redirect_uri")
    } else if get("code_challenge_method") != "S256" || get("code_challenge").len() != 43 {
        Some("PKCE S256 is required")
    } else if get("resource") != expected_resource {
        Some("resource must be the MCP server's URL")
    } else if get("state").is_empty() {
        Some("no state")
    } else {
        None
    };
    if let Some(problem) = problem {
        return MockReply {
            status: "400 Bad Request".into(),
            headers: Vec::new(),
            body: problem.as_bytes().to_vec(),
        };
    }
    let code = format!("code-{:016x}", fastrand::u64(..));
    state.ledger.locked().codes.insert(
        code.clone(),
        PendingCode {
            client_id,
            redirect_uri: redirect_uri.clone(),
            challenge: get("code_challenge"),
            resource: get("resource"),
        },
    );
    let mut back = url::Url::parse(&redirect_uri).expect("a registered redirect is a URL");
    back.query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &get("state"));
    MockReply {
        status: "302 Found".into(),
        headers: vec![("location".into(), back.to_string())],
        body: Vec::new(),
    }
}

fn token(state: &OAuthMockState, request: &Received) -> MockReply {
    let form = request.form(&request.body);
    let get = |name: &str| form.get(name).cloned().unwrap_or_default();
    let mut ledger = state.ledger.locked();
    match get("grant_type").as_str() {
        "authorization_code" => {
            let Some(pending) = ledger.codes.remove(&get("code")) else {
                return oauth_error("invalid_grant", "unknown or used code");
            };
            let verified = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(Sha256::digest(get("code_verifier").as_bytes()))
                == pending.challenge;
            if !verified {
                return oauth_error("invalid_grant", "the code verifier does not match");
            }
            if get("client_id") != pending.client_id
                || get("redirect_uri") != pending.redirect_uri
                || get("resource") != pending.resource
            {
                return oauth_error("invalid_grant", "client, redirect or resource differ");
            }
        }
        "refresh_token" => {
            let presented = get("refresh_token");
            let Some(at) = ledger.refreshable.iter().position(|t| *t == presented) else {
                return oauth_error("invalid_grant", "unknown refresh token");
            };
            // Rotated: the old one is spent.
            ledger.refreshable.remove(at);
            state.refreshes.fetch_add(1, Ordering::SeqCst);
        }
        _ => return oauth_error("unsupported_grant_type", "no such grant"),
    }
    let n = state.serial.fetch_add(1, Ordering::SeqCst) + 1;
    let access = format!("mock-access-{n}-{:016x}", fastrand::u64(..));
    let refresh = format!("mock-refresh-{n}-{:016x}", fastrand::u64(..));
    ledger.live.push(access.clone());
    ledger.refreshable.push(refresh.clone());
    ledger.access_issued.push(access.clone());
    ledger.refresh_issued.push(refresh.clone());
    reply_json(
        "200 OK",
        &json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": state.expires_in,
            "refresh_token": refresh,
            "scope": "mcp:tools",
        }),
    )
}

/// The protected endpoint: a live token, or 401 naming the metadata; then the MCP server's
/// answer, passed on.
async fn mcp(state: &OAuthMockState, request: &Received) -> MockReply {
    let authorization = request.header("authorization").map(str::to_string);
    let live = {
        let mut ledger = state.ledger.locked();
        ledger.mcp_authorizations.push(authorization.clone());
        authorization
            .as_deref()
            .and_then(|h| h.strip_prefix("Bearer "))
            .is_some_and(|t| ledger.live.iter().any(|l| l == t))
    };
    if !live {
        return MockReply {
            status: "401 Unauthorized".into(),
            headers: vec![(
                "www-authenticate".into(),
                format!(
                    "Bearer error=\"invalid_token\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\"",
                    state.base
                ),
            )],
            body: b"a token is required".to_vec(),
        };
    }
    let method = reqwest::Method::from_bytes(request.method.as_bytes()).unwrap_or_default();
    let mut onward = state
        .http
        .request(method, &state.upstream)
        .body(request.body.clone());
    for (name, value) in &request.headers {
        if !matches!(
            name.as_str(),
            "authorization" | "host" | "content-length" | "connection"
        ) {
            onward = onward.header(name, value);
        }
    }
    let Ok(response) = onward.send().await else {
        return MockReply {
            status: "502 Bad Gateway".into(),
            headers: Vec::new(),
            body: Vec::new(),
        };
    };
    let status = response.status();
    let headers: Vec<(String, String)> = response
        .headers()
        .iter()
        .filter(|(name, _)| matches!(name.as_str(), "content-type" | "mcp-session-id"))
        .filter_map(|(name, value)| Some((name.to_string(), value.to_str().ok()?.to_string())))
        .collect();
    let body = response
        .bytes()
        .await
        .map(|b| b.to_vec())
        .unwrap_or_default();
    MockReply {
        status: format!(
            "{} {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        ),
        headers,
        body,
    }
}

/// One request: the head, then `Content-Length` bytes of body.
async fn read(socket: &mut TcpStream) -> std::io::Result<Option<Received>> {
    let Some(request) = super::accept::read_request(socket, 64 * 1024).await? else {
        return Ok(None);
    };
    let (path, query) = request.path_and_query();
    Ok(Some(Received {
        path: path.to_string(),
        query: query.to_string(),
        method: request.method,
        headers: request.headers,
        body: request.body,
    }))
}
