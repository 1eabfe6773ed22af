//! git's subcommands: which read and which change the repository, rewrite history or discard
//! work (dangerous), the inspection options that write a file or run a program, and where
//! the subcommand stands among git's own options. `git.rs` judges the global options and the
//! configuration keys before asking here.

use crate::permissions::classify::commands::{CommandJudged, has_long, has_short, positionals};
use crate::permissions::classify::opts::{could_be_option, long_is};
use crate::permissions::classify::{Class, Word};

use CommandJudged::Own;

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

/// Options of the inspection subcommands that write a file or run a program.
const EFFECTFUL_LONG: &[&str] = &[
    "--output",
    "--ext-diff",
    "--open-files-in-pager",
    "--upload-pack",
    "--receive-pack",
    "--exec",
];

/// The first option of an inspection subcommand that writes or runs something.
fn effectful_option(sub: &str, rest: &[Word]) -> Option<String> {
    let short = match sub {
        "grep" => "O",
        "ls-remote" => "u",
        _ => "",
    };
    for arg in rest {
        let a = arg.text.as_str();
        if a == "--" {
            break;
        }
        if !arg.literal && could_be_option(arg) {
            // `git log $opts`, `xargs git log`: could be `--output=FILE`.
            return Some(a.to_string());
        }
        if a.starts_with("--") {
            let exact_prefix_of_allowed =
                a.starts_with("--output-indicator") || a.starts_with("--exec-path");
            if !exact_prefix_of_allowed && EFFECTFUL_LONG.iter().any(|l| long_is(a, l)) {
                return Some(a.to_string());
            }
        } else if let Some(cluster) = a.strip_prefix('-')
            && cluster.chars().any(|c| short.contains(c))
        {
            return Some(a.to_string());
        }
    }
    None
}

fn config_reads(rest: &[Word], positional: &[&Word]) -> bool {
    let writes = [
        "--unset",
        "--unset-all",
        "--add",
        "--replace-all",
        "--rename-section",
        "--remove-section",
        "--edit",
        "--type",
    ];
    if rest.iter().any(|a| a.text == "-e")
        || writes.iter().any(|w| {
            rest.iter()
                .any(|a| long_is(&a.text, w) && a.text.len() > 4 && *w != "--type")
        })
    {
        return false;
    }
    let reading = [
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "--list",
    ];
    if has_short(rest, 'l')
        || reading.iter().any(|r| {
            rest.iter()
                .any(|a| a.text == *r || a.text.starts_with(&format!("{r}=")))
        })
    {
        return true;
    }
    match positional.first().map(|w| w.text.as_str()) {
        Some("get" | "list") => true,
        Some("set" | "unset" | "edit" | "rename-section" | "remove-section") => false,
        _ => positional.len() == 1,
    }
}

/// The index of git's subcommand among its arguments, after git's own options
/// (`-C dir`, `-c k=v`, `--no-pager`, ...).
pub(crate) fn git_subcommand_index(args: &[Word]) -> Option<usize> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        match a {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env"
            | "--super-prefix" => i += 2,
            _ if a.starts_with('-') => i += 1,
            _ => return Some(i),
        }
    }
    None
}

pub(crate) fn git_sub(sub: &str, rest: &[Word]) -> CommandJudged {
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
        "config" if config_reads(rest, &positional) => {
            Own(Class::ReadOnly, "only reads (git config)".into())
        }
        "config" => Own(
            Class::Mutating,
            "changes git settings (git config), which can make git run commands".into(),
        ),
        "help" if has_short(rest, 'w') || has_long(rest, "--web") => Own(
            Class::Mutating,
            "opens a web browser (git help --web)".into(),
        ),
        "worktree" if positional.first().is_some_and(|w| w.text == "list") => {
            Own(Class::ReadOnly, "only reads (git worktree list)".into())
        }
        "submodule" if positional.first().is_none_or(|w| w.text == "status") => {
            Own(Class::ReadOnly, "only reads (git submodule status)".into())
        }
        _ if GIT_READ_ONLY.contains(&sub) => match effectful_option(sub, rest) {
            Some(option) => Own(
                Class::Mutating,
                format!("runs git {sub} {option}, which can write files or run commands"),
            ),
            None => Own(Class::ReadOnly, format!("only reads (git {sub})")),
        },
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
