//! git at the option level: its global options (`-c`, `--config-env`, `--exec-path`,
//! `--git-dir`), the repository a command points at, and the configuration keys whose value
//! is a command (judged as shell code). The subcommands themselves are judged in
//! `git_subcommands.rs`.

use std::path::{Path, PathBuf};

use crate::permissions::classify::commands::CommandJudged;
use crate::permissions::classify::git_repo::{foreign_repository, is_own_git_dir};
use crate::permissions::classify::git_subcommands::git_sub;
pub(crate) use crate::permissions::classify::git_subcommands::git_subcommand_index;
use crate::permissions::classify::{Class, Walker, Word};

use CommandJudged::Own;

/// Configuration keys whose value is a command git runs (or that load more configuration).
fn key_runs_commands(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let exact = [
        "core.fsmonitor",
        "core.pager",
        "core.editor",
        "core.sshcommand",
        "core.hookspath",
        "core.askpass",
        "core.gitproxy",
        "core.alternaterefscommand",
        "core.worktree",
        "sequence.editor",
        "diff.external",
        "credential.helper",
        "gpg.program",
        "include.path",
        "uploadpack.packobjectshook",
        "ssh.variant",
        "web.browser",
        "interactive.difffilter",
        "receive.procreceiverefs",
        "core.attributesfile",
        "safe.directory",
    ];
    let prefixes = [
        "alias.",
        "pager.",
        "filter.",
        "merge.",
        "includeif.",
        "remote.",
        "protocol.",
        "url.",
        "credential.",
        "gpg.",
        "difftool.",
        "mergetool.",
        "browser.",
        "man.",
        "instaweb.",
        "sendemail.",
        "http.",
    ];
    let suffixes = [
        ".textconv",
        ".command",
        ".cmd",
        ".driver",
        ".program",
        ".helper",
    ];
    exact.contains(&key.as_str())
        || prefixes.iter().any(|p| key.starts_with(p))
        || suffixes.iter().any(|s| key.ends_with(s))
}

/// Keys that only change how output looks.
fn key_is_cosmetic(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    [
        "color.",
        "user.",
        "core.quotepath",
        "log.",
        "advice.",
        "i18n.",
        "core.abbrev",
        "column.",
        "pretty.",
        "grep.",
        "status.",
        "blame.",
        "init.defaultbranch",
        "diff.renames",
        "diff.noprefix",
        "diff.mnemonicprefix",
        "diff.algorithm",
        "diff.colormoved",
        "diff.relative",
        "diff.context",
        "diff.interhunkcontext",
        "diff.statgraphwidth",
        "format.pretty",
        "core.safecrlf",
        "core.autocrlf",
    ]
    .iter()
    .any(|p| key.starts_with(p))
}

impl Walker {
    pub(crate) fn git(&mut self, args: &[Word]) -> CommandJudged {
        let mut own: Option<(Class, String)> = None;
        let mut worse = |class: Class, why: String| {
            if own.as_ref().is_none_or(|(c, _)| class > *c) {
                own = Some((class, why));
            }
        };
        let mut pointed = Pointed::new(self.cwd.clone());
        let mut i = 0;
        while i < args.len() {
            let a = args[i].text.as_str();
            let value = |i: usize| args.get(i + 1).cloned();
            match a {
                "-c" => {
                    if let Some(pair) = value(i)
                        && let Some(why) = self.git_config_pair(&pair.text, pair.literal)
                    {
                        worse(Class::Mutating, why);
                    }
                    i += 2;
                }
                _ if a == "--config-env" || a.starts_with("--config-env=") => {
                    let pair = match a.split_once('=') {
                        Some((_, rest)) => Some(rest.to_string()),
                        None => {
                            i += 1;
                            value(i - 1).map(|w| w.text)
                        }
                    };
                    let key = pair
                        .as_deref()
                        .and_then(|p| p.split_once('='))
                        .map(|(k, _)| k);
                    if key.is_none_or(key_runs_commands) {
                        worse(
                            Class::Dangerous,
                            format!(
                                "sets a git option that runs a command from an environment \
                                 variable (git {a})"
                            ),
                        );
                    } else if key.is_some_and(|k| !key_is_cosmetic(k)) {
                        worse(
                            Class::Mutating,
                            format!("changes git settings for this run ({a})"),
                        );
                    }
                    i += 1;
                }
                "-C" | "--git-dir" | "--work-tree" => {
                    if let Some(value) = value(i) {
                        pointed.option(a, &value, self);
                    }
                    i += 2;
                }
                _ if a.starts_with("--git-dir=") || a.starts_with("--work-tree=") => {
                    let (option, value) = a.split_once('=').unwrap_or((a, ""));
                    let value = Word {
                        text: value.to_string(),
                        literal: args[i].literal,
                    };
                    pointed.option(option, &value, self);
                    i += 1;
                }
                "--bare" => {
                    pointed.bare = true;
                    i += 1;
                }
                _ if a.starts_with("--exec-path=") => {
                    worse(
                        Class::Mutating,
                        format!("runs git's commands from another directory ({a})"),
                    );
                    i += 1;
                }
                "-p"
                | "--paginate"
                | "-P"
                | "--no-pager"
                | "--no-replace-objects"
                | "--literal-pathspecs"
                | "--glob-pathspecs"
                | "--noglob-pathspecs"
                | "--icase-pathspecs"
                | "--no-optional-locks"
                | "--no-advice"
                | "--exec-path"
                | "--version"
                | "--help"
                | "-h"
                | "--html-path"
                | "--man-path"
                | "--info-path"
                | "-v" => i += 1,
                _ if a.starts_with("--list-cmds=") || a.starts_with("--namespace=") => i += 1,
                _ if a.starts_with('-') => {
                    worse(
                        Class::Mutating,
                        format!("runs git with an unknown option ({a})"),
                    );
                    i += 1;
                }
                _ => break,
            }
        }
        if let Some(why) = self.repository_in_use(&pointed) {
            worse(Class::Mutating, why);
        }
        let judged = match args.get(i) {
            None => Own(Class::ReadOnly, "only reads (git)".into()),
            Some(sub) => {
                self.git_command_values(&sub.text, &args[i + 1..]);
                let judged = git_sub(&sub.text, &args[i + 1..]);
                if sub.text == "config" && matches!(judged, Own(Class::Mutating, _)) {
                    self.mark_protected("git config");
                }
                judged
            }
        };
        match (judged, own) {
            (Own(class, why), Some((worse_class, worse_why))) if worse_class > class => {
                let _ = why;
                Own(worse_class, worse_why)
            }
            (judged, _) => judged,
        }
    }

    /// `-c key=value`: why it makes git not read-only, judging a command value as shell code.
    fn git_config_pair(&mut self, pair: &str, literal: bool) -> Option<String> {
        let (key, value) = pair.split_once('=').unwrap_or((pair, "true"));
        if key_is_cosmetic(key) {
            return None;
        }
        if !key_runs_commands(key) {
            return Some(format!("changes git settings for this run (-c {key})"));
        }
        let code = value.strip_prefix('!').unwrap_or(value);
        let lower = key.to_ascii_lowercase();
        if lower.starts_with("alias.") && !value.starts_with('!') {
            // An alias without `!` is a git command line.
            self.shell_string(&Word::literal(format!("git {code}")), literal);
        } else if !matches!(code, "true" | "false" | "0" | "1" | "") {
            self.shell_string(&Word::literal(code), literal);
        }
        Some(format!("sets a git option that runs a command (-c {key})"))
    }

    /// Why the repository git would use is not the workspace's own: planted settings
    /// (`core.fsmonitor`, `core.pager`) run commands even for `git status`.
    fn repository_in_use(&self, pointed: &Pointed) -> Option<String> {
        let shown = |p: &Path| match p.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => p.display().to_string(),
        };
        let runs = "whose settings can run commands";
        if let Some(dir) = &pointed.git_dir {
            return match dir {
                Some(dir) if is_own_git_dir(dir, &self.root) => None,
                Some(dir) => Some(format!("uses the repository at {}, {runs}", shown(dir))),
                None => Some(format!("uses a repository named at run time, {runs}")),
            };
        }
        if let Some(tree) = &pointed.work_tree
            && tree.as_deref() != Some(self.root.as_path())
        {
            let tree = tree.as_deref().map_or("a run-time path".into(), shown);
            return Some(format!("uses the work tree at {tree}, {runs}"));
        }
        let Some(dir) = &pointed.dir else {
            return Some(format!(
                "runs git in a directory only known at run time, {runs}"
            ));
        };
        if !dir.is_dir() {
            // Not there yet: whatever is there when it runs is not checked.
            return Some(format!("uses the repository at {}, {runs}", shown(dir)));
        }
        if pointed.bare {
            return Some(format!(
                "uses {} as a bare repository (git --bare), {runs}",
                shown(dir)
            ));
        }
        if !dir.starts_with(&self.root) {
            return Some(format!(
                "runs git in a directory outside the workspace, {runs}"
            ));
        }
        foreign_repository(dir, &self.root)
            .map(|repo| format!("uses the repository at {}, {runs}", shown(&repo)))
    }
}

/// Where git's own options point it: the directory it starts in (`-C`, after `cd`), and the
/// repository and work tree named outright. `None` inside: only known at run time.
struct Pointed {
    dir: Option<PathBuf>,
    git_dir: Option<Option<PathBuf>>,
    work_tree: Option<Option<PathBuf>>,
    bare: bool,
}

impl Pointed {
    fn new(cwd: Option<PathBuf>) -> Self {
        Self {
            dir: cwd.map(|c| real(&c)),
            git_dir: None,
            work_tree: None,
            bare: false,
        }
    }

    /// `-C DIR` moves the start (relative to the previous one); `--git-dir` and
    /// `--work-tree` resolve against it.
    fn option(&mut self, option: &str, value: &Word, walker: &Walker) {
        let resolved = self
            .dir
            .as_deref()
            .and_then(|base| walker.path_from(base, value))
            .map(|p| real(&p));
        match option {
            "-C" => self.dir = resolved,
            "--git-dir" => self.git_dir = Some(resolved),
            _ => self.work_tree = Some(resolved),
        }
    }
}

/// The real path of `path` where it exists (symlinks followed), else `path` itself.
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
