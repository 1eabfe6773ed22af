//! Developer tools judged by subcommand: git (history-rewriting and work-discarding
//! subcommands are dangerous, inspection is read-only), cargo, npm and friends, go, pip, docker.

use crate::permissions::classify::{Class, Walker, Word};
use crate::permissions::commands::{Judged, has_long, has_short, positionals};

use Judged::Own;

const GIT_READ_ONLY: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "blame",
    "annotate",
    "shortlog",
    "describe",
    "rev-parse",
    "rev-list",
    "ls-files",
    "ls-tree",
    "ls-remote",
    "cat-file",
    "grep",
    "help",
    "version",
    "whatchanged",
    "name-rev",
    "merge-base",
    "count-objects",
    "check-ignore",
    "check-attr",
    "for-each-ref",
    "show-ref",
    "show-branch",
    "var",
    "diff-tree",
    "diff-files",
    "diff-index",
    "verify-commit",
    "verify-tag",
    "cherry",
    "range-diff",
];

impl Walker {
    pub(crate) fn judge_dev(&mut self, name: &str, args: &[Word]) -> Option<Judged> {
        Some(match name {
            "git" => {
                self.git_aliases(args);
                git(args)
            }
            "cargo" => subcommand(
                name,
                args,
                &[
                    "metadata",
                    "tree",
                    "search",
                    "locate-project",
                    "pkgid",
                    "verify-project",
                    "read-manifest",
                    "version",
                    "help",
                ],
            ),
            "npm" | "pnpm" | "yarn" => subcommand(
                name,
                args,
                &[
                    "ls", "list", "view", "info", "outdated", "help", "why", "explain", "root",
                    "prefix", "bin", "audit", "search",
                ],
            ),
            "go" => match args.first().map(|a| a.text.as_str()) {
                Some("env") if has_short(args, 'w') || has_short(args, 'u') => {
                    Own(Class::Mutating, "changes go settings (go env -w)".into())
                }
                _ => subcommand(name, args, &["version", "env", "list", "doc", "help"]),
            },
            "pip" | "pip3" | "uv" if args.first().is_some_and(|a| a.text == "pip") => subcommand(
                name,
                &args[1..],
                &["list", "show", "freeze", "check", "help"],
            ),
            "pip" | "pip3" => subcommand(
                name,
                args,
                &["list", "show", "freeze", "check", "help", "index"],
            ),
            "rustup" => subcommand(name, args, &["show", "which", "help"]),
            "docker" | "podman" => subcommand(
                name,
                args,
                &["ps", "images", "version", "info", "inspect", "logs", "help"],
            ),
            "kubectl" => subcommand(
                name,
                args,
                &[
                    "get",
                    "describe",
                    "logs",
                    "version",
                    "explain",
                    "api-resources",
                ],
            ),
            _ => return None,
        })
    }
}

impl Walker {
    /// `git -c alias.x='!cmd' x` runs `cmd` through the shell: judge it as shell code.
    fn git_aliases(&mut self, args: &[Word]) {
        for pair in args.windows(2).filter(|w| w[0].text == "-c") {
            if let Some((key, value)) = pair[1].text.split_once('=')
                && key.starts_with("alias.")
                && let Some(code) = value.strip_prefix('!')
            {
                self.shell_string(
                    &Word {
                        text: code.to_string(),
                        literal: pair[1].literal,
                    },
                    pair[1].literal,
                );
            }
        }
    }
}

/// Read-only when the first positional argument is one of `read_only`.
fn subcommand(name: &str, args: &[Word], read_only: &[&str]) -> Judged {
    let sub = positionals(
        args,
        &["-C", "--manifest-path", "--prefix", "-w", "--workspace"],
    )
    .first()
    .map(|w| w.text.clone());
    match sub {
        Some(sub) if read_only.contains(&sub.as_str()) => {
            Own(Class::ReadOnly, format!("only reads ({name} {sub})"))
        }
        Some(sub) => Own(
            Class::Mutating,
            format!("runs {name} {sub}, which can change files"),
        ),
        None => Own(
            Class::Mutating,
            format!("runs {name}, which is not known to be read-only"),
        ),
    }
}

/// The index of git's subcommand among its arguments, after git's own options
/// (`-C dir`, `-c k=v`, `--no-pager`, ...).
pub(crate) fn git_subcommand_index(args: &[Word]) -> Option<usize> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        match a {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" => i += 2,
            _ if a.starts_with('-') => i += 1,
            _ => return Some(i),
        }
    }
    None
}

/// The subcommand and its arguments.
fn git_subcommand(args: &[Word]) -> Option<(&str, &[Word])> {
    git_subcommand_index(args).map(|i| (args[i].text.as_str(), &args[i + 1..]))
}

fn git(args: &[Word]) -> Judged {
    let Some((sub, rest)) = git_subcommand(args) else {
        return Own(Class::ReadOnly, "only reads (git)".into());
    };
    let dangerous = |why: &str| Own(Class::Dangerous, format!("{why} (git {sub})"));
    let positional = positionals(
        rest,
        &["-m", "-o", "--onto", "-C", "-X", "-s", "--strategy"],
    );
    match sub {
        "push"
            if has_short(rest, 'f')
                || has_long(rest, "--force")
                || has_long(rest, "--force-with-lease")
                || has_long(rest, "--mirror")
                || positional.iter().any(|r| r.text.starts_with('+')) =>
        {
            dangerous("overwrites remote history")
        }
        "push"
            if has_short(rest, 'd')
                || has_long(rest, "--delete")
                || positional.iter().any(|r| r.text.starts_with(':')) =>
        {
            dangerous("deletes a remote branch")
        }
        "push" => Own(
            Class::Mutating,
            "publishes commits to a remote (git push)".into(),
        ),
        "reset"
            if has_long(rest, "--hard")
                || has_long(rest, "--merge")
                || has_long(rest, "--keep") =>
        {
            dangerous("discards uncommitted work")
        }
        "clean" if has_short(rest, 'f') || has_long(rest, "--force") => {
            dangerous("deletes untracked files")
        }
        "checkout"
            if has_short(rest, 'f')
                || has_long(rest, "--force")
                || rest.iter().any(|a| a.text == "--" || a.text == ".") =>
        {
            dangerous("discards uncommitted changes")
        }
        "switch"
            if has_short(rest, 'f')
                || has_long(rest, "--force")
                || has_long(rest, "--discard-changes") =>
        {
            dangerous("discards uncommitted changes")
        }
        "restore"
            if has_long(rest, "--staged")
                && !has_long(rest, "--worktree")
                && !has_short(rest, 'W') =>
        {
            Own(
                Class::Mutating,
                "unstages changes (git restore --staged)".into(),
            )
        }
        "restore" => dangerous("discards uncommitted changes"),
        "rebase" if has_long(rest, "--abort") || has_long(rest, "--continue") => Own(
            Class::Mutating,
            "finishes or abandons a rebase in progress (git rebase)".into(),
        ),
        "rebase" | "filter-branch" | "filter-repo" | "replace" => dangerous("rewrites history"),
        "branch"
            if has_short(rest, 'D')
                || (has_short(rest, 'd') && has_short(rest, 'f'))
                || has_short(rest, 'f')
                || has_long(rest, "--force") =>
        {
            dangerous("deletes or moves a branch by force")
        }
        "branch" if is_listing_branch(rest, &positional) => {
            Own(Class::ReadOnly, "only reads (git branch)".into())
        }
        "tag" if positional.is_empty() || has_short(rest, 'l') || has_long(rest, "--list") => {
            Own(Class::ReadOnly, "only reads (git tag)".into())
        }
        "stash" => match positional.first().map(|w| w.text.as_str()) {
            Some("drop" | "clear") => dangerous("deletes stashed work"),
            Some("list" | "show") => Own(Class::ReadOnly, "only reads (git stash list)".into()),
            _ => Own(Class::Mutating, "stashes changes (git stash)".into()),
        },
        "reflog" => match positional.first().map(|w| w.text.as_str()) {
            Some("expire" | "delete") => dangerous("deletes history"),
            _ => Own(Class::ReadOnly, "only reads (git reflog)".into()),
        },
        "update-ref" if has_short(rest, 'd') => dangerous("deletes a reference"),
        "gc" if rest.iter().any(|a| a.text.starts_with("--prune")) => {
            dangerous("prunes unreachable history")
        }
        "remote"
            if positional.is_empty()
                || matches!(positional[0].text.as_str(), "show" | "get-url") =>
        {
            Own(Class::ReadOnly, "only reads (git remote)".into())
        }
        "config"
            if has_long(rest, "--get")
                || has_long(rest, "--list")
                || has_short(rest, 'l')
                || has_long(rest, "--get-all")
                || (positional.len() == 1 && !has_long(rest, "--unset")) =>
        {
            Own(Class::ReadOnly, "only reads (git config)".into())
        }
        "worktree" if positional.first().is_some_and(|w| w.text == "list") => {
            Own(Class::ReadOnly, "only reads (git worktree list)".into())
        }
        "submodule" if positional.first().is_none_or(|w| w.text == "status") => {
            Own(Class::ReadOnly, "only reads (git submodule status)".into())
        }
        _ if GIT_READ_ONLY.contains(&sub) => {
            if rest.iter().any(|a| a.text.starts_with("--output")) {
                Own(
                    Class::Mutating,
                    format!("writes a file (git {sub} --output)"),
                )
            } else {
                Own(Class::ReadOnly, format!("only reads (git {sub})"))
            }
        }
        _ => Own(
            Class::Mutating,
            format!("changes the repository (git {sub})"),
        ),
    }
}

fn is_listing_branch(rest: &[Word], positional: &[&Word]) -> bool {
    let list_flags = [
        "-a",
        "-r",
        "-v",
        "-vv",
        "-l",
        "--list",
        "--all",
        "--remotes",
        "--show-current",
        "--merged",
        "--no-merged",
        "--contains",
        "--sort",
        "--format",
        "--verbose",
    ];
    let only_list_flags = rest.iter().filter(|a| a.text.starts_with('-')).all(|a| {
        list_flags
            .iter()
            .any(|f| a.text == *f || a.text.starts_with(&format!("{f}=")))
    });
    only_list_flags
        && (positional.is_empty()
            || has_short(rest, 'l')
            || has_long(rest, "--list")
            || has_long(rest, "--contains")
            || has_long(rest, "--merged"))
}
