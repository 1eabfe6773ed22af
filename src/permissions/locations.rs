//! Where a path argument lands: inside the workspace, in the temp directory, outside, or
//! unknown until run time. Follows `cd`, `~`, `$HOME`, `..` and symlinks of existing parents.

use std::path::{Component, Path, PathBuf};

use crate::permissions::classify::{Class, Location, Walker, Word};

impl Walker {
    /// Resolves a path argument against the current directory and the workspace.
    pub fn locate(&self, raw: &Word) -> Location {
        let Some(path) = self.expand(raw) else {
            return Location::Unknown;
        };
        let absolute = if path.is_absolute() {
            path
        } else {
            match &self.cwd {
                Some(cwd) => cwd.join(path),
                None => return Location::Unknown,
            }
        };
        let real = resolve_real(&normalize(&absolute));
        if real.starts_with(&self.root) {
            Location::Inside
        } else if is_temp(&real, &self.root) {
            Location::Temp
        } else {
            Location::Outside
        }
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
                return self.home.as_ref().map(|h| h.join(rest));
            }
        }
        if !raw.literal {
            return None;
        }
        if text == "~" {
            return self.home.clone();
        }
        if let Some(rest) = text.strip_prefix("~/") {
            return self.home.as_ref().map(|h| h.join(rest));
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
        if target.literal && shown.starts_with("/dev/") {
            return Some((Class::Dangerous, format!("writes to the device {shown}")));
        }
        Some(match self.locate(target) {
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
fn is_temp(real: &Path, workspace: &Path) -> bool {
    static SYSTEM_TEMP: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let system = SYSTEM_TEMP.get_or_init(|| {
        let dir = std::env::temp_dir();
        std::fs::canonicalize(&dir).unwrap_or(dir)
    });
    [system.as_path(), Path::new("/tmp"), Path::new("/var/tmp")]
        .iter()
        .any(|t| real.starts_with(t) && real != *t && !workspace.starts_with(t))
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

pub(crate) fn is_harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero" | "-"
    ) || path.starts_with("/dev/fd/")
        || path.starts_with("/proc/self/fd/")
}
