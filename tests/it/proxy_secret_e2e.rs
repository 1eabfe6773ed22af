//! The real binary behind an authenticating proxy: `cairn exec` reaches the (TLS-fronted) mock
//! only through a CONNECT proxy given as `HTTPS_PROXY=http://user:SECRET@…`, and trusts the
//! front through `[network] ca_file`. The model runs a command granted the network and one
//! without. The password appears in no file under HOME (session log, logs, config), in no
//! output, and in no command's environment unless `[bash] pass_env` lists the variable;
//! the command granted the network gets the proxy (without credentials) and the CA bundle.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::cairn_cmd::{Run, Sandbox};
use crate::support::net_servers::{Proxy, TestCa, connect_proxy, tls_front};
use cairn::process::sandbox::{LandlockStatus, landlock_status};
use cairn::testing::{MockLlm, Script};

const PASSWORD: &str = "Pr0xyPassw0rd-e2e";
const GRANTED: &str = "env > granted.env && cat \"$SSL_CERT_FILE\" > bundle.pem";

/// Every file under `root` whose bytes contain `needle`, except `skip`.
fn files_containing(root: &Path, needle: &str, skip: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && !skip.contains(&path)
                && std::fs::read(&path)
                    .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                found.push(path);
            }
        }
    }
    found
}

struct Corp {
    llm: MockLlm,
    proxy: Proxy,
    ca: TestCa,
}

/// The mock behind TLS for `api.corp.test`, reachable only through the proxy.
async fn corp(scripts: Vec<Script>) -> Corp {
    let llm = MockLlm::start(scripts).await;
    let ca = TestCa::new("Corp Proxy CA");
    let front = tls_front(
        ca.server_config(&["api.corp.test"]),
        SocketAddr::from(([127, 0, 0, 1], llm.port())),
    )
    .await;
    let proxy = connect_proxy(Some(("alice", PASSWORD)), front).await;
    Corp { llm, proxy, ca }
}

async fn run(sb: &Sandbox, corp: &Corp, extra_config: &str) -> Run {
    std::fs::write(sb.path("corp-ca.pem"), &corp.ca.pem).unwrap();
    let config = format!(
        "context_window = 64000\n\
         [network]\nca_file = {:?}\n\
         [sandbox]\nenabled = true\nnetwork = true\n{extra_config}",
        sb.path("corp-ca.pem").to_str().unwrap()
    );
    std::fs::write(sb.path("corp.toml"), config).unwrap();
    let proxy_url = format!("http://alice:{PASSWORD}@{}", corp.proxy.addr);
    let config_path = sb.path("corp.toml");
    sb.exec_raw(
        &[
            "exec",
            "--base-url",
            "https://api.corp.test/v1",
            "--mode",
            "auto",
            "--config",
            config_path.to_str().unwrap(),
            "run them",
        ],
        &[("HTTPS_PROXY", &proxy_url), ("CAIRN_API_KEY", "sk-test")],
    )
    .await
}

fn scripts() -> Vec<Script> {
    vec![
        Script::tool_call("c1", "bash", json!({ "command": GRANTED })),
        // Judged read-only: it runs in the read-only sandbox, without the network.
        Script::tool_call("c2", "bash", json!({ "command": "env" })),
        Script::text("done"),
    ]
}

fn landlock() -> bool {
    !matches!(landlock_status(), LandlockStatus::Unavailable(_))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_password_reaches_no_file_no_output_and_no_command_unless_pass_env_lists_it() {
    let sb = Sandbox::new();
    let corp = corp(scripts()).await;
    let out = run(&sb, &corp, "").await;
    assert_eq!(
        out.code, 0,
        "stdout: {}\nstderr: {}",
        out.stdout, out.stderr
    );
    assert!(out.stdout.contains("done"), "{}", out.stdout);

    // The model was reached through the proxy, with the credentials.
    let log = corp.proxy.log();
    assert!(log.connections >= 1);
    assert!(
        log.targets.iter().all(|t| t == "api.corp.test:443"),
        "{log:?}"
    );
    assert!(
        log.credentials
            .iter()
            .all(|c| *c == format!("alice:{PASSWORD}"))
    );

    // Nowhere on disk under HOME, nowhere in what cairn printed.
    let home = sb.workspace().parent().unwrap().to_path_buf();
    assert_eq!(
        files_containing(&home, PASSWORD, &[]),
        Vec::<PathBuf>::new()
    );
    assert!(!out.stdout.contains(PASSWORD) && !out.stderr.contains(PASSWORD));

    // The command granted the network: the proxy without its password, and the CA bundle
    // (the system store plus the corporate CA) in every variable tools read.
    let granted = sb.read("granted.env");
    let bare = format!("http://{}", corp.proxy.addr);
    for name in ["HTTPS_PROXY", "https_proxy"] {
        assert!(
            granted.contains(&format!("{name}={bare}\n")),
            "{name}: {granted}"
        );
    }
    for name in [
        "SSL_CERT_FILE",
        "NODE_EXTRA_CA_CERTS",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "GIT_SSL_CAINFO",
    ] {
        assert!(granted.contains(&format!("{name}=")), "{name}: {granted}");
    }
    let bundle = sb.read("bundle.pem");
    let corp_ca: String = corp
        .ca
        .pem
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect();
    assert!(
        bundle.lines().collect::<String>().contains(&corp_ca),
        "the corporate CA is not in the bundle"
    );
    // The command without the network: no proxy and no CA variable of cairn's.
    if landlock() {
        let denied = corp.llm.tool_result(2, "c2").unwrap();
        // (The machine's own CA variables may be there; cairn's bundle may not.)
        for absent in ["HTTPS_PROXY", "https_proxy", "cairn-ca-"] {
            assert!(!denied.contains(absent), "{absent}: {denied}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_pass_env_listing_https_proxy_only_the_command_granted_the_network_gets_the_password()
{
    let sb = Sandbox::new();
    let corp = corp(scripts()).await;
    let out = run(&sb, &corp, "[bash]\npass_env = [\"HTTPS_PROXY\"]\n").await;
    assert_eq!(
        out.code, 0,
        "stdout: {}\nstderr: {}",
        out.stdout, out.stderr
    );
    let granted = sb.read("granted.env");
    let full = format!("HTTPS_PROXY=http://alice:{PASSWORD}@{}", corp.proxy.addr);
    assert!(granted.contains(&full), "{granted}");
    // Only the listed name carries it.
    assert!(
        granted.contains(&format!("https_proxy=http://{}\n", corp.proxy.addr)),
        "{granted}"
    );
    // What the command wrote is the user's file; everything else under HOME stays clean,
    // and the tool output the model saw is redacted.
    let home = sb.workspace().parent().unwrap().to_path_buf();
    assert_eq!(
        files_containing(&home, PASSWORD, &[sb.path("granted.env")]),
        Vec::<PathBuf>::new()
    );
    assert!(!out.stdout.contains(PASSWORD) && !out.stderr.contains(PASSWORD));
    if landlock() {
        let denied = corp.llm.tool_result(2, "c2").unwrap();
        assert!(!denied.contains("HTTPS_PROXY"), "{denied}");
    }
}
