//! The checkpoint store: one shadow git repository per workspace under cairn's data dir,
//! driven through the `git` CLI (see `git`). The git CLI rather than `gix`: no new heavy
//! dependency, and git's index caches (stat data, untracked directories) make a checkpoint of
//! a large workspace after the first cost about a `git status` (see `snapshot`). Objects are
//! content-addressed: an unchanged file costs nothing; `maintain` packs them with deltas.
//!
//! This file: the store's types, opening it, and reading checkpoints back (`diff`, `blobs`).
//! Taking them: `snapshot`; putting files back: `restore`; packing: `maintain`.
//!
//! What is left out: everything the workspace's `.gitignore` files ignore, dependency and
//! build directories (`SKIPPED_DIRS`), files over `MAX_FILE_BYTES`, and repositories nested in
//! the workspace (submodules included: their files are theirs, never recorded nor restored); a
//! snapshot names what it left out so the user can be told.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

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

/// The last checkpoint; the shadow repository's HEAD points at it, so `git status` compares
/// the shadow index with it.
pub(super) const HEAD_REF: &str = "refs/cairn/head";

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

pub(super) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
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
    pub(super) git: Git,
    /// Refs are files (not reftable): a snapshot may write its ref itself.
    pub(super) files_refs: bool,
}

impl CheckpointStore {
    /// Opens (creating on first use) the store of `workspace` under `data_dir/checkpoints`.
    pub fn open(data_dir: &Path, workspace: &Path) -> Result<Self, CheckpointError> {
        let workspace = workspace.canonicalize().map_err(io_err(workspace))?;
        let root = data_dir.join("checkpoints");
        let git_dir = root.join(store_key(&workspace));
        let mut store = CheckpointStore {
            git: Git {
                index: git_dir.join("cairn-index"),
                git_dir: git_dir.clone(),
                untracked_cache: git::mtimes_trusted(&workspace),
                work_tree: workspace.clone(),
            },
            files_refs: false,
        };
        if !git::exists(&git_dir) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&git_dir)
                .map_err(io_err(&git_dir))?;
            store.git.init()?;
            let path = git_dir.join("cairn-workspace");
            std::fs::write(&path, workspace.display().to_string()).map_err(io_err(&path))?;
        }
        write_info(&git_dir)?;
        let config = std::fs::read_to_string(git_dir.join("config")).unwrap_or_default();
        store.files_refs =
            !config.is_empty() && !config.to_ascii_lowercase().contains("refstorage");
        // HEAD names the checkpoints' ref (stores made by earlier versions left it unborn).
        let head = std::fs::read(git_dir.join("HEAD")).unwrap_or_default();
        if head != format!("ref: {HEAD_REF}\n").as_bytes() {
            store.git.run(&["symbolic-ref", "HEAD", HEAD_REF])?;
        }
        Ok(store)
    }

    pub fn workspace(&self) -> &Path {
        &self.git.work_tree
    }

    pub fn git_dir(&self) -> &Path {
        &self.git.git_dir
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
    pub(super) fn entries(
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

/// The store's own rules, written on every open (so stores made by earlier versions get them):
/// `info/exclude` leaves out dependency and build directories and cairn's own settings
/// (`.cairn/`: a rule saved with `p`, made on the user's behalf, is not the model's change and
/// no undo takes it back); `info/attributes`, which outranks every `.gitattributes` in the
/// workspace, switches off all content conversion (line endings, `working-tree-encoding`,
/// filters, `ident`), so a file comes back byte for byte whatever the workspace declares.
fn write_info(git_dir: &Path) -> Result<(), CheckpointError> {
    let info = git_dir.join("info");
    std::fs::create_dir_all(&info).map_err(io_err(&info))?;
    let mut exclude = String::from("# written by cairn: dependency and build dirs\n");
    for dir in SKIPPED_DIRS {
        exclude.push_str(&format!("{dir}/\n"));
    }
    exclude.push_str("# cairn's own settings: not the model's changes\n/.cairn/\n");
    let attributes = "# written by cairn: record bytes as they are\n\
                      * -text -eol -filter -ident -working-tree-encoding -diff -merge\n";
    for (name, text) in [("exclude", exclude.as_str()), ("attributes", attributes)] {
        let path = info.join(name);
        if std::fs::read(&path).ok().as_deref() != Some(text.as_bytes()) {
            std::fs::write(&path, text).map_err(io_err(&path))?;
        }
    }
    Ok(())
}

/// The fields of git's `-z` output. A name that is not UTF-8 comes out lossy rather than
/// empty, so the fields after it stay in step.
pub(super) fn split_nul(bytes: &[u8]) -> impl Iterator<Item = std::borrow::Cow<'_, str>> {
    bytes
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(String::from_utf8_lossy)
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
