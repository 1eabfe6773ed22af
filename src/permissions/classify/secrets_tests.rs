//! Secret stores named by another spelling: globs, walks from a directory above a store, the
//! new names of the one list. Each must be held (dangerous), while plainly read-only work in
//! the workspace stays unasked.
#![allow(clippy::unwrap_used)]

use super::Class::{Dangerous as D, ReadOnly as R};
use super::tests::Fixture;

#[test]
fn globs_and_walks_over_a_home_or_root_name_the_stores() {
    let ws = Fixture::new();
    for command in [
        "cat ~/.*/id_rsa",
        "cat $HOME/.*/id_rsa",
        "cat ~/.config/*/config.toml",
        "cat ~/.config/*/hosts.yml",
        "grep -r BEGIN ~",
        "grep -r BEGIN $HOME",
        "grep -rn PRIVATE /",
        "rg -uu --hidden PRIVATE ~",
        "rg PRIVATE ~/",
        "find ~ -name 'id_*' -exec cat {} +",
        "find / -name id_rsa",
        "du -a ~",
        "tar czf /tmp/x.tgz ~",
        "cp -r ~ /tmp/copy",
        "zip -r /tmp/h.zip ~/.config",
        "ls -R ~",
        "x=$(<~/.ssh/id_rsa)",
        "cat ~/.npmrc",
        "cat ~/.pypirc",
        "cat ~/.cargo/credentials.toml",
        "cat ~/.cargo/credentials",
        "cat ~/.config/hub",
        "cat ~/.vault-token",
        "cat ~/.terraform.d/credentials.tfrc.json",
        "head ~/.gem/credentials",
        "cat ~/.c*/cred*",
    ] {
        let got = ws.classify(command);
        assert_eq!(got.class, D, "{command}: {got:?}");
    }
}

#[test]
fn plainly_read_only_work_stays_unasked() {
    let ws = Fixture::new();
    for command in [
        "ls",
        "ls ~",
        "cat src/main.rs",
        "git status",
        "git diff",
        "git log --oneline",
        "rg TODO",
        "rg TODO src",
        "grep -rn TODO .",
        "find . -name '*.rs'",
        "sed -n 1,5p src/lib.rs",
        "head -n 3 Cargo.toml",
        "wc -l src/*.rs",
        "cat ~/.cargo/bin/notes",
    ] {
        let got = ws.classify(command);
        assert_eq!(got.class, R, "{command}: {got:?}");
    }
}
