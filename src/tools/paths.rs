//! Path resolution against the workspace. Only `resolve` builds a `RealPath`, so an
//! unresolved path cannot reach the write queue or the read tracker by accident.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A path with symlinks, `.` and `..` resolved. For a file that does not exist yet, the real
/// path of its deepest existing ancestor joined with the remaining components.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RealPath {
    real: PathBuf,
    inside_workspace: bool,
}

impl RealPath {
    pub fn as_path(&self) -> &Path {
        &self.real
    }
    /// False when the path (after following symlinks) leaves the workspace.
    pub fn inside_workspace(&self) -> bool {
        self.inside_workspace
    }
    /// The path as shown to people: relative to the workspace when inside it.
    pub fn display_in(&self, workspace: &Path) -> String {
        let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        match self.real.strip_prefix(&root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            Ok(_) => ".".into(),
            Err(_) => self.real.display().to_string(),
        }
    }
}

/// Resolves `raw` (relative to `workspace`, or absolute; `~/` is the home directory).
pub fn resolve(workspace: &Path, raw: &str) -> std::io::Result<RealPath> {
    let root = std::fs::canonicalize(workspace)?;
    let expanded = expand_home(raw);
    let joined = if expanded.is_absolute() { expanded } else { root.join(expanded) };
    let real = resolve_existing_prefix(&joined)?;
    let inside_workspace = real.starts_with(&root);
    Ok(RealPath { real, inside_workspace })
}

fn expand_home(raw: &str) -> PathBuf {
    if let Some(rest) = raw.strip_prefix("~/") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(rest);
        }
    }
    PathBuf::from(raw)
}

/// Canonicalises the longest existing prefix and appends the rest lexically, so that
/// `new/dir/../file` and symlinked parents resolve like the kernel would once created.
fn resolve_existing_prefix(path: &Path) -> std::io::Result<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match std::fs::canonicalize(&existing) {
            Ok(mut real) => {
                for part in rest.iter().rev() {
                    let part = Path::new(part);
                    match part.components().next() {
                        Some(Component::ParentDir) => {
                            real.pop();
                        }
                        Some(Component::CurDir) | None => {}
                        _ => real.push(part),
                    }
                }
                return Ok(real);
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                let Some(name) = existing.file_name().map(|n| n.to_os_string()) else {
                    // `..` or root: take the component off lexically and keep going.
                    match existing.components().next_back() {
                        Some(Component::ParentDir) => {
                            rest.push("..".into());
                            existing.pop();
                            continue;
                        }
                        _ => return Err(err),
                    }
                };
                rest.push(name);
                if !existing.pop() {
                    return Err(err);
                }
            }
            Err(err) => return Err(err),
        }
    }
}
