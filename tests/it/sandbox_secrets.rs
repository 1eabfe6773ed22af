//! Secrets unreadable by construction: the real `cairn exec` in `never` mode (nothing asks, so
//! only the sandbox stands between a command and the keys), with a fake home holding a key, a
//! token file and a toolchain. Every spelling, glob and walk runs, and no key text reaches the
//! model; the toolchain entries beside the stores stay readable. Skipped, with the reason
//! printed, only where the kernel has no Landlock.
#![allow(clippy::unwrap_used)]

use crate::sandbox::{landlock, run, script};
use crate::support::cairn_cmd::Sandbox;
use cairn::testing::MockLlm;

const KEY_TEXT: &str = "KEYMATERIAL-0b5e1c";
const TOKEN_TEXT: &str = "TOKENMATERIAL-77aa";

/// A workspace in a fake home (`$HOME` is the sandbox root, the workspace is `~/ws`) with a
/// private key, token files, a toolchain binary and a symlink into `.ssh`.
fn home_with_secrets() -> Sandbox {
    let sb = Sandbox::new().file("src/lib.rs", "// code\n");
    let home = sb.path("..");
    for (rel, content) in [
        (
            ".ssh/id_rsa",
            format!("-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_TEXT}\n"),
        ),
        (".npmrc", format!("//registry/:_authToken={TOKEN_TEXT}\n")),
        (
            ".cargo/credentials.toml",
            format!("[registry]\ntoken = \"{TOKEN_TEXT}\"\n"),
        ),
        (
            ".config/gh/hosts.yml",
            format!("oauth_token: {TOKEN_TEXT}\n"),
        ),
        (".cargo/bin/tool", "#!/bin/sh\necho TOOLCHAIN-RUNS\n".into()),
        (
            ".config/nvim/init.lua",
            "-- EDITOR-CONFIG-READABLE\n".into(),
        ),
    ] {
        let path = home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        home.join(".cargo/bin/tool"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).unwrap();
    sb
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_spelling_glob_or_walk_reads_a_store_even_when_nothing_asks() {
    if !landlock("no_spelling_glob_or_walk_reads_a_store_even_when_nothing_asks") {
        return;
    }
    let sb = home_with_secrets();
    let attacks = [
        "cat ~/.*/id_rsa",
        "cat ~/.ssh/id_rsa",
        "x=$(<~/.ssh/id_rsa); echo \"got:$x\"",
        "grep -r BEGIN ~",
        "grep -ra MATERIAL ~/ws/.. $HOME/",
        "rg -uu --hidden PRIVATE ~",
        "find ~ -name 'id_*' -exec cat {} +",
        "find ~/ -path '*/.ssh/*' -type f -exec cat {} + 2>/dev/null",
        "cat /proc/self/root$HOME/.ssh/id_rsa",
        "cd /proc/self/cwd/.. && cat .ssh/id_rsa",
        "cat ~/keys/id_rsa",
        "cat ~/.npmrc ~/.cargo/credentials.toml ~/.config/*/hosts.yml",
        "tar cf - ~ 2>/dev/null | strings | grep MATERIAL",
        "cp -r ~/.ssh copied; cat copied/*",
        "ln ~/.ssh/id_rsa hard; cat hard",
        "python3 -c \"import os;print(open(os.path.expanduser('~/.ssh/id_rsa')).read())\"",
        "for f in ~/.ssh/*; do while read -r l; do echo \"$l\"; done < \"$f\"; done",
    ];
    let llm = MockLlm::start(script(&attacks)).await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // Every command ran (nothing asks in `never`), and each result came back to the model.
    for (i, attack) in attacks.iter().enumerate() {
        let result = llm.tool_result(i + 1, &format!("c{i}"));
        assert!(result.is_some(), "{attack}: no result");
    }
    // The wall, not a missing file, stopped them.
    let direct = llm.tool_result(2, "c1").unwrap();
    assert!(direct.contains("Permission denied"), "{direct}");
    let everything = serde_json::to_string(&llm.requests()).unwrap();
    assert!(
        !everything.contains(KEY_TEXT),
        "the key reached the model: {everything}"
    );
    assert!(
        !everything.contains(TOKEN_TEXT),
        "a token reached the model: {everything}"
    );
    assert!(!run.stdout.contains(KEY_TEXT) && !run.stdout.contains(TOKEN_TEXT));
    assert!(!sb.path("copied/id_rsa").exists() || !sb.read("copied/id_rsa").contains(KEY_TEXT));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn home_entries_beside_the_stores_stay_readable_and_runnable() {
    if !landlock("home_entries_beside_the_stores_stay_readable_and_runnable") {
        return;
    }
    let sb = home_with_secrets();
    let commands = [
        "~/.cargo/bin/tool",
        "cat ~/.config/nvim/init.lua",
        "ls -a ~ ~/.cargo",
        "ls /",
        "cat src/lib.rs && echo WORKSPACE-READABLE",
    ];
    let llm = MockLlm::start(script(&commands)).await;
    let run = run(&sb, &llm, "never", &[]).await;
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = |i: usize| llm.tool_result(i + 1, &format!("c{i}")).unwrap();
    assert!(result(0).contains("TOOLCHAIN-RUNS"), "{}", result(0));
    assert!(
        result(1).contains("EDITOR-CONFIG-READABLE"),
        "{}",
        result(1)
    );
    let listing = result(2);
    assert!(
        listing.contains("bin") && listing.contains("ws") && listing.contains(".ssh"),
        "{listing}"
    );
    assert!(result(3).contains("usr"), "{}", result(3));
    assert!(result(4).contains("WORKSPACE-READABLE"), "{}", result(4));
}
