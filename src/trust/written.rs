//! The project settings files that changed while a cairn session ran, remembered so a later
//! run that trusts the project (`--trust-project`) names them in its warning: a model can
//! plant a skill, a command or a hook in one session (with a write the user allowed, or in
//! `never`) that the next trusting run would honour as if the checkout had held it.
//!
//! A session takes a `SettingsSnapshot` (stamps only: size, mtime, inode) of the project
//! settings (`crate::dirs::PROJECT_SETTINGS` and where their links lead) when it starts and
//! compares at the end of every turn; what is new or changed goes to the `WrittenLedger` in
//! cairn's data directory with its content hash. A file is named later only while its
//! content is still what the session left (a later `git checkout` of it is not cairn's).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::Digest as _;

/// The file in cairn's data directory that remembers them (one JSON object a line).
pub const WRITTEN_FILE: &str = "settings-written";
/// Files looked at per snapshot at most.
const MAX_FILES: usize = 2000;
/// Levels below a settings directory walked at most.
const MAX_DEPTH: usize = 8;
/// Lines the ledger keeps (the oldest go).
const MAX_LINES: usize = 2000;

/// The stamps of the project settings files of a workspace at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsSnapshot {
    files: BTreeMap<PathBuf, (u64, i64, i64, u64)>,
}

impl SettingsSnapshot {
    /// The project settings files of `workspace` now, by absolute path.
    pub fn take(workspace: &Path) -> Self {
        let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let mut files = BTreeMap::new();
        let mut roots: Vec<PathBuf> = crate::dirs::PROJECT_SETTINGS
            .iter()
            .map(|name| root.join(name))
            .collect();
        roots.extend(crate::dirs::linked_project_settings(&root));
        for dir in roots {
            walk(&dir, 0, &mut files);
        }
        Self { files }
    }

    /// The files new or changed in `self` since `earlier`.
    pub fn changed_since(&self, earlier: &SettingsSnapshot) -> Vec<PathBuf> {
        self.files
            .iter()
            .filter(|(path, stamp)| earlier.files.get(*path) != Some(stamp))
            .map(|(path, _)| path.clone())
            .collect()
    }
}

fn walk(path: &Path, depth: usize, files: &mut BTreeMap<PathBuf, (u64, i64, i64, u64)>) {
    if files.len() >= MAX_FILES {
        return;
    }
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    if meta.is_file() {
        let stamp = (meta.len(), meta.mtime(), meta.mtime_nsec(), meta.ino());
        // By real path: a file reached through a link and directly is one file.
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        files.insert(real, stamp);
    } else if meta.is_dir() && depth < MAX_DEPTH {
        let Ok(children) = std::fs::read_dir(path) else {
            return;
        };
        for child in children.flatten() {
            walk(&child.path(), depth + 1, files);
        }
    }
}

/// One remembered change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsWrite {
    pub workspace: PathBuf,
    pub file: PathBuf,
    pub sha256: String,
    pub session: String,
    /// When the change was seen (RFC 3339, seconds).
    pub at: String,
}

/// The remembered changes, in cairn's data directory.
#[derive(Debug, Clone)]
pub struct WrittenLedger {
    path: PathBuf,
}

impl WrittenLedger {
    pub fn in_data_dir(data: &Path) -> Self {
        Self {
            path: data.join(WRITTEN_FILE),
        }
    }

    fn entries(&self) -> Vec<SettingsWrite> {
        std::fs::read_to_string(&self.path)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// Remembers that `session` left `files` (absolute paths) as they are now in `workspace`.
    pub fn record(
        &self,
        workspace: &Path,
        files: &[PathBuf],
        session: &str,
    ) -> std::io::Result<()> {
        if files.is_empty() {
            return Ok(());
        }
        let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        let mut lines: Vec<String> = std::fs::read_to_string(&self.path)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        for file in files {
            let Some(sha256) = content_hash(file) else {
                continue;
            };
            let written = SettingsWrite {
                workspace: root.clone(),
                file: file.clone(),
                sha256,
                session: session.to_string(),
                at: at.clone(),
            };
            lines.push(serde_json::to_string(&written).map_err(std::io::Error::other)?);
        }
        let skip = lines.len().saturating_sub(MAX_LINES);
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let temp = self
            .path
            .with_extension(format!("tmp-{}", std::process::id()));
        let mut out = std::fs::File::create(&temp)?;
        for line in &lines[skip..] {
            writeln!(out, "{line}")?;
        }
        drop(out);
        std::fs::rename(&temp, &self.path)
    }

    /// The files of `workspace` a session changed whose content is still what it left: the
    /// latest record of each file, oldest first.
    pub fn still_as_written(&self, workspace: &Path) -> Vec<SettingsWrite> {
        let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
        let mut latest: BTreeMap<PathBuf, SettingsWrite> = BTreeMap::new();
        for entry in self.entries().into_iter().filter(|e| e.workspace == root) {
            latest.insert(entry.file.clone(), entry);
        }
        let mut out: Vec<SettingsWrite> = latest
            .into_values()
            .filter(|e| content_hash(&e.file).as_ref() == Some(&e.sha256))
            .collect();
        out.sort_by(|a, b| a.at.cmp(&b.at).then(a.file.cmp(&b.file)));
        out
    }
}

/// What `--trust-project` says when files it is about to trust were left by a cairn session.
pub fn trust_project_warning(ledger: &WrittenLedger, workspace: &Path) -> Option<String> {
    let written = ledger.still_as_written(workspace);
    if written.is_empty() {
        return None;
    }
    let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let named: Vec<String> = written
        .iter()
        .map(|w| {
            let shown = w.file.strip_prefix(&root).unwrap_or(&w.file);
            format!("{} (session {}, {})", shown.display(), w.session, w.at)
        })
        .collect();
    Some(format!(
        "--trust-project trusts the project's rules, skills, commands and hooks as they are now, and {} of them changed while an earlier cairn session ran: {}. Review them before trusting the project",
        named.len(),
        named.join(", ")
    ))
}

fn content_hash(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(format!("{:x}", sha2::Sha256::digest(&bytes)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_change_is_named_while_its_content_stays_as_the_session_left_it() {
        let ws = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(ws.path()).unwrap();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::write(root.join(".claude/settings.json"), "{}").unwrap();
        std::fs::write(root.join("README.md"), "hi").unwrap();
        let start = SettingsSnapshot::take(&root);
        // The session plants a skill, rewrites the settings, writes an ordinary file.
        std::fs::create_dir_all(root.join(".agents/skills/x")).unwrap();
        std::fs::write(root.join(".agents/skills/x/SKILL.md"), "planted").unwrap();
        std::fs::write(root.join(".claude/settings.json"), "{\"hooks\":1}").unwrap();
        std::fs::write(root.join("README.md"), "changed").unwrap();
        let changed = SettingsSnapshot::take(&root).changed_since(&start);
        assert_eq!(
            changed,
            [
                root.join(".agents/skills/x/SKILL.md"),
                root.join(".claude/settings.json")
            ]
        );
        let ledger = WrittenLedger::in_data_dir(data.path());
        ledger.record(&root, &changed, "s1").unwrap();
        let warning = trust_project_warning(&ledger, &root).unwrap();
        assert!(
            warning.contains(".agents/skills/x/SKILL.md (session s1"),
            "{warning}"
        );
        assert!(
            warning.contains(".claude/settings.json (session s1"),
            "{warning}"
        );
        // Put back as the checkout had it: no longer the session's.
        std::fs::write(root.join(".claude/settings.json"), "{}").unwrap();
        let warning = trust_project_warning(&ledger, &root).unwrap();
        assert!(!warning.contains("settings.json"), "{warning}");
        std::fs::remove_file(root.join(".agents/skills/x/SKILL.md")).unwrap();
        assert_eq!(trust_project_warning(&ledger, &root), None);
        // Another workspace's records are not this one's.
        let other = tempfile::tempdir().unwrap();
        assert_eq!(trust_project_warning(&ledger, other.path()), None);
    }
}
