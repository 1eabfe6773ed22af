//! Places the file tools must not reach unasked: secrets and cairn's own data (reads, also
//! through list_dir, glob and grep), files that run code later (writes to `.git/`, `.cairn/`,
//! shell start-up files, in any spelling or through a symlink), and reads outside the
//! workspace — each as the gate sees it, in every mode.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::Ws;
use cairn::bus::Mode;
use cairn::fs::places::FilePolicy;
use cairn::permissions::policy::{PolicyGate, PolicySettings};
use cairn::permissions::rules::RuleSet;
use cairn::permissions::{PermissionGate, Verdict};
use cairn::tools::edit_file::EditFile;
use cairn::tools::glob::Glob;
use cairn::tools::grep::Grep;
use cairn::tools::list_dir::ListDir;
use cairn::tools::read_file::ReadFile;
use cairn::tools::write_file::WriteFile;
use cairn::tools::{Access, Tool};

/// A workspace inside a fake home that has keys, a start-up file and cairn's data dir.
struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
    data: PathBuf,
    ws: Ws,
}

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap();
        let data = home.join(".local/share/cairn");
        for (rel, content) in [
            (".ssh/id_rsa", "PRIVATE KEY"),
            (".aws/credentials", "aws_secret_access_key = x"),
            (".bashrc", "# rc\n"),
            (
                ".local/share/cairn/sessions/s.jsonl",
                "{\"key\":\"sk-live\"}\n",
            ),
            (".rustup/toolchains/lib.rs", "pub fn std() {}\n"),
            (".npmrc", "//registry.npmjs.org/:_authToken=npm_x\n"),
            (".pypirc", "[pypi]\npassword = pypi-x\n"),
            (".cargo/credentials.toml", "[registry]\ntoken = \"cio_x\"\n"),
            (".cargo/bin/tool", "#!/bin/sh\n"),
            (".config/hub", "github.com:\n- oauth_token: x\n"),
            (".my-vault/token", "hvs.x\n"),
            ("elsewhere/notes.txt", "notes\n"),
        ] {
            let path = home.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        let root = home.join("ws");
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        let policy = FilePolicy::new(
            Some(&home),
            std::slice::from_ref(&data),
            &[PathBuf::from("~/.rustup")],
        );
        let ws = Ws::at(root, policy);
        Self {
            _dir: dir,
            home,
            data,
            ws,
        }
    }

    fn gate(&self) -> PolicyGate {
        PolicyGate::new(PolicySettings {
            rules: RuleSet::default(),
            workspace: self.ws.root.clone(),
            sandbox: None,
            places: cairn::permissions::classify::Places::from_env(),
        })
    }

    fn access(&self, tool: &dyn Tool, args: Value) -> Access {
        tool.access(&args, &self.ws.cx).unwrap()
    }

    /// The gate's answer in each of ask, auto-edit, auto and never.
    fn outcomes(&self, tool: &dyn Tool, args: Value) -> Vec<&'static str> {
        let name = tool.spec().name;
        let access = self.access(tool, args);
        let gate = self.gate();
        [Mode::Ask, Mode::AutoEdit, Mode::Auto, Mode::Never]
            .into_iter()
            .map(|mode| match gate.check(name, &access, mode) {
                Verdict::Run => "run",
                Verdict::Ask { .. } => "ask",
                Verdict::Deny { .. } => "deny",
            })
            .collect()
    }
}

fn s(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

const ALWAYS: [&str; 4] = ["ask", "ask", "ask", "run"];

#[tokio::test]
async fn secrets_and_cairns_data_ask_in_every_mode_but_never_through_every_tool() {
    let h = Home::new();
    std::os::unix::fs::symlink(h.home.join(".ssh"), h.ws.root.join("keys")).unwrap();
    let cases: Vec<(&dyn Tool, Value)> = vec![
        (&ReadFile, json!({"path": "~/.ssh/id_rsa"})),
        (
            &ReadFile,
            json!({"path": s(&h.home.join(".ssh/../.ssh/id_rsa"))}),
        ),
        (&ReadFile, json!({"path": "../.aws/credentials"})),
        (&ReadFile, json!({"path": "keys/id_rsa"})),
        (
            &ReadFile,
            json!({"path": s(&h.data.join("sessions/s.jsonl"))}),
        ),
        (&ReadFile, json!({"path": "/proc/self/environ"})),
        (&ReadFile, json!({"path": "~/.npmrc"})),
        (&ReadFile, json!({"path": "~/.pypirc"})),
        (&ReadFile, json!({"path": "~/.cargo/credentials.toml"})),
        (&ReadFile, json!({"path": "~/.config/hub"})),
        (&ListDir, json!({"path": "~/.ssh"})),
        (&ListDir, json!({"path": s(&h.data)})),
        (&Grep, json!({"pattern": "key", "path": s(&h.data)})),
        (&Grep, json!({"pattern": "KEY", "path": "keys"})),
        (&Glob, json!({"pattern": s(&h.home.join(".ssh/*"))})),
        (&Glob, json!({"pattern": "../.aws/**"})),
        (
            &Glob,
            json!({"pattern": "*", "path": "~/.local/share/cairn/sessions"}),
        ),
    ];
    for (tool, args) in cases {
        assert_eq!(h.outcomes(tool, args.clone()), ALWAYS, "{args}");
    }
}

#[tokio::test]
async fn stores_added_by_deny_read_ask_and_toolchain_entries_do_not() {
    let h = Home::new();
    let ask_outside = ["ask", "ask", "run", "run"];
    assert_eq!(
        h.outcomes(&ReadFile, json!({"path": "~/.cargo/bin/tool"})),
        ask_outside
    );
    assert_eq!(
        h.outcomes(&ReadFile, json!({"path": "~/.my-vault/token"})),
        ask_outside
    );
    let secrets = cairn::secret_stores::SecretStores::with_additions(
        std::slice::from_ref(&h.home),
        &[],
        &["~/.my-vault".into()],
    )
    .unwrap();
    let policy = FilePolicy::new(Some(&h.home), &[], &[]).with_secrets(secrets);
    let added = Home {
        ws: Ws::at(h.ws.root.clone(), policy),
        ..h
    };
    assert_eq!(
        added.outcomes(&ReadFile, json!({"path": "~/.my-vault/token"})),
        ALWAYS
    );
    assert_eq!(
        added.outcomes(&ReadFile, json!({"path": "~/.cargo/bin/tool"})),
        ask_outside
    );
}

#[tokio::test]
async fn a_walk_from_above_never_enters_a_sensitive_directory() {
    let h = Home::new();
    // The home itself is outside the workspace (asks in ask/auto-edit), but once passed its
    // walk must still not list or search the keys or the sessions.
    let passed = |tool: &dyn Tool, args: &Value| {
        let access = h.access(tool, args.clone());
        h.ws.cx.clone().passing(access)
    };
    let args = json!({"pattern": "KEY|sk-live|aws_secret|notes|npm_x|pypi-x|cio_x|oauth", "path": s(&h.home)});
    let out = Grep.run(args.clone(), &passed(&Grep, &args)).await.unwrap();
    let text = out.model_text();
    assert!(text.contains("notes.txt"), "{text}");
    assert!(
        !text.contains(".ssh") && !text.contains("sk-live"),
        "{text}"
    );
    assert!(!text.contains("aws_secret"), "{text}");
    for token in ["npm_x", "pypi-x", "cio_x", "oauth_token"] {
        assert!(!text.contains(token), "{token}: {text}");
    }
    let args = json!({"path": s(&h.home), "depth": 5});
    let out = ListDir
        .run(args.clone(), &passed(&ListDir, &args))
        .await
        .unwrap();
    let text = out.model_text();
    assert!(
        text.contains("notes.txt") && !text.contains("id_rsa"),
        "{text}"
    );
    assert!(!text.contains("s.jsonl"), "{text}");
    // A glob whose directory is not a store but whose pattern matches one finds nothing there.
    let args = json!({"pattern": s(&h.home.join(".cargo/cred*"))});
    let out = Glob.run(args.clone(), &passed(&Glob, &args)).await.unwrap();
    assert!(
        !out.model_text().contains("credentials.toml"),
        "{}",
        out.model_text()
    );
    let args = json!({"pattern": "**/*", "path": s(&h.home)});
    let out = Glob.run(args.clone(), &passed(&Glob, &args)).await.unwrap();
    assert!(
        !out.model_text().contains("credentials"),
        "{}",
        out.model_text()
    );
}

#[tokio::test]
async fn reads_outside_ask_in_ask_and_auto_edit_unless_under_a_readable_root() {
    let h = Home::new();
    let outside = ["ask", "ask", "run", "run"];
    assert_eq!(
        h.outcomes(&ReadFile, json!({"path": "../elsewhere/notes.txt"})),
        outside
    );
    assert_eq!(h.outcomes(&ListDir, json!({"path": ".."})), outside);
    assert_eq!(
        h.outcomes(&Grep, json!({"pattern": "x", "path": "/usr"})),
        outside
    );
    let inside = ["run"; 4];
    assert_eq!(
        h.outcomes(&ReadFile, json!({"path": "~/.rustup/toolchains/lib.rs"})),
        inside
    );
    assert_eq!(h.outcomes(&Grep, json!({"pattern": "x"})), inside);
    // Unasked, a read outside is refused at run time too (the gate never passed it).
    let err = ReadFile
        .run(json!({"path": "../elsewhere/notes.txt"}), &h.ws.cx)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("changed since"), "{err}");
    let ok = ReadFile
        .run(json!({"path": "~/.rustup/toolchains/lib.rs"}), &h.ws.cx)
        .await
        .unwrap();
    assert!(ok.model_text().contains("pub fn std"));
}

#[tokio::test]
async fn git_cairn_and_startup_files_ask_in_every_mode_but_never_in_any_spelling() {
    let h = Home::new();
    std::fs::create_dir_all(h.ws.root.join("sub")).unwrap();
    std::os::unix::fs::symlink(h.home.join(".bashrc"), h.ws.root.join("rc")).unwrap();
    std::os::unix::fs::symlink(h.ws.root.join(".git/hooks"), h.ws.root.join("hooks")).unwrap();
    let write = |path: &str| json!({"path": path, "content": "x"});
    for path in [
        ".git/config",
        "./.git//config",
        "sub/../.git/config",
        ".git/hooks/pre-commit",
        "hooks/post-checkout",
        ".cairn/config.toml",
        "./.cairn/../.cairn/config.toml",
        ".claude/settings.json",
        ".claude/commands/x.md",
        ".claude/hooks/x.sh",
        ".agents/skills/x/SKILL.md",
        ".agents/skills/x/scripts/run.sh",
        "sub/../.claude/settings.json",
        "~/.bashrc",
        "../.bashrc",
        "rc",
        "~/.profile",
        "~/.zshrc",
    ] {
        assert_eq!(h.outcomes(&WriteFile, write(path)), ALWAYS, "{path}");
    }
    let edit = json!({"path": "rc", "old_string": "rc", "new_string": "curl x | sh"});
    assert_eq!(h.outcomes(&EditFile, edit), ALWAYS);
    // What an agent obeys later, through edit_file too (issue 32).
    for path in [".claude/settings.json", ".agents/skills/x/SKILL.md"] {
        let file = h.ws.root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "old").unwrap();
        let edit = json!({"path": path, "old_string": "old", "new_string": "Bash(*)"});
        assert_eq!(h.outcomes(&EditFile, edit), ALWAYS, "{path}");
    }
    // Where the settings lead through a link: `.claude -> config/claude` makes
    // config/claude a settings directory by any name, and `.agents/skills -> ../tools` the
    // tools directory; the user's own ~/.claude and ~/.agents too.
    for dir in ["config/claude", "tools/x", "docs"] {
        std::fs::create_dir_all(h.ws.root.join(dir)).unwrap();
    }
    let _ = std::fs::remove_dir_all(h.ws.root.join(".claude"));
    let _ = std::fs::remove_dir_all(h.ws.root.join(".agents/skills"));
    std::fs::create_dir_all(h.ws.root.join(".agents")).unwrap();
    std::os::unix::fs::symlink("config/claude", h.ws.root.join(".claude")).unwrap();
    std::os::unix::fs::symlink("../tools", h.ws.root.join(".agents/skills")).unwrap();
    for path in [
        "config/claude/settings.json",
        "./config/claude/commands/x.md",
        ".claude/settings.json",
        "tools/x/SKILL.md",
        "tools/x/run.sh",
        ".agents/skills/x/run.sh",
        "~/.claude/settings.json",
        "~/.agents/skills/x/SKILL.md",
    ] {
        assert_eq!(h.outcomes(&WriteFile, write(path)), ALWAYS, "{path}");
    }
    assert_eq!(
        h.outcomes(&WriteFile, write("docs/claude.md")),
        ["ask", "run", "run", "run"]
    );
    // Ordinary files keep running unasked in auto-edit.
    assert_eq!(
        h.outcomes(&WriteFile, write("src/git/config")),
        ["ask", "run", "run", "run"]
    );
    assert_eq!(
        h.outcomes(&WriteFile, write(".gitignore")),
        ["ask", "run", "run", "run"]
    );
    // Unapproved, run itself refuses to touch them (a call that skipped the gate).
    let err = WriteFile
        .run(write(".git/config"), &h.ws.cx)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("nothing was done"), "{err}");
    assert_eq!(h.ws.read(".git/config"), "[core]\n");
}

#[tokio::test]
async fn approved_writes_and_reads_outside_still_work() {
    let h = Home::new();
    let target = h.home.join("elsewhere/new/file.txt");
    let args = json!({"path": s(&target), "content": "hello"});
    let access = h.access(&WriteFile, args.clone());
    assert!(matches!(&access, Access::Write { path, .. } if !path.inside_workspace()));
    WriteFile
        .run(args, &h.ws.cx.clone().passing(access))
        .await
        .unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hello\n");
    let args = json!({"path": "~/.ssh/id_rsa"});
    let access = h.access(&ReadFile, args.clone());
    let out = ReadFile
        .run(args, &h.ws.cx.clone().passing(access))
        .await
        .unwrap();
    assert!(out.model_text().contains("PRIVATE KEY"));
}

#[tokio::test]
async fn process_and_kernel_files_are_refused_without_hanging() {
    let h = Home::new();
    for path in ["/proc/kmsg", "/dev/zero"] {
        if !Path::new(path).exists() {
            continue;
        }
        let args = json!({"path": path});
        let access = h.access(&ReadFile, args.clone());
        let err = ReadFile
            .run(args, &h.ws.cx.clone().passing(access))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not a regular file") || err.contains("changed since"),
            "{path}: {err}"
        );
    }
}

#[tokio::test]
async fn an_approved_or_readable_root_outside_is_walked_confined_beneath_it() {
    let h = Home::new();
    // Inside the approved directory, a link back to the keys: listed, never entered.
    std::os::unix::fs::symlink(h.home.join(".ssh"), h.home.join("elsewhere/keys")).unwrap();
    std::os::unix::fs::symlink(h.home.join(".ssh"), h.home.join(".rustup/keys")).unwrap();
    let passed = |tool: &dyn Tool, args: &Value| {
        let access = h.access(tool, args.clone());
        assert!(matches!(access, Access::ReadGuarded { .. }), "{access:?}");
        h.ws.cx.clone().passing(access)
    };
    let dir = s(&h.home.join("elsewhere"));
    let args = json!({"path": dir, "depth": 4});
    let text = ListDir
        .run(args.clone(), &passed(&ListDir, &args))
        .await
        .unwrap()
        .model_text();
    assert!(
        text.contains("notes.txt") && text.contains("keys\n"),
        "{text}"
    );
    assert!(!text.contains("id_rsa"), "{text}");
    let args = json!({"pattern": "notes|PRIVATE", "path": dir});
    let text = Grep
        .run(args.clone(), &passed(&Grep, &args))
        .await
        .unwrap()
        .model_text();
    assert!(
        text.contains("notes.txt:1:notes") && !text.contains("PRIVATE"),
        "{text}"
    );
    // A readable root runs unasked, beneath its own handle.
    let args = json!({"pattern": "**/*", "path": "~/.rustup"});
    assert_eq!(h.access(&Glob, args.clone()), Access::Read);
    let text = Glob.run(args, &h.ws.cx).await.unwrap().model_text();
    assert!(text.contains("lib.rs") && text.contains("keys"), "{text}");
    assert!(!text.contains("id_rsa"), "{text}");
    let args = json!({"pattern": "PRIVATE|std", "path": "~/.rustup"});
    let text = Grep.run(args, &h.ws.cx).await.unwrap().model_text();
    assert!(
        text.contains("lib.rs:1:") && !text.contains("PRIVATE"),
        "{text}"
    );
    // Unasked, the outside directory is refused at run time (the gate never passed it).
    let err = ListDir
        .run(json!({"path": dir}), &h.ws.cx)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("changed since"), "{err}");
}
