//! Where a path argument lands: inside the workspace, in the temp directory, outside, or
//! unknown until run time. Follows `cd`, `~`, `$HOME`, `..` and symlinks of existing parents.
//! What counts as "temp" and "home" is injected (`Places`), never probed during a judgement,
//! so the verdicts do not depend on where a build farm puts the checkout or `$HOME`.
//! Also the protected paths (`.git/`, `.cairn/`, shell start-up files, `~/.ssh/`).

use std::path::{Component, Path, PathBuf};

use crate::permissions::classify::{Class, Location, Walker, Word};
use crate::secret_stores::SecretStores;

/// The directories the classifier needs besides the workspace: scratch space that only counts
/// as mutating, and the home directory `~` and `$HOME` stand for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Places {
    /// Temp directories (their real paths). One that contains the workspace does not count:
    /// then its other entries are a neighbour's files.
    pub temp: Vec<PathBuf>,
    /// The home directory; `None` when unknown (`~` is then only known at run time).
    pub home: Option<PathBuf>,
    /// The secret stores: commands that name one, or walk a directory above one, are held.
    pub secrets: SecretStores,
}

impl Places {
    /// The defaults of this process's environment, for tests: `$TMPDIR` (or the system's), `/tmp`,
    /// `/var/tmp`, `$HOME` and cairn's directories. cairn itself passes the `Places` launch built.
    #[cfg(any(test, feature = "testing"))]
    pub fn from_env() -> Self {
        Self::with_dirs(&crate::dirs::Dirs::from_env())
    }

    /// As `from_env`, with cairn's directories given (their own places are secret stores too).
    pub fn with_dirs(dirs: &crate::dirs::Dirs) -> Self {
        let system = std::env::temp_dir();
        let mut temp = vec![std::fs::canonicalize(&system).unwrap_or(system)];
        for fixed in ["/tmp", "/var/tmp"] {
            let fixed = PathBuf::from(fixed);
            if !temp.contains(&fixed) {
                temp.push(fixed);
            }
        }
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let secrets = SecretStores::new(&crate::secret_stores::known_homes(), &dirs.own());
        Self {
            temp,
            home,
            secrets,
        }
    }

    /// The same places with the session's list of secret stores (`[sandbox] deny_read`).
    pub fn with_secrets(mut self, secrets: SecretStores) -> Self {
        self.secrets = secrets;
        self
    }
}

impl Walker {
    /// Resolves a path argument against the current directory and the workspace.
    pub fn locate(&self, raw: &Word) -> Location {
        let Some(real) = self.real_path(raw) else {
            return Location::Unknown;
        };
        if real.starts_with(&self.root) {
            Location::Inside
        } else if is_temp(&real, &self.root, &self.places.temp) {
            Location::Temp
        } else {
            Location::Outside
        }
    }

    /// How the path a word names relates to the secret stores (`~`, `/`, `..` climbing into
    /// the home hold them; `~/.*/id_rsa` may be inside one); `None` when unrelated or only
    /// known at run time.
    pub(crate) fn store_reach(&self, raw: &Word) -> Option<(bool, String)> {
        let text = raw.text.as_str();
        let pathlike = text.starts_with(['/', '~', '.', '$']) || text.contains('/');
        if !pathlike && self.cwd.as_ref() == Some(&self.root) {
            return None;
        }
        let real = self.real_path(raw)?;
        match self.places.secrets.reach(&real)? {
            crate::secret_stores::StoreReach::Inside(store) => Some((true, store.spelled.clone())),
            crate::secret_stores::StoreReach::Above(store) => Some((false, store.spelled.clone())),
        }
    }

    /// The real path a word names; `None` when only known at run time. Paths through
    /// `/proc/*/` and `/dev/fd/` count as unknown: `/dev/fd/..` leads anywhere, and
    /// `/proc/self` during the judgement is not the command's.
    fn real_path(&self, raw: &Word) -> Option<PathBuf> {
        let path = self.expand(raw)?;
        let absolute = if path.is_absolute() {
            path
        } else {
            self.cwd.as_ref()?.join(path)
        };
        if absolute.starts_with("/proc") || absolute.starts_with("/dev/fd") {
            return None;
        }
        Some(resolve_real(&normalize(&absolute)))
    }

    /// Marks and describes a write to a protected path: inside any `.git` directory, `.cairn/`,
    /// the shell's start-up files, `~/.ssh/`, git's and cairn's own configuration.
    pub fn protected_write(&self, target: &Word) -> Option<String> {
        let protected = match self.real_path(target) {
            Some(real) => {
                let home = self
                    .places
                    .home
                    .as_ref()
                    .map(|h| resolve_real(&normalize(h)));
                is_protected(&real, &self.root, home.as_deref())
            }
            // Only the spelling is known (`/dev/fd/..` and what follows it).
            None => {
                let text = target.text.trim_end_matches('"');
                is_protected(Path::new(text), Path::new("/nonexistent-workspace"), None)
                    // `"$PWD"/.claude/x`, `$DIR/.agents/skills/x`: named, wherever it is.
                    || Path::new(text)
                        .components()
                        .any(|c| crate::dirs::is_project_settings(c.as_os_str()))
                    || text.contains("/.ssh/")
                    || text.contains("/.config/fish/")
            }
        };
        if !protected {
            return None;
        }
        self.mark_protected(&target.text);
        Some(format!("writes a protected path ({})", target.text))
    }

    /// The path a word names, with `~` and `$HOME` expanded; `None` when only known at run time.
    fn expand(&self, raw: &Word) -> Option<PathBuf> {
        let text = raw.text.as_str();
        for home_var in ["$HOME", "${HOME}"] {
            if let Some(rest) = text.strip_prefix(home_var) {
                if rest.contains('$') || rest.contains('`') {
                    return None;
                }
                let rest = rest.trim_matches('"').trim_start_matches('/');
                return self.places.home.as_ref().map(|h| h.join(rest));
            }
        }
        if !raw.literal {
            return None;
        }
        if text == "~" {
            return self.places.home.clone();
        }
        if let Some(rest) = text.strip_prefix("~/") {
            return self.places.home.as_ref().map(|h| h.join(rest));
        }
        if let Some(user) = text.strip_prefix('~') {
            // Another user's home directory.
            return Some(PathBuf::from("/home").join(user));
        }
        Some(PathBuf::from(text))
    }

    /// What writing to `target` means, or `None` when it is harmless (`/dev/null`, a descriptor).
    pub fn write_target(&self, target: &Word) -> Option<(Class, String)> {
        let shown = &target.text;
        if target.literal && is_harmless_device(shown) {
            return None;
        }
        if crate::permissions::classify::redirects::is_network_device(shown) {
            return Some((
                Class::Dangerous,
                format!("sends data over the network ({shown})"),
            ));
        }
        if target.literal && shown.starts_with("/dev/") && !shown.starts_with("/dev/fd/") {
            return Some((Class::Dangerous, format!("writes to the device {shown}")));
        }
        let location = self.locate(target);
        if let Some(why) = self.protected_write(target) {
            let class = if location == Location::Inside {
                Class::Mutating
            } else {
                Class::Dangerous
            };
            return Some((class, why));
        }
        Some(match location {
            Location::Inside => (Class::Mutating, format!("writes {shown}")),
            Location::Temp => (
                Class::Mutating,
                format!("writes {shown} in the temp directory"),
            ),
            Location::Outside => (
                Class::Dangerous,
                format!("writes outside the workspace ({shown})"),
            ),
            Location::Unknown => (
                Class::Dangerous,
                format!("writes to a path only known at run time ({shown})"),
            ),
        })
    }
}

/// Removes `.` and `..` lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Scratch space in a temp directory is only mutating. Not when the workspace itself lives in
/// that temp directory: then `..` is a neighbour's files, and outside is outside.
fn is_temp(real: &Path, workspace: &Path, temp: &[PathBuf]) -> bool {
    temp.iter()
        .any(|t| real.starts_with(t) && real != t && !workspace.starts_with(t))
}

/// Follows symlinks in the longest existing prefix of an absolute, normalized path.
fn resolve_real(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            return rest
                .iter()
                .rev()
                .fold(real, |acc: PathBuf, part| acc.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Devices and descriptors a write to changes nothing on disk: exactly `/dev/fd/N`, not
/// `/dev/fd/../…`, which is a path through `/proc` to anywhere.
pub(crate) fn is_harmless_device(path: &str) -> bool {
    let descriptor = |rest: Option<&str>| {
        rest.is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero" | "-"
    ) || descriptor(path.strip_prefix("/dev/fd/"))
        || descriptor(path.strip_prefix("/proc/self/fd/"))
}

/// Start-up files recognised by name wherever they are (another user's home, a chroot).
const STARTUP_NAMES: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
];

fn is_protected(real: &Path, workspace: &Path, home: Option<&Path>) -> bool {
    let in_git_or_cairn = real
        .components()
        .any(|c| matches!(c, Component::Normal(n) if n == ".git"))
        || crate::dirs::in_project_settings(workspace, real);
    let startup_name = real
        .file_name()
        .is_some_and(|n| STARTUP_NAMES.iter().any(|s| n == *s));
    let in_home = home.is_some_and(|home| {
        real.strip_prefix(home).is_ok_and(|rest| {
            crate::fs::places::HOME_PROTECTED
                .iter()
                .any(|p| rest.starts_with(p))
        })
    });
    in_git_or_cairn || startup_name || in_home
}
