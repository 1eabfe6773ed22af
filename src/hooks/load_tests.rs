#![allow(clippy::unwrap_used)]

use super::*;

fn entry(matcher: Option<&str>, command: &str) -> HookEntry {
    HookEntry {
        matcher: matcher.map(str::to_string),
        command: command.into(),
        ..HookEntry::default()
    }
}

fn load_in(ws: &Path, data: &Path, user: &HooksFile, home: Option<&Path>) -> Loaded {
    let run = RunSettings {
        workspace: ws.to_path_buf(),
        ..RunSettings::default()
    };
    load(
        user,
        Path::new("config.toml"),
        home,
        run,
        ProcessTrust::new(data, ws),
    )
    .unwrap()
}

#[test]
fn user_hooks_come_first_then_claudes_and_matchers_match_whole_names() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::write(
        home.path().join(".claude/settings.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt"}]}],
                      "SubagentStop": [{"hooks": [{"type": "command", "command": "x"}]}]}}"#,
    )
    .unwrap();
    let user = HooksFile {
        pre_tool: vec![entry(Some("bash"), "guard"), entry(None, "all")],
        stop: vec![entry(Some("bash"), "tests")],
        ..HooksFile::default()
    };
    let loaded = load_in(ws.path(), data.path(), &user, Some(home.path()));
    let names: Vec<&str> = loaded.hooks.hooks.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "pre_tool #1",
            "pre_tool #2",
            "stop #1",
            "PreToolUse #1 (~/.claude/settings.json)"
        ]
    );
    let hooks = &loaded.hooks.hooks;
    assert!(hooks[0].matches(Some("bash")) && !hooks[0].matches(Some("bash_x")));
    assert!(hooks[1].matches(Some("edit_file")));
    // Claude's matcher sees Claude's names.
    assert!(hooks[3].matches(Some("edit_file")) && !hooks[3].matches(Some("bash")));
    assert!(loaded.notices.iter().any(|n| n.contains("SubagentStop")));
    assert_eq!(loaded.hooks.max_stop_blocks, 3);
}

#[test]
fn project_hooks_load_only_once_trusted_and_a_bad_matcher_is_an_error() {
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".cairn")).unwrap();
    std::fs::write(
        ws.path().join(".cairn/config.toml"),
        "[permissions]\nallow = [\"make\"]\n[[hooks.pre_tool]]\ncommand = \"./check.sh\"\n",
    )
    .unwrap();
    std::fs::write(ws.path().join("check.sh"), "exit 0\n").unwrap();
    let loaded = load_in(ws.path(), data.path(), &HooksFile::default(), None);
    assert!(loaded.hooks.hooks.iter().all(|h| h.awaiting_trust));
    assert_eq!(loaded.untrusted.len(), 1);
    let notice = loaded.untrusted_notice().unwrap();
    assert!(notice.contains("cairn hooks trust"), "{notice}");
    let trust = ProcessTrust::new(data.path(), ws.path());
    trust.trust(&loaded.untrusted[0]).unwrap();
    let loaded = load_in(ws.path(), data.path(), &HooksFile::default(), None);
    assert_eq!(loaded.hooks.hooks.len(), 1);
    assert!(!loaded.hooks.hooks[0].awaiting_trust);
    assert_eq!(
        loaded.hooks.hooks[0].name,
        "pre_tool #1 (.cairn/config.toml)"
    );
    // Editing the script it runs asks again.
    std::fs::write(ws.path().join("check.sh"), "exit 1\n").unwrap();
    let loaded = load_in(ws.path(), data.path(), &HooksFile::default(), None);
    assert!(loaded.hooks.hooks[0].awaiting_trust);
    assert_eq!(loaded.untrusted.len(), 1);
    assert!(
        loaded.untrusted[0]
            .listing()
            .contains("changed since you trusted it")
    );

    let user = HooksFile {
        pre_tool: vec![entry(Some("bash("), "x")],
        ..HooksFile::default()
    };
    let run = RunSettings::default();
    let err = load(
        &user,
        Path::new("c.toml"),
        None,
        run,
        ProcessTrust::new(data.path(), ws.path()),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("c.toml") && err.contains("pre_tool #1"),
        "{err}"
    );
}
