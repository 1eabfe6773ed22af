//! Places on disk that need the user's word even where the mode runs file tools unasked.
//! Reading: secrets (`~/.ssh`, `~/.aws`, `~/.gnupg`, credential files), cairn's own config and
//! data (the session logs), and other processes' `/proc` entries. Writing: files that make
//! programs run code later (`.git/` — config and hooks —, `.cairn/`, `.agents/`, `.claude/`,
//! shell start-up files).
//! Also the readable roots the user opened for reads outside the workspace (toolchains).

use std::path::{Component, Path, PathBuf};

use crate::dirs::Dirs;
use crate::secret_stores::SecretStores;

/// Under the home directory: writing any of these always asks, from a file tool or a command
/// (shells run them at start; git, ssh and cairn obey them later). The one list both use.
pub(crate) const HOME_PROTECTED: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".xprofile",
    ".xinitrc",
    ".xsessionrc",
    ".pam_environment",
    ".inputrc",
    ".gitconfig",
    ".ssh",
    ".config/fish",
    ".config/git",
    ".config/cairn",
    // The user's own skills, commands and settings (hooks): trusted without asking.
    ".claude",
    ".agents",
    ".config/environment.d",
    ".config/autostart",
    ".config/systemd",
    ".local/share/cairn",
    ".logout",
];

/// `/proc` entries that describe the machine, not a process: readable like any outside file.
const PROC_PUBLIC: &[&str] = &[
    "cpuinfo",
    "meminfo",
    "version",
    "loadavg",
    "uptime",
    "stat",
    "filesystems",
    "cgroups",
];

/// What the file tools treat specially, for one session.
#[derive(Debug, Clone, Default)]
pub struct FilePolicy {
    /// The home directory `~` means in path arguments.
    pub home: Option<PathBuf>,
    /// Directories outside the workspace that reads reach without asking (canonical).
    pub readable: Vec<PathBuf>,
    /// Reads of these always ask (in every mode but `never`): the one list of secret stores.
    pub secrets: SecretStores,
    /// Writes at or under these always ask (besides `.git/` and `crate::dirs::PROJECT_SETTINGS`
    /// anywhere).
    pub protected: Vec<PathBuf>,
}

impl FilePolicy {
    /// From the real environment: `$HOME`, cairn's config dir and data dir, the default
    /// secret stores under every known home (see `with_secrets` for `[sandbox] deny_read`).
    #[cfg(any(test, feature = "testing"))]
    pub fn from_env(readable: &[PathBuf]) -> Self {
        Self::with_dirs(&Dirs::from_env(), readable)
    }

    /// As `from_env`, with cairn's directories given.
    pub fn with_dirs(dirs: &Dirs, readable: &[PathBuf]) -> Self {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let own = dirs.own();
        Self::new(home.as_deref(), &own, readable).with_secrets(SecretStores::new(
            &crate::secret_stores::known_homes(),
            &own,
        ))
    }

    /// `own` are cairn's config and data directories; `readable` may start with `~/`.
    pub fn new(home: Option<&Path>, own: &[PathBuf], readable: &[PathBuf]) -> Self {
        let mut protected = Vec::new();
        if let Some(home) = home {
            protected.extend(HOME_PROTECTED.iter().map(|f| home.join(f)));
        }
        // Cairn's own config (the key may be in it) and data (session logs) are both secret
        // and protected.
        protected.extend(own.iter().filter(|d| d.is_absolute()).cloned());
        let homes: Vec<PathBuf> = home.map(Path::to_path_buf).into_iter().collect();
        let readable = readable
            .iter()
            .map(|r| expand_home(r, home))
            .filter(|r| r.is_absolute())
            .collect();
        Self {
            home: home.map(Path::to_path_buf),
            readable: with_real(readable),
            secrets: SecretStores::new(&homes, own),
            protected: with_real(protected),
        }
    }

    /// The secret stores reads ask for (the session's list, `[sandbox] deny_read` included).
    pub fn with_secrets(mut self, secrets: SecretStores) -> Self {
        self.secrets = secrets;
        self
    }

    /// Why reading `real` always asks, if it does.
    pub fn sensitive_read(&self, real: &Path) -> Option<String> {
        if let Some(store) = self.secrets.store_at(real) {
            return Some(format!(
                "{} is a secret store ({}: keys, credentials or cairn's own data)",
                real.display(),
                store.spelled
            ));
        }
        if is_private_proc(real) {
            return Some(format!(
                "{} belongs to a process (its environment and memory can hold keys)",
                real.display()
            ));
        }
        None
    }

    /// The readable root `real` is under, if any.
    pub fn readable_root(&self, real: &Path) -> Option<&Path> {
        self.readable
            .iter()
            .find(|r| real.starts_with(r))
            .map(PathBuf::as_path)
    }

    /// Sensitive directories strictly below `root`: a walk from `root` must not enter them.
    pub fn sensitive_below(&self, root: &Path) -> Vec<PathBuf> {
        let mut below = self.secrets.stores_below(root);
        if root == Path::new("/") || root == Path::new("/proc") {
            below.push(PathBuf::from("/proc"));
        }
        below
    }

    /// Why writing `real` in `workspace` always asks, if it does: `protected_write`, or a place
    /// the workspace's project settings lead to through a link (`.claude -> config/claude`).
    pub fn protected_write_in(&self, workspace: &Path, real: &Path) -> Option<String> {
        self.protected_write(real).or_else(|| {
            let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
            crate::dirs::in_project_settings(&root, real).then(|| {
                format!(
                    "changes cairn's project settings ({}, which a link there leads to): \
                     rules, skills, commands and hooks there decide what runs unasked",
                    real.display()
                )
            })
        })
    }

    /// Why writing `real` always asks, if it does.
    pub fn protected_write(&self, real: &Path) -> Option<String> {
        let names: Vec<&std::ffi::OsStr> = real
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect();
        if let Some(at) = names.iter().position(|n| *n == ".git") {
            let what = names.get(at + 1).map_or("the repository", |n| {
                if *n == "hooks" {
                    "a git hook"
                } else if *n == "config" {
                    "git's config"
                } else {
                    "git's own files"
                }
            });
            return Some(format!(
                "changes {what} ({}): git runs what its config and hooks say",
                real.display()
            ));
        }
        if let Some(dir) = names.iter().find(|n| crate::dirs::is_project_settings(n)) {
            return Some(format!(
                "changes cairn's project settings in {} ({}): rules, skills, commands and \
                 hooks there decide what runs unasked",
                dir.to_string_lossy(),
                real.display()
            ));
        }
        self.protected
            .iter()
            .find(|p| real.starts_with(p))
            .map(|p| {
                format!(
                    "changes {}: a shell or cairn runs or trusts what it says",
                    p.display()
                )
            })
    }
}

/// `/proc/<pid>/…`, `/proc/self/…` and the kernel's own files, but not the machine-wide
/// descriptions in `PROC_PUBLIC`.
fn is_private_proc(real: &Path) -> bool {
    let Ok(rest) = real.strip_prefix("/proc") else {
        return false;
    };
    match rest.components().next() {
        None => false,
        Some(Component::Normal(first)) => !PROC_PUBLIC.iter().any(|p| first == *p),
        Some(_) => true,
    }
}

fn expand_home(path: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

/// Each path and, where it differs, its real path (a home reached through a symlink).
fn with_real(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut out = Vec::with_capacity(paths.len());
    for path in paths {
        if let Ok(real) = std::fs::canonicalize(&path)
            && real != path
        {
            out.push(real);
        }
        out.push(path);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> FilePolicy {
        FilePolicy::new(
            Some(Path::new("/home/u")),
            &[PathBuf::from("/home/u/.local/share/cairn")],
            &[PathBuf::from("~/.rustup"), PathBuf::from("/usr/include")],
        )
    }

    #[test]
    fn secrets_and_own_data_are_sensitive_to_read() {
        let policy = policy();
        for path in [
            "/home/u/.ssh/id_rsa",
            "/home/u/.aws/credentials",
            "/home/u/.gnupg",
            "/home/u/.local/share/cairn/sessions/x.jsonl",
            "/proc/1/environ",
            "/proc/self/mem",
            "/proc/kcore",
        ] {
            assert!(policy.sensitive_read(Path::new(path)).is_some(), "{path}");
        }
        for path in ["/home/u/.sshd", "/home/u/src/x", "/proc/cpuinfo", "/proc"] {
            assert!(policy.sensitive_read(Path::new(path)).is_none(), "{path}");
        }
        let below = policy.sensitive_below(Path::new("/home/u/.local"));
        assert!(below.contains(&PathBuf::from("/home/u/.local/share/cairn")));
        assert!(below.iter().all(|p| p.starts_with("/home/u/.local/share")));
        for path in [
            "/home/u/.npmrc",
            "/home/u/.pypirc",
            "/home/u/.cargo/credentials.toml",
            "/home/u/.config/hub/hosts",
        ] {
            assert!(policy.sensitive_read(Path::new(path)).is_some(), "{path}");
        }
        assert!(
            policy
                .sensitive_read(Path::new("/home/u/.cargo/bin/cargo"))
                .is_none()
        );
    }

    #[test]
    fn readable_roots_expand_home() {
        let policy = policy();
        assert_eq!(
            policy.readable_root(Path::new("/home/u/.rustup/toolchains/x/lib.rs")),
            Some(Path::new("/home/u/.rustup"))
        );
        assert!(
            policy
                .readable_root(Path::new("/usr/include/stdio.h"))
                .is_some()
        );
        assert!(policy.readable_root(Path::new("/usr/lib/x")).is_none());
    }

    #[test]
    fn git_cairn_and_startup_files_are_protected_to_write() {
        let policy = policy();
        for path in [
            "/w/.git/config",
            "/w/.git/hooks/pre-commit",
            "/w/sub/.git/config",
            "/w/.cairn/config.toml",
            "/w/.claude/settings.json",
            "/w/.agents/skills/x/SKILL.md",
            "/w/.claude/commands/x.md",
            "/home/u/.bashrc",
            "/home/u/.zshenv",
            "/home/u/.config/fish/config.fish",
            "/home/u/.local/share/cairn/trusted-projects",
        ] {
            assert!(policy.protected_write(Path::new(path)).is_some(), "{path}");
        }
        for path in [
            "/w/src/git/config",
            "/w/.gitignore",
            "/home/u/notes.bashrc",
            "/w/docs/claude/x.md",
            "/w/.claudeignore",
        ] {
            assert!(policy.protected_write(Path::new(path)).is_none(), "{path}");
        }
    }
}
