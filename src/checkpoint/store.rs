//! The checkpoint store: one shadow git repository per workspace under cairn's data dir,
//! driven through the `git` CLI (see `git`). The git CLI rather than `gix`: no new heavy
//! dependency, and `git add -A` with the index's stat cache (plus the untracked cache) only
//! hashes files whose size or mtime changed, so a checkpoint of a large workspace after the
//! first costs a directory walk. Objects are content-addressed: an unchanged file costs nothing.
//!
//! What is left out: everything the workspace's `.gitignore` files ignore, dependency and
//! build directories (`SKIPPED_DIRS`), and files over `MAX_FILE_BYTES`; a snapshot names the
//! latter two so the user can be told.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::git::{self, Git};

/// Files larger than this are not recorded.
pub const MAX_FILE_BYTES: u64 = 5 * 1024 * 1024;

/// Dependency and build directories, skipped wherever they are.
pub const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".gradle",
    ".next",
    ".mypy_cache",
    ".pytest_cache",
];

const HEAD_REF: &str = "refs/cairn/head";

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("cannot run git (checkpoints need it): {0}")]
    NoGit(#[source] std::io::Error),
    #[error("git {command} failed: {stderr}")]
    Git { command: String, stderr: String },
    #[error("checkpoint store {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("unexpected output from git {0}")]
    Parse(&'static str),
    #[error("refusing to write {0}: a parent directory is a symbolic link")]
    SymlinkParent(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A checkpoint: the id of a commit in the shadow repository.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CheckpointId(pub String);

impl std::fmt::Display for CheckpointId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Something a snapshot left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub path: String,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub id: CheckpointId,
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Created,
    Changed,
    Deleted,
}

/// A blob in a tree: its object id and git mode (`100644`, `100755`, `120000`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    pub id: String,
    pub mode: String,
}

/// One path that differs between two checkpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathChange {
    pub path: String,
    pub kind: ChangeKind,
    pub before: Option<Blob>,
    pub after: Option<Blob>,
}

/// The shadow repository of one workspace.
#[derive(Debug, Clone)]
pub struct CheckpointStore {
    git: Git,
}

impl CheckpointStore {
    /// Opens (creating on first use) the store of `workspace` under `data_dir/checkpoints`.
    pub fn open(data_dir: &Path, workspace: &Path) -> Result<Self, CheckpointError> {
        let workspace = workspace.canonicalize().map_err(io_err(workspace))?;
        let root = data_dir.join("checkpoints");
        let git_dir = root.join(store_key(&workspace));
        let store = CheckpointStore {
            git: Git {
                index: git_dir.join("cairn-index"),
                git_dir: git_dir.clone(),
                work_tree: workspace.clone(),
            },
        };
        if !git::exists(&git_dir) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&git_dir)
                .map_err(io_err(&git_dir))?;
            store.git.init()?;
            let info = git_dir.join("info");
            std::fs::create_dir_all(&info).map_err(io_err(&info))?;
            let mut exclude = String::from("# written by cairn: dependency and build dirs\n");
            for dir in SKIPPED_DIRS {
                exclude.push_str(&format!("{dir}/\n"));
            }
            let path = info.join("exclude");
            std::fs::write(&path, exclude).map_err(io_err(&path))?;
            let path = git_dir.join("cairn-workspace");
            std::fs::write(&path, workspace.display().to_string()).map_err(io_err(&path))?;
        }
        Ok(store)
    }

    pub fn workspace(&self) -> &Path {
        &self.git.work_tree
    }

    pub fn git_dir(&self) -> &Path {
        &self.git.git_dir
    }

    /// Records the workspace as it is now. A workspace unchanged since the last snapshot gets
    /// the same id back.
    pub fn snapshot(&self) -> Result<Snapshot, CheckpointError> {
        let mut skipped = self.skipped_dirs();
        // Files new or changed since the last snapshot (the stat cache answers for the rest):
        // the huge ones among them are left out.
        let listed = self.git.run(&[
            "-c",
            "core.untrackedCache=true",
            "ls-files",
            "-z",
            "-m",
            "-o",
            "--exclude-standard",
        ])?;
        let mut huge = Vec::new();
        for path in split_nul(&listed) {
            let full = self.git.work_tree.join(path);
            if let Ok(meta) = std::fs::symlink_metadata(&full)
                && meta.is_file()
                && meta.len() > MAX_FILE_BYTES
            {
                skipped.push(Skipped {
                    path: path.to_string(),
                    why: format!("{} MiB, over the 5 MiB limit", meta.len() / (1024 * 1024)),
                });
                huge.push(path.to_string());
            }
        }
        huge.sort();
        huge.dedup();
        if !huge.is_empty() {
            // A file that grew past the limit leaves the snapshot instead of keeping its old
            // content there.
            let mut spec = Vec::new();
            for path in &huge {
                spec.extend_from_slice(format!(":(literal){path}").as_bytes());
                spec.push(0);
            }
            self.git.run_with_input(
                &[
                    "rm",
                    "--cached",
                    "-q",
                    "--ignore-unmatch",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                ],
                Some(&spec),
            )?;
        }
        let mut spec = b".\0".to_vec();
        for path in &huge {
            spec.extend_from_slice(format!(":(exclude,literal){path}").as_bytes());
            spec.push(0);
        }
        self.git
            .run_with_input(
                &[
                    "-c",
                    "core.untrackedCache=true",
                    "add",
                    "-A",
                    "--ignore-errors",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                ],
                Some(&spec),
            )
            .or_else(|err| match err {
                // `--ignore-errors` still exits 1 after skipping an unreadable file; the rest
                // is in the index.
                CheckpointError::Git { ref stderr, .. }
                    if stderr.contains("adding files failed") =>
                {
                    Ok(Vec::new())
                }
                other => Err(other),
            })?;
        let tree = self.git.run_str(&["write-tree"])?;
        let parent = self
            .git
            .run_str(&[
                "rev-parse",
                "-q",
                "--verify",
                &format!("{HEAD_REF}^{{commit}}"),
            ])
            .ok()
            .filter(|p| !p.is_empty());
        if let Some(parent) = &parent
            && self
                .git
                .run_str(&["rev-parse", &format!("{parent}^{{tree}}")])?
                == tree
        {
            return Ok(Snapshot {
                id: CheckpointId(parent.clone()),
                skipped,
            });
        }
        let mut args = vec!["commit-tree", tree.as_str(), "-m", "cairn checkpoint"];
        if let Some(parent) = &parent {
            args.extend(["-p", parent.as_str()]);
        }
        let commit = self.git.run_str(&args)?;
        self.git.run(&["update-ref", HEAD_REF, &commit])?;
        Ok(Snapshot {
            id: CheckpointId(commit),
            skipped,
        })
    }

    /// Dependency and build directories at the top of the workspace, which snapshots skip.
    fn skipped_dirs(&self) -> Vec<Skipped> {
        SKIPPED_DIRS
            .iter()
            .filter(|dir| self.git.work_tree.join(dir).is_dir())
            .map(|dir| Skipped {
                path: format!("{dir}/"),
                why: "dependency or build directory".to_string(),
            })
            .collect()
    }

    /// The files that differ between two checkpoints, in path order.
    pub fn diff(
        &self,
        a: &CheckpointId,
        b: &CheckpointId,
    ) -> Result<Vec<PathChange>, CheckpointError> {
        if a == b {
            return Ok(Vec::new());
        }
        let raw = self
            .git
            .run(&["diff-tree", "-r", "-z", "--no-renames", &a.0, &b.0])?;
        let mut fields = split_nul(&raw);
        let mut changes = Vec::new();
        while let Some(meta) = fields.next() {
            let path = fields.next().ok_or(CheckpointError::Parse("diff-tree"))?;
            let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
            let [old_mode, new_mode, old_id, new_id, status] = parts[..] else {
                return Err(CheckpointError::Parse("diff-tree"));
            };
            // Embedded repositories appear as gitlinks; their content is not ours to restore.
            if old_mode == "160000" || new_mode == "160000" {
                continue;
            }
            let blob = |mode: &str, id: &str| {
                (mode != "000000").then(|| Blob {
                    id: id.to_string(),
                    mode: mode.to_string(),
                })
            };
            let kind = match status {
                "A" => ChangeKind::Created,
                "D" => ChangeKind::Deleted,
                _ => ChangeKind::Changed,
            };
            changes.push(PathChange {
                path: path.to_string(),
                kind,
                before: blob(old_mode, old_id),
                after: blob(new_mode, new_id),
            });
        }
        Ok(changes)
    }

    /// The contents of blobs, in the order asked.
    pub fn blobs(&self, ids: &[&str]) -> Result<Vec<Vec<u8>>, CheckpointError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut input = Vec::new();
        for id in ids {
            writeln!(input, "{id}").map_err(io_err(self.git_dir()))?;
        }
        let out = self
            .git
            .run_with_input(&["cat-file", "--batch"], Some(&input))?;
        let mut rest = &out[..];
        let mut contents = Vec::with_capacity(ids.len());
        for _ in ids {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .ok_or(CheckpointError::Parse("cat-file"))?;
            let header = String::from_utf8_lossy(&rest[..end]).to_string();
            rest = &rest[end + 1..];
            let size: usize = header
                .rsplit(' ')
                .next()
                .and_then(|s| s.parse().ok())
                .ok_or(CheckpointError::Parse("cat-file"))?;
            if rest.len() < size + 1 {
                return Err(CheckpointError::Parse("cat-file"));
            }
            contents.push(rest[..size].to_vec());
            rest = &rest[size + 1..];
        }
        Ok(contents)
    }

    /// The entries of `paths` in checkpoint `id` (absent paths are missing from the map).
    fn entries(
        &self,
        id: &CheckpointId,
        paths: &[&str],
    ) -> Result<HashMap<String, Blob>, CheckpointError> {
        let mut map = HashMap::new();
        for chunk in paths.chunks(500) {
            let mut args = vec!["ls-tree", "-r", "-z", "--full-tree", id.0.as_str(), "--"];
            let specs: Vec<String> = chunk.iter().map(|p| format!(":(literal){p}")).collect();
            args.extend(specs.iter().map(String::as_str));
            let out = self.git.run(&args)?;
            for entry in split_nul(&out) {
                let Some((meta, path)) = entry.split_once('\t') else {
                    continue;
                };
                let parts: Vec<&str> = meta.split(' ').collect();
                if let [mode, "blob", blob] = parts[..] {
                    map.insert(
                        path.to_string(),
                        Blob {
                            id: blob.to_string(),
                            mode: mode.to_string(),
                        },
                    );
                }
            }
        }
        Ok(map)
    }

    /// Puts `paths` back as they were in checkpoint `id`: files it had are written (with their
    /// mode), files it did not have are removed. The shadow index is left alone; the next
    /// snapshot sees the result.
    pub fn restore(&self, id: &CheckpointId, paths: &[&str]) -> Result<(), CheckpointError> {
        let entries = self.entries(id, paths)?;
        let wanted: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| entries.contains_key(*p))
            .collect();
        let ids: Vec<&str> = wanted.iter().map(|p| entries[*p].id.as_str()).collect();
        let contents = self.blobs(&ids)?;
        // Removals first: a file may come back where a directory was, or the other way round.
        for path in paths.iter().filter(|p| !entries.contains_key(**p)) {
            let full = self.safe_path(path)?;
            match std::fs::remove_file(&full) {
                Ok(()) => self.prune_empty_parents(&full),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(io_err(&full)(err)),
            }
        }
        for (path, bytes) in wanted.iter().zip(contents) {
            let full = self.safe_path(path)?;
            write_entry(&full, &bytes, &entries[*path].mode)?;
        }
        Ok(())
    }

    /// `path` inside the workspace, refusing to go through a symbolic link on the way (a
    /// command may have replaced a directory by a link to elsewhere).
    fn safe_path(&self, path: &str) -> Result<PathBuf, CheckpointError> {
        let rel = Path::new(path);
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(CheckpointError::Parse("a path outside the workspace"));
        }
        let mut at = self.git.work_tree.clone();
        let mut parts = rel.components().peekable();
        while let Some(part) = parts.next() {
            if parts.peek().is_none() {
                break;
            }
            at.push(part);
            if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(CheckpointError::SymlinkParent(path.to_string()));
            }
        }
        Ok(self.git.work_tree.join(rel))
    }

    /// Removes directories a removal left empty, up to the workspace.
    fn prune_empty_parents(&self, file: &Path) {
        let mut dir = file.parent();
        while let Some(d) = dir {
            if d == self.git.work_tree || std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }

    /// Bytes the store takes on disk.
    pub fn disk_usage(&self) -> u64 {
        fn walk(dir: &Path) -> u64 {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return 0;
            };
            entries
                .flatten()
                .map(|e| match e.file_type() {
                    Ok(t) if t.is_dir() => walk(&e.path()),
                    _ => e.metadata().map(|m| m.len()).unwrap_or(0),
                })
                .sum()
        }
        walk(self.git_dir())
    }
}

fn write_entry(full: &Path, bytes: &[u8], mode: &str) -> Result<(), CheckpointError> {
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    // Whatever is there now (a file, a link, an empty directory) gives way.
    if let Ok(meta) = std::fs::symlink_metadata(full) {
        let removed = if meta.is_dir() {
            std::fs::remove_dir(full)
        } else {
            std::fs::remove_file(full)
        };
        removed.map_err(io_err(full))?;
    }
    if mode == "120000" {
        let target = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes);
        return std::os::unix::fs::symlink(target, full).map_err(io_err(full));
    }
    std::fs::write(full, bytes).map_err(io_err(full))?;
    if mode == "100755" {
        let mut perms = std::fs::metadata(full).map_err(io_err(full))?.permissions();
        perms.set_mode(perms.mode() | 0o111);
        std::fs::set_permissions(full, perms).map_err(io_err(full))?;
    }
    Ok(())
}

fn split_nul(bytes: &[u8]) -> impl Iterator<Item = &str> {
    bytes
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| std::str::from_utf8(s).unwrap_or_default())
}

/// A directory name for the workspace's store: readable, and unique by a stable hash (FNV-1a)
/// of the whole path.
fn store_key(workspace: &Path) -> String {
    let bytes = workspace.as_os_str().as_encoded_bytes();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(40)
        .collect();
    format!("{name}-{hash:016x}")
}
