//! What list_dir, glob and grep share around their walk (`confined_walk`): the check of the
//! walk's root, paths shown relative to the workspace so the model can pass them straight to
//! read_file, and the notes on what the walk could not enter. The walk itself respects
//! `.gitignore` (and `.ignore`) even outside a git repository, shows hidden files but skips
//! `.git`, never enters sensitive directories below the root (keys, cairn's sessions), and
//! never follows a symlink.

use std::path::Path;

use super::confined::{Beneath, OpenError};
use super::confined_walk::Problem;
use super::{FileError, changed, open_error};

/// Problems shown at most; the rest are counted.
const MAX_PROBLEMS: usize = 20;

/// How the walk's problems are shown: `path/ (why)`, sorted, capped with a count.
pub fn problem_notes(workspace_real: &Path, problems: &[Problem]) -> Vec<String> {
    let mut notes: Vec<String> = problems
        .iter()
        .take(MAX_PROBLEMS)
        .map(|p| {
            let slash = if p.is_dir { "/" } else { "" };
            format!("{}{slash} ({})", shown_path(workspace_real, &p.path), p.why)
        })
        .collect();
    if problems.len() > MAX_PROBLEMS {
        notes.push(format!("and {} more", problems.len() - MAX_PROBLEMS));
    }
    notes
}

/// How a walked path is shown: relative to the workspace when inside it, else absolute.
pub fn shown_path(workspace_real: &Path, path: &Path) -> String {
    match path.strip_prefix(workspace_real) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        Ok(_) => ".".into(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// The workspace's real path, for `shown_path`.
pub fn workspace_real(workspace: &Path) -> std::path::PathBuf {
    std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf())
}

/// What a walk's root is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootKind {
    Dir,
    File,
}

/// Checks a walk's root beneath its place: it exists, and no symlink was swapped in on the
/// way since the check. A missing root is a correctable error.
pub fn existing_root(place: &Beneath, display: &str) -> Result<RootKind, FileError> {
    let missing = || {
        FileError::Failed(format!(
            "{display}: no such file or directory (list_dir . shows the top of the workspace)"
        ))
    };
    if place.rel.as_os_str().is_empty() {
        place
            .dir()
            .map_err(|err| open_error(display, "reading", err))?;
        return Ok(RootKind::Dir);
    }
    let (dir, name) = match place.parent() {
        Ok(found) => found,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(missing()),
        Err(err) => return Err(open_error(display, "reading", err)),
    };
    match dir.open_regular(&name) {
        Ok(_) => Ok(RootKind::File),
        Err(OpenError::Missing) => Err(missing()),
        Err(OpenError::Directory) => Ok(RootKind::Dir),
        Err(OpenError::Symlink) => Err(changed(display)),
        Err(OpenError::NotRegular) => Err(FileError::Failed(format!(
            "{display} is not a regular file or directory (a device, pipe or socket)"
        ))),
        Err(OpenError::Io(err)) => Err(open_error(display, "reading", err)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::PathBuf;

    use super::*;

    #[test]
    fn problems_are_shown_relative_and_capped() {
        let root = Path::new("/w");
        let problems: Vec<Problem> = (0..22)
            .map(|i| Problem {
                path: PathBuf::from(format!("/w/d{i:02}")),
                is_dir: true,
                why: "permission denied".into(),
            })
            .collect();
        let notes = problem_notes(root, &problems);
        assert_eq!(notes.len(), 21);
        assert_eq!(notes[0], "d00/ (permission denied)");
        assert_eq!(notes[20], "and 2 more");
    }
}
