//! Language servers (SPEC §11.10) against the scripted server (`mock-lsp`): the diagnostics
//! an edit introduced, never an older version's, "pending" and the late note, pre-existing
//! errors counted, crashes restarted twice then reported, nothing left running, the sandbox,
//! the `lsp` tool's locations, a command's changes sent to the server. `cairn exec` end to
//! end is in `lsp_session`, real servers (where installed) in `lsp_real`.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::support::cairn_cmd::{Sandbox, alive, eventually};
use cairn::lsp::ops::{Ask, LspOp};
use cairn::lsp::{Lsp, LspSettings, LspState, ServerOrigin, ServerSpec};
use cairn::process;
use cairn::testing::mock_lsp::{MockLocation, MockLspScript};

pub(crate) const MOCK: &str = env!("CARGO_BIN_EXE_mock-lsp");

pub(crate) struct Setup {
    ws: tempfile::TempDir,
    _script: tempfile::TempDir,
    pub(crate) lsp: Lsp,
}

impl Setup {
    pub(crate) fn new(script: &MockLspScript, wait_ms: u64) -> Self {
        Self::with_settings(script, wait_ms, process::Settings::default())
    }

    fn with_settings(script: &MockLspScript, wait_ms: u64, process: process::Settings) -> Self {
        let ws = tempfile::tempdir().unwrap();
        Self::in_workspace(ws, script, wait_ms, process)
    }

    fn in_workspace(
        ws: tempfile::TempDir,
        script: &MockLspScript,
        wait_ms: u64,
        process: process::Settings,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let script_path = dir.path().join("script.json");
        std::fs::write(&script_path, serde_json::to_string(script).unwrap()).unwrap();
        let workspace = std::fs::canonicalize(ws.path()).unwrap();
        let spec = ServerSpec {
            name: "mock".into(),
            command: MOCK.into(),
            args: vec![script_path.display().to_string()],
            extensions: vec!["mk".into()],
            root_markers: Vec::new(),
            init_options: None,
            origin: ServerOrigin::User,
        };
        let lsp = Lsp::new(LspSettings {
            workspace,
            process,
            wait: Duration::from_millis(wait_ms),
            warnings: false,
            servers: vec![Arc::new(spec)],
            missing: Vec::new(),
        })
        .unwrap();
        Self {
            ws,
            _script: dir,
            lsp,
        }
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        std::fs::canonicalize(self.ws.path()).unwrap().join(rel)
    }

    /// Writes `text` to `rel` as a write tool would, and returns the block for its result.
    async fn write(&self, rel: &str, text: &str) -> String {
        let path = self.path(rel);
        let before = std::fs::read_to_string(&path).ok();
        std::fs::write(&path, text).unwrap();
        self.lsp
            .after_write(&path, rel, before, text.to_string())
            .await
            .unwrap_or_default()
    }
}

#[tokio::test]
async fn an_edit_that_introduces_an_error_gets_it_with_path_line_col() {
    let setup = Setup::new(&MockLspScript::default(), 5000);
    let first = setup.write("a.mk", "fine\n").await;
    assert!(first.contains("mock, version 1: no new errors"), "{first}");
    let second = setup
        .write("a.mk", "fine\n  x ERROR: undefined name y\n")
        .await;
    assert!(
        second.contains("[mock, version 2: 1 new error]\na.mk:2:5 error E1 undefined name y"),
        "{second}"
    );
    // A file of a language without a server gets nothing.
    assert_eq!(setup.write("b.txt", "ERROR: no\n").await, "");
    setup.lsp.shutdown().await;
}

#[tokio::test]
async fn a_diagnostic_of_the_previous_version_is_never_shown_as_current() {
    // Versioned: after version 2's diagnostics the server sends version 1's again.
    let script = MockLspScript {
        stale: true,
        ..MockLspScript::default()
    };
    let setup = Setup::new(&script, 5000);
    setup.write("a.mk", "ERROR: old problem\n").await;
    let text = setup.write("a.mk", "ERROR: new problem\n").await;
    assert!(text.contains("new problem"), "{text}");
    assert!(!text.contains("old problem"), "{text}");
    setup.lsp.shutdown().await;

    // Unversioned (as typescript-language-server): the late ones from opening come first,
    // soon after the change (150 ms), and the change's own more than the settling time
    // later (600 ms), as measured on the real server.
    let script = MockLspScript {
        stale: true,
        unversioned: true,
        delays_ms: vec![0, 600],
        ..MockLspScript::default()
    };
    let setup = Setup::new(&script, 5000);
    let first = setup.write("a.mk", "ERROR: from opening\n").await;
    assert!(first.contains("from opening"), "{first}");
    let text = setup.write("a.mk", "ERROR: after the change\n").await;
    assert!(text.contains("after the change"), "{text}");
    assert!(!text.contains("from opening"), "{text}");
    setup.lsp.shutdown().await;
}

#[tokio::test]
async fn a_late_server_makes_the_result_pending_and_the_next_step_gets_a_note() {
    let script = MockLspScript {
        delays_ms: vec![0, 1500],
        ..MockLspScript::default()
    };
    let setup = Setup::new(&script, 300);
    // The first write starts the server; give it the time it needs.
    setup.write("a.mk", "fine\n").await;
    setup.lsp.settle_pending(Duration::from_secs(10)).await;
    let _ = setup.lsp.take_late_notes();
    let text = setup.write("a.mk", "fine\nERROR: late one\n").await;
    assert!(text.contains("[diagnostics pending"), "{text}");
    assert!(!text.contains("late one"), "{text}");
    assert_eq!(setup.lsp.take_late_notes(), None, "nothing came yet");
    setup.lsp.settle_pending(Duration::from_secs(10)).await;
    let note = setup.lsp.take_late_notes().unwrap();
    assert!(
        note.contains("pending for your edit of a.mk")
            && note.contains("a.mk:2:1 error E1 late one"),
        "{note}"
    );
    assert_eq!(setup.lsp.take_late_notes(), None, "a note is given once");
    setup.lsp.shutdown().await;
}

#[tokio::test]
async fn pre_existing_errors_are_counted_not_listed() {
    let setup = Setup::new(&MockLspScript::default(), 5000);
    std::fs::write(setup.path("a.mk"), "ERROR: was here\n").unwrap();
    // The first edit of a file the server does not have yet: it is opened as it was.
    let text = setup
        .write("a.mk", "ERROR: was here\nok\nERROR: brand new\n")
        .await;
    assert!(
        text.contains("1 new error]\na.mk:3:1 error E1 brand new"),
        "{text}"
    );
    assert!(!text.contains("was here"), "{text}");
    assert!(text.contains("(1 was there before the edit)"), "{text}");
    let text = setup.write("a.mk", "ERROR: was here\nok\n").await;
    assert!(
        text.contains("no new errors; 1 was there before the edit]"),
        "{text}"
    );
    setup.lsp.shutdown().await;
}

#[tokio::test]
async fn pull_diagnostics_are_used_when_registered_dynamically() {
    let script = MockLspScript {
        pull: true,
        ..MockLspScript::default()
    };
    let setup = Setup::new(&script, 5000);
    setup.write("a.mk", "ok\n").await;
    let text = setup.write("a.mk", "ok\nERROR: pulled\n").await;
    assert!(text.contains("a.mk:2:1 error E1 pulled"), "{text}");
    setup.lsp.shutdown().await;
}

#[tokio::test]
async fn a_crashing_server_is_restarted_twice_then_reported_and_left_off() {
    let setup = Setup::new(&MockLspScript::default(), 5000);
    setup.write("a.mk", "ok\n").await;
    let first = setup.write("a.mk", "CRASH 1\n").await;
    assert!(
        first.contains("restarted (1 of 2 restarts used)"),
        "{first}"
    );
    let second = setup.write("a.mk", "CRASH 2\n").await;
    assert!(
        second.contains("restarted (2 of 2 restarts used)"),
        "{second}"
    );
    let third = setup.write("a.mk", "CRASH 3\n").await;
    assert!(
        third.contains("crashed 3 times and is left off for this session"),
        "{third}"
    );
    let status = &setup.lsp.statuses()[0];
    assert!(
        matches!(&status.state, LspState::Failed(why) if why.contains("crashed 3 times")),
        "{status:?}"
    );
    let after = setup.write("a.mk", "ok again\n").await;
    assert!(after.contains("mock is off"), "{after}");
    setup.lsp.shutdown().await;
}

#[tokio::test]
async fn no_server_process_survives_the_session() {
    let pids = tempfile::tempdir().unwrap();
    let pids_file = pids.path().join("pids");
    let script = MockLspScript {
        pids_file: Some(pids_file.clone()),
        ..MockLspScript::default()
    };
    let setup = Setup::new(&script, 5000);
    setup.write("a.mk", "ok\n").await;
    eventually("the server's pids", || {
        std::fs::read_to_string(&pids_file).is_ok_and(|t| t.ends_with('\n'))
    })
    .await;
    let text = std::fs::read_to_string(&pids_file).unwrap();
    let pids: Vec<i32> = text
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|&p| alive(p)), "{pids:?}");
    setup.lsp.shutdown().await;
    eventually("the server and its child to end", || {
        pids.iter().all(|&p| !alive(p))
    })
    .await;
}

/// The workspace-write sandbox with the network off, whatever the session's commands may do;
/// its own cache (`XDG_CACHE_HOME`) it may write.
#[tokio::test]
async fn a_server_is_refused_the_network_and_writes_outside_the_workspace() {
    if !crate::sandbox::landlock("a_server_is_refused_the_network_and_writes_outside_the_workspace")
    {
        return;
    }
    let Some(outside) = crate::support::cairn_cmd::try_dir_outside_temp(
        "a_server_is_refused_the_network_and_writes_outside_the_workspace",
    ) else {
        return;
    };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let ws = tempfile::tempdir().unwrap();
    let workspace = std::fs::canonicalize(ws.path()).unwrap();
    // A server reaches the workspace's entries (not new top-level ones): the report goes
    // into a directory that exists.
    std::fs::create_dir(workspace.join("out")).unwrap();
    let report = workspace.join("out/probe.txt");
    let target = outside.path().join("planted.txt");
    let script = MockLspScript {
        probe_connect: Some(address),
        probe_write: Some(target.clone()),
        probe_report: Some(report.clone()),
        ..MockLspScript::default()
    };
    // The session's commands may use the network; its language servers still may not.
    let settings = process::Settings {
        sandbox: Some(process::SandboxPolicy {
            workspace: workspace.clone(),
            writable: Vec::new(),
            network: true,
            unix_sockets: Vec::new(),
            deny_read: cairn::secret_stores::SecretStores::from_env(&[], &[]).unwrap(),
        }),
        ..process::Settings::default()
    };
    let setup = Setup::in_workspace(ws, &script, 5000, settings);
    setup.write("out/a.mk", "ok\n").await;
    eventually("the server's probe report", || {
        std::fs::read_to_string(&report).is_ok_and(|t| t.contains("write:"))
    })
    .await;
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.contains("connect: refused"), "{text}");
    assert!(text.contains("write: refused"), "{text}");
    assert!(!target.exists());
    // Its own cache, writable, neither in the workspace nor in the user's home.
    let cache = text
        .lines()
        .find_map(|l| l.strip_prefix("cache: ok "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        cache.contains("cairn-lsp-") && !Path::new(cache).starts_with(&workspace),
        "{text}"
    );
    assert!(Path::new(cache).join("probe").exists(), "{text}");
    assert!(
        listener.accept().is_err(),
        "no connection reached the listener"
    );
    setup.lsp.shutdown().await;
}

#[tokio::test]
async fn lsp_definition_and_references_return_the_scripted_locations() {
    let script = MockLspScript {
        definition: vec![MockLocation {
            path: "lib.mk".into(),
            line: 1,
            character: 4,
        }],
        references: vec![
            MockLocation {
                path: "lib.mk".into(),
                line: 1,
                character: 4,
            },
            MockLocation {
                path: "main.mk".into(),
                line: 0,
                character: 0,
            },
        ],
        ..MockLspScript::default()
    };
    let setup = Setup::new(&script, 5000);
    std::fs::write(setup.path("lib.mk"), "// lib\nfn greet() {}\n").unwrap();
    std::fs::write(setup.path("main.mk"), "greet()\n").unwrap();
    let ask = |op| Ask {
        op,
        path: Some(setup.path("main.mk")),
        line: Some(1),
        column: Some(1),
        query: None,
    };
    let definition = setup.lsp.ask(&ask(LspOp::Definition)).await.unwrap();
    assert_eq!(definition, "lib.mk:2:5  fn greet() {}");
    let references = setup.lsp.ask(&ask(LspOp::References)).await.unwrap();
    assert_eq!(
        references,
        "lib.mk:2:5  fn greet() {}\nmain.mk:1:1  greet()"
    );
    let no_server = Ask {
        path: Some(setup.path("x.zz")),
        ..ask(LspOp::Definition)
    };
    let err = setup.lsp.ask(&no_server).await.unwrap_err();
    assert!(err.starts_with("no language server for x.zz"), "{err}");
    setup.lsp.shutdown().await;
}

#[tokio::test]
async fn a_server_that_cannot_initialise_is_reported_and_left_off() {
    let script = MockLspScript {
        fail_init: true,
        ..MockLspScript::default()
    };
    let setup = Setup::new(&script, 5000);
    let text = setup.write("a.mk", "ok\n").await;
    assert!(
        text.contains("[diagnostics unavailable: mock is off: initialize failed"),
        "{text}"
    );
    assert!(matches!(setup.lsp.statuses()[0].state, LspState::Failed(_)));
    setup.lsp.shutdown().await;
}

/// `cairn lsp list`: the configured server with its files, one that is not installed and
/// why, the sandbox, the log path.
#[tokio::test]
async fn lsp_list_names_each_server_its_state_and_why_one_does_not_run() {
    let config = format!(
        "[lsp.mock]\ncommand = '{MOCK}'\nlanguages = ['mk']\n[lsp.gone]\ncommand = 'no-such-language-server'\nlanguages = ['zz']\n"
    );
    let sb = Sandbox::new().config(&config);
    let (code, out, err) = sb.exec_raw_sync(&["lsp", "list"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("mock: idle [.mk] {MOCK}")), "{out}");
    assert!(
        out.contains("gone: failed: no-such-language-server is not installed (not on PATH); cairn never downloads one"),
        "{out}"
    );
    assert!(out.contains("network off"), "{out}");
    assert!(out.contains("log: "), "{out}");
}

/// A command that changed an open file (a formatter): its new content reaches the server
/// (`didChange`), and the server's diagnostics follow it, with no edit by the model.
#[tokio::test]
async fn a_file_a_command_changed_is_sent_to_the_server() {
    let setup = Setup::new(&MockLspScript::default(), 5000);
    setup.write("a.mk", "ok\n").await;
    std::fs::write(setup.path("a.mk"), "ok\nERROR: from the formatter\n").unwrap();
    setup.lsp.files_changed().await;
    let all = Ask {
        op: LspOp::Diagnostics,
        path: None,
        line: None,
        column: None,
        query: None,
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let text = setup.lsp.ask(&all).await.unwrap();
        if text.contains("a.mk:2:1 error E1 from the formatter") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{text}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    setup.lsp.shutdown().await;
}
