//! Figures of the web tools and the HTTP stack: the time the egress checks add to a local
//! fetch (the egress client vs. a plain reqwest GET of the same page, and the checker alone),
//! peak RSS while fetching a 10 MiB page, HTML-to-markdown time for a 1 MiB page, and issue
//! 19's time to fail on a refused connection, a bad certificate and a silent server.
//! Run with `cargo bench --bench web`; figures are printed, nothing asserted. Short: a few
//! seconds in all (the silent server is given a 1 s first-byte timeout).
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use cairn::process;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use cairn::llm::{
    ChatMessage, ChatModel, ChatRequest, HttpModel, ProviderSettings, StreamDelta, WireMessages,
};
use cairn::net::{Network, NetworkFile, NetworkSettings};
use cairn::testing::mock_site::{MockSite, Page};
use cairn::tools::web_fetch::WebFetch;
use cairn::tools::{Tool, ToolCx, ToolEnv};
use cairn::web::client::DirectStack;
use cairn::web::egress::{EgressPolicy, Route};
use cairn::web::resolve::MapResolver;
use cairn::web::target::Target;
use cairn::web::{WebEnv, WebSettings};

/// The peak resident memory of this process so far (`VmHWM`), in bytes.
fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn tools(site: &MockSite, max_bytes: u64, dir: &std::path::Path) -> Arc<ToolEnv> {
    let settings = WebSettings {
        allow_private: vec![site.host_port()],
        max_bytes,
        ..WebSettings::default()
    };
    let web = WebEnv::new(
        settings,
        Arc::new(MapResolver::new()),
        Arc::new(DirectStack),
    )
    .unwrap();
    Arc::new(
        ToolEnv::new(
            dir.to_path_buf(),
            &cairn::dirs::Dirs::from_env(),
            process::Settings::default(),
        )
        .with_web(web),
    )
}

async fn fetch(env: &Arc<ToolEnv>, url: &str) -> usize {
    let args = json!({ "url": url });
    let cx = ToolCx::new(Arc::clone(env));
    let cx = cx.clone().passing(WebFetch.access(&args, &cx).unwrap());
    let out = WebFetch.run(args, &cx).await.unwrap();
    out.model_text().len()
}

/// Peak RSS around one fetch of a 10 MiB page (first, so earlier work does not set the peak).
async fn peak_rss_of_a_10_mib_fetch() {
    let site = MockSite::start().await;
    site.route("/big", Page::large(10 << 20, "text/plain"));
    let dir = tempfile::tempdir().unwrap();
    let env = tools(&site, 11 << 20, dir.path());
    let before = peak_rss();
    let started = Instant::now();
    let chars = fetch(&env, &site.url("/big")).await;
    let took = started.elapsed();
    let after = peak_rss();
    println!(
        "10 MiB page through web_fetch: {:.0} ms, peak RSS {:.1} MiB before, {:.1} MiB after (+{:.1} MiB); {chars} chars to the model",
        took.as_secs_f64() * 1000.0,
        mib(before),
        mib(after),
        mib(after.saturating_sub(before))
    );
}

/// The egress client (resolve, check, pinned client per hop, manual redirects) against a plain
/// shared reqwest client, for the same small local page.
async fn egress_overhead() {
    let site = MockSite::start().await;
    let body = "<html><body><article><h1>t</h1><p>small page</p></article></body></html>";
    site.route("/p", Page::html(body));
    let policy = EgressPolicy::new(&[site.host_port()]).unwrap();
    let client = cairn::web::client::EgressClient::new(
        policy,
        Arc::new(MapResolver::new()),
        Arc::new(DirectStack),
    );
    let target = Target::parse(&site.url("/p")).unwrap();
    let request = cairn::web::client::EgressRequest::get(target.clone());
    let plain = reqwest::Client::builder().no_proxy().build().unwrap();
    const N: u32 = 300;
    for _ in 0..20 {
        let _ = plain
            .get(site.url("/p"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await;
    }
    let started = Instant::now();
    for _ in 0..N {
        let _ = plain
            .get(site.url("/p"))
            .send()
            .await
            .unwrap()
            .bytes()
            .await;
    }
    let plain_each = started.elapsed() / N;
    let started = Instant::now();
    for _ in 0..N {
        match client.send(&request, &|_| true).await.unwrap() {
            cairn::web::client::Reply::Response(opened) => {
                opened.read_body(1 << 20).await.unwrap();
            }
            cairn::web::client::Reply::Unfollowed { .. } => unreachable!(),
        }
    }
    let egress_each = started.elapsed() / N;
    println!(
        "local fetch of a small page: plain shared reqwest client {:.0} µs, egress client {:.0} µs (+{:.0} µs: the check, and a fresh pinned client and connection per hop)",
        plain_each.as_secs_f64() * 1e6,
        egress_each.as_secs_f64() * 1e6,
        (egress_each.as_secs_f64() - plain_each.as_secs_f64()) * 1e6
    );

    // The checker alone: a name with a public and a private answer, and a literal.
    let policy = EgressPolicy::default();
    let resolver = MapResolver::new().with(
        "mixed.example",
        &[
            IpAddr::V4(Ipv4Addr::new(93, 184, 216, 34)),
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        ],
    );
    let named = Target::parse("https://mixed.example/").unwrap();
    let literal = Target::parse("https://93.184.216.34/").unwrap();
    const M: u32 = 100_000;
    let started = Instant::now();
    for _ in 0..M {
        let _ = policy.check(&named, &resolver, Route::Direct, false).await;
        let _ = policy
            .check(&literal, &resolver, Route::Direct, false)
            .await;
    }
    println!(
        "egress check alone (map resolver, every answer judged): {:.2} µs per check",
        started.elapsed().as_secs_f64() * 1e6 / f64::from(2 * M)
    );
}

fn article_html(bytes: usize) -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>Big</title><style>p{color:red}</style><script>var x=1;</script></head><body><nav><a href='/'>Home</a></nav><article><h1>A long article</h1>",
    );
    let mut section = 0;
    while html.len() < bytes {
        section += 1;
        html.push_str(&format!(
            "<h2>Section {section}</h2><p>The <a href=\"/docs/{section}\">toml crate</a> reads a configuration file into your own types with serde, and its errors name the line and the column of the mistake.</p><pre><code>let config: Config = toml::from_str(text)?; // {section}</code></pre><ul><li>one</li><li>two</li></ul>"
        ));
    }
    html.push_str("</article><footer>f</footer></body></html>");
    html
}

fn html_to_markdown() {
    let html = article_html(1 << 20);
    let _ = cairn::web::page::html_to(&html, "https://example.org/a", Default::default());
    const RUNS: u32 = 5;
    let started = Instant::now();
    let mut out = 0;
    for _ in 0..RUNS {
        out = cairn::web::page::html_to(&html, "https://example.org/a", Default::default())
            .text
            .len();
    }
    println!(
        "HTML to markdown, {:.2} MiB article: {:.0} ms per page ({} bytes of markdown)",
        mib(html.len() as u64),
        started.elapsed().as_secs_f64() * 1000.0 / f64::from(RUNS),
        out
    );
}

fn provider(base_url: String) -> ProviderSettings {
    ProviderSettings {
        provider: "custom".into(),
        base_url,
        api_key: None,
        model: "m".into(),
        max_retries: 5,
        initial_backoff: Duration::from_millis(500),
        max_backoff: Duration::from_secs(8),
        idle_timeout: Duration::from_secs(300),
        max_tokens: None,
        temperature: None,
        limits: Default::default(),
        wire: Default::default(),
    }
}

async fn time_to_fail(what: &str, base_url: String, network: &Network) {
    let model = HttpModel::with_network(provider(base_url), network).unwrap();
    let messages = WireMessages::from(vec![ChatMessage::User {
        content: "hi".into(),
    }]);
    let mut retries = 0;
    let mut sink = |d: StreamDelta| {
        if matches!(d, StreamDelta::Retrying { .. }) {
            retries += 1;
        }
    };
    let started = Instant::now();
    let result = model
        .stream_chat(
            ChatRequest {
                messages: &messages,
                tools: &[],
            },
            &mut sink,
            &CancellationToken::new(),
        )
        .await;
    println!(
        "time to fail, {what}: {:.2} s, {retries} retr{} ({})",
        started.elapsed().as_secs_f64(),
        if retries == 1 { "y" } else { "ies" },
        if result.is_err() {
            "failed"
        } else {
            "succeeded?"
        }
    );
}

async fn failures() {
    let default = Network::new(NetworkSettings::default()).unwrap();
    // Refused: a port where nothing listens.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    time_to_fail(
        "refused connection",
        format!("http://127.0.0.1:{port}/v1"),
        &default,
    )
    .await;

    // A bad certificate: a TLS server whose certificate no trusted CA signed.
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
    )
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let tls_port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = acceptor.accept(socket).await;
            });
        }
    });
    time_to_fail(
        "bad certificate",
        format!("https://localhost:{tls_port}/v1"),
        &default,
    )
    .await;

    // A silent server: accepts, never answers. The first-byte limit applies to loopback only
    // when set, so it is set (1 s) as `[network] local_first_byte_timeout_secs`.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_addr: SocketAddr = silent.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let file = NetworkFile {
        local_first_byte_timeout_secs: Some(1),
        ..NetworkFile::default()
    };
    let bounded = Network::new(NetworkSettings::from_config(&file, &|_| None).unwrap()).unwrap();
    time_to_fail(
        "silent server (first-byte timeout 1 s)",
        format!("http://{silent_addr}/v1"),
        &bounded,
    )
    .await;
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        peak_rss_of_a_10_mib_fetch().await;
        egress_overhead().await;
        html_to_markdown();
        failures().await;
    });
}
