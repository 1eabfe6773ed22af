//! The web tools on the one HTTP stack, against servers started here on 127.0.0.1: a fetch
//! through a CONNECT proxy that wants a password (from `HTTPS_PROXY` and from
//! `[network] proxy`), an https site trusted through `[network] ca_file`, SOCKS5 with the
//! address pinned and SOCKS5h with the name left to the proxy, and the egress checks that
//! still hold through a proxy: literal private addresses, names that resolve here to private
//! addresses, and redirects to them never reach the proxy.
#![allow(clippy::unwrap_used)]

use cairn::process;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::support::net_servers::{TestCa, closed_port, connect_proxy, socks5_server, tls_front};
use cairn::net::{Network, NetworkFile, NetworkSettings, OneOrMany};
use cairn::testing::mock_site::{MockSite, Page};
use cairn::tool_output::ToolOutput;
use cairn::tools::web_fetch::WebFetch;
use cairn::tools::{HostCheck, Tool, ToolCx, ToolEnv, ToolError};
use cairn::web::resolve::MapResolver;
use cairn::web::{WebEnv, WebSettings};

const PASSWORD: &str = "pr0xy-S3CRET";
const PUBLIC: IpAddr = IpAddr::V4(Ipv4Addr::new(93, 184, 216, 34));

fn env_of(pairs: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    }
}

fn network(file: NetworkFile, pairs: Vec<(&'static str, String)>) -> Network {
    Network::new(NetworkSettings::from_config(&file, &env_of(pairs)).unwrap()).unwrap()
}

struct Web {
    env: Arc<ToolEnv>,
    _dir: tempfile::TempDir,
}

fn web(settings: WebSettings, resolver: MapResolver, network: Network) -> Web {
    let dir = tempfile::tempdir().unwrap();
    let web = WebEnv::new(settings, Arc::new(resolver), Arc::new(network)).unwrap();
    let env = Arc::new(
        ToolEnv::new(
            dir.path().to_path_buf(),
            &cairn::dirs::Dirs::from_env(),
            process::Settings::default(),
        )
        .with_web(web),
    );
    Web { env, _dir: dir }
}

impl Web {
    /// A fetch whose redirects the gate would all follow: only the egress policy stops them.
    async fn fetch(&self, url: &str) -> Result<ToolOutput, ToolError> {
        let args: Value = json!({ "url": url });
        let mut cx = ToolCx::new(Arc::clone(&self.env));
        let everything: HostCheck = Arc::new(|_, _| true);
        cx.hosts = Some(everything);
        WebFetch.access(&args, &cx)?;
        WebFetch.run(args, &cx).await
    }

    async fn text(&self, url: &str) -> String {
        self.fetch(url).await.unwrap().model_text()
    }
}

/// The site behind TLS with a certificate for `names` from `ca`; the CA's PEM file in `dir`.
async fn tls_site(
    ca: &TestCa,
    names: &[&str],
    dir: &std::path::Path,
) -> (MockSite, u16, NetworkFile) {
    let site = MockSite::start().await;
    site.route(
        "/doc",
        Page::html("<html><body><p>INSIDE-THE-TUNNEL</p></body></html>"),
    );
    let front = tls_front(ca.server_config(names), site.addr()).await;
    let ca_path = dir.join("corp-ca.pem");
    std::fs::write(&ca_path, &ca.pem).unwrap();
    let file = NetworkFile {
        ca_file: Some(OneOrMany::One(ca_path)),
        ..NetworkFile::default()
    };
    (site, front.port(), file)
}

#[tokio::test]
async fn a_fetch_goes_through_a_connect_proxy_with_the_password_from_https_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("Corp Gateway CA");
    let (site, front, file) = tls_site(&ca, &["docs.corp.test"], dir.path()).await;
    let proxy = connect_proxy(Some(("alice", PASSWORD)), ([127, 0, 0, 1], front).into()).await;
    let stack = network(
        file,
        vec![(
            "HTTPS_PROXY",
            format!("http://alice:{PASSWORD}@{}", proxy.addr),
        )],
    );
    // The name resolves nowhere here: only the proxy knows it.
    let web = web(WebSettings::default(), MapResolver::new(), stack);
    let text = web.text("https://docs.corp.test/doc").await;
    assert!(text.contains("INSIDE-THE-TUNNEL"), "{text}");
    let log = proxy.log();
    assert_eq!(log.targets, vec!["docs.corp.test:443"]);
    assert_eq!(log.credentials, vec![format!("alice:{PASSWORD}")]);
    assert_eq!(site.hits("/doc"), 1);
    assert!(!text.contains(PASSWORD));
}

#[tokio::test]
async fn the_configured_proxy_wins_over_https_proxy_for_the_web_tools() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("Corp Gateway CA");
    let (_site, front, file) = tls_site(&ca, &["docs.corp.test"], dir.path()).await;
    let proxy = connect_proxy(Some(("bob", PASSWORD)), ([127, 0, 0, 1], front).into()).await;
    let file = NetworkFile {
        proxy: Some(format!("http://bob:{PASSWORD}@{}", proxy.addr)),
        ..file
    };
    // The environment's proxy listens nowhere: using it would fail the fetch.
    let dead = format!("http://127.0.0.1:{}", closed_port());
    let web = web(
        WebSettings::default(),
        MapResolver::new(),
        network(file, vec![("HTTPS_PROXY", dead)]),
    );
    let text = web.text("https://docs.corp.test/doc").await;
    assert!(text.contains("INSIDE-THE-TUNNEL"), "{text}");
    assert_eq!(proxy.log().credentials, vec![format!("bob:{PASSWORD}")]);
}

#[tokio::test]
async fn a_proxy_that_refuses_the_password_is_named_as_the_proxy_and_the_password_is_not_shown() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("Corp Gateway CA");
    let (site, front, file) = tls_site(&ca, &["docs.corp.test"], dir.path()).await;
    let proxy = connect_proxy(Some(("alice", "other")), ([127, 0, 0, 1], front).into()).await;
    let stack = network(
        file,
        vec![(
            "HTTPS_PROXY",
            format!("http://alice:{PASSWORD}@{}", proxy.addr),
        )],
    );
    let web = web(WebSettings::default(), MapResolver::new(), stack);
    let err = web
        .fetch("https://docs.corp.test/doc")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("the proxy at {} (from HTTPS_PROXY)", proxy.addr)),
        "{err}"
    );
    assert!(err.contains("407"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
    assert_eq!(site.hits("/doc"), 0);
}

#[tokio::test]
async fn an_https_site_is_trusted_through_network_ca_file_and_refused_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("In-house Web CA");
    let (site, front, file) = tls_site(&ca, &["localhost"], dir.path()).await;
    let url = format!("https://localhost:{front}/doc");
    let settings = WebSettings {
        allow_private: vec![format!("localhost:{front}")],
        ..WebSettings::default()
    };
    let resolver = || MapResolver::new().with("localhost", &[IpAddr::V4(Ipv4Addr::LOCALHOST)]);

    let untrusting = web(
        settings.clone(),
        resolver(),
        network(NetworkFile::default(), vec![]),
    );
    let err = untrusting.fetch(&url).await.unwrap_err().to_string();
    for needle in [
        "localhost",
        "CN=In-house Web CA",
        "SSL_CERT_FILE",
        "ca_file",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    assert_eq!(site.hits("/doc"), 0);

    let trusting = web(settings, resolver(), network(file, vec![]));
    let text = trusting.text(&url).await;
    assert!(text.contains("INSIDE-THE-TUNNEL"), "{text}");
}

#[tokio::test]
async fn through_a_proxy_private_literals_and_names_resolving_here_to_private_addresses_are_refused()
 {
    let site = MockSite::start().await;
    let proxy = connect_proxy(None, site.addr()).await;
    let resolver = MapResolver::new()
        .with(
            "intranet.corp.test",
            &[IpAddr::V4(Ipv4Addr::new(10, 0, 0, 7))],
        )
        .with(
            "mixed.corp.test",
            &[PUBLIC, IpAddr::V4(Ipv4Addr::new(192, 168, 1, 9))],
        );
    let web = web(
        WebSettings::default(),
        resolver,
        network(
            NetworkFile::default(),
            vec![
                ("HTTPS_PROXY", format!("http://{}", proxy.addr)),
                ("HTTP_PROXY", format!("http://{}", proxy.addr)),
            ],
        ),
    );
    for url in [
        "https://10.1.2.3/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0xa9fea9fe/",
        "https://[::ffff:10.0.0.1]/",
        "https://intranet.corp.test/",
        "https://mixed.corp.test/",
    ] {
        let err = web.fetch(url).await.unwrap_err().to_string();
        assert!(
            err.contains("private") || err.contains("local"),
            "{url}: {err}"
        );
    }
    assert_eq!(proxy.log().connections, 0);
    assert_eq!(site.connections(), 0);
}

#[tokio::test]
async fn a_redirect_through_the_proxy_to_a_private_address_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("Corp Gateway CA");
    let (site, front, file) = tls_site(&ca, &["pages.corp.test"], dir.path()).await;
    site.route(
        "/go",
        Page::redirect(302, "https://169.254.169.254/latest/"),
    );
    site.route("/inner", Page::redirect(302, "https://intranet.corp.test/"));
    let proxy = connect_proxy(None, ([127, 0, 0, 1], front).into()).await;
    let resolver = MapResolver::new().with(
        "intranet.corp.test",
        &[IpAddr::V4(Ipv4Addr::new(10, 0, 0, 7))],
    );
    let web = web(
        WebSettings::default(),
        resolver,
        network(
            file,
            vec![("HTTPS_PROXY", format!("http://{}", proxy.addr))],
        ),
    );
    for path in ["/go", "/inner"] {
        let err = web
            .fetch(&format!("https://pages.corp.test{path}"))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("private") || err.contains("local"),
            "{path}: {err}"
        );
    }
    // Only the first hops went to the proxy; neither redirect target did.
    assert_eq!(
        proxy.log().targets,
        vec!["pages.corp.test:443", "pages.corp.test:443"]
    );
}

#[tokio::test]
async fn a_socks5_proxy_is_handed_the_checked_address_so_a_changed_dns_answer_cannot_win() {
    let site = MockSite::start().await;
    site.route("/page", Page::html("<p>VIA-SOCKS</p>"));
    let socks = socks5_server(site.addr()).await;
    // First answer public, every later one private: only one lookup may happen.
    let resolver = Arc::new(MapResolver::new().with_answers(
        "pages.example.test",
        vec![vec![PUBLIC], vec![IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))]],
    ));
    let stack = network(
        NetworkFile::default(),
        vec![("HTTP_PROXY", format!("socks5://{}", socks.addr))],
    );
    let env = WebEnv::new(WebSettings::default(), resolver.clone(), Arc::new(stack)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let web = Web {
        env: Arc::new(
            ToolEnv::new(
                dir.path().to_path_buf(),
                &cairn::dirs::Dirs::from_env(),
                process::Settings::default(),
            )
            .with_web(env),
        ),
        _dir: dir,
    };
    let text = web.text("http://pages.example.test/page").await;
    assert!(text.contains("VIA-SOCKS"), "{text}");
    assert_eq!(socks.log().targets, vec!["93.184.216.34:80"]);
    assert_eq!(resolver.lookups(), 1);

    // A name that resolves here to a private address never reaches the SOCKS server.
    let err = web
        .fetch("http://pages.example.test/again")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("10.0.0.1"), "{err}");
    assert_eq!(socks.log().connections, 1);
}

#[tokio::test]
async fn a_socks5h_proxy_is_given_the_name_it_alone_resolves() {
    let site = MockSite::start().await;
    site.route("/page", Page::html("<p>VIA-SOCKS5H</p>"));
    let socks = socks5_server(site.addr()).await;
    let web = web(
        WebSettings::default(),
        MapResolver::new(),
        network(
            NetworkFile::default(),
            vec![("ALL_PROXY", format!("socks5h://{}", socks.addr))],
        ),
    );
    let text = web.text("http://pages.example.test/page").await;
    assert!(text.contains("VIA-SOCKS5H"), "{text}");
    assert_eq!(socks.log().targets, vec!["pages.example.test:80"]);
}
