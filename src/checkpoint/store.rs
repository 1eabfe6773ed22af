//! The checkpoint store: one shadow git repository per workspace under cairn's data dir,
//! written and read in-process (`objects`, `tree`): a checkpoint costs no process, and a real
//! git repository stays behind (`git log`, `git show` and `git repack` work on it). What
//! changed since the last checkpoint comes from file notifications (`watch`) where they can
//! be trusted, else from a scan comparing stat data (`scan`); only changed files are read.
//! Objects are content-addressed: an unchanged file costs nothing; `maintain` packs them
//! with deltas, and drops the oldest checkpoints beyond the store's size budget.
//!
//! This file: the store's types, opening it, and reading checkpoints back (`diff`, `blobs`).
//! Taking them: `snapshot`; putting files back: `restore`; packing: `maintain`.
//!
//! What is left out: what the session's starting `.gitignore` files ignore (`rules`),
//! dependency and build directories (`SKIPPED_DIRS`), cairn's own `.cairn/`, files over
//! `MAX_FILE_BYTES`, FIFOs, sockets and devices, and repositories nested in the workspace
//! (submodules included: their files are theirs, never recorded nor restored); a snapshot
//! names what it left out so the user can be told.

use std::collections::HashMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

pub(super) mod snapshot;

use super::error::{CheckpointError, io_err};
use super::git::{self, Git};
use super::objects::{ObjectDb, Oid, hex, parse_hex};
use super::rules::SKIPPED_DIRS;
use super::tree;
use snapshot::Live;

/// The last checkpoint; the shadow repository's HEAD points at it, so `git status` compares
/// the shadow index with it.
pub(super) const HEAD_REF: &str = "refs/cairn/head";

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

/// How a session opens its store (by default as `cairn undo` does: the last session's rules,
/// scans).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoreOptions {
    /// This is the start of a session: the workspace's `.gitignore` files are read afresh
    /// (at the first snapshot) and kept for the session. Otherwise (`cairn undo`) the rules
    /// the last session started with are used.
    pub session_start: bool,
    /// Learn what changed from file notifications where they work (else: scan each time).
    pub notifications: bool,
}

/// The shadow repository of one workspace.
#[derive(Debug, Clone)]
pub struct CheckpointStore {
    /// For maintenance only (repack, prune), in the background.
    pub(super) git: Git,
    pub(super) db: ObjectDb,
    pub(super) live: Arc<Mutex<Live>>,
    /// The store's size budget in bytes (`maintain` drops the oldest checkpoints beyond it).
    pub(super) budget: u64,
    /// `maintenance_due` answered once already.
    pub(super) maintenance_looked: Arc<Mutex<bool>>,
}

/// The default size budget of a workspace's store.
pub const DEFAULT_BUDGET_MB: u64 = 512;

impl CheckpointStore {
    /// Opens (creating on first use) the store of `workspace` under `data_dir/checkpoints`,
    /// as `cairn undo` does (the rules of the last session, scans).
    pub fn open(data_dir: &Path, workspace: &Path) -> Result<Self, CheckpointError> {
        Self::open_with(data_dir, workspace, StoreOptions::default())
    }

    pub fn open_with(
        data_dir: &Path,
        workspace: &Path,
        options: StoreOptions,
    ) -> Result<Self, CheckpointError> {
        let workspace = workspace.canonicalize().map_err(io_err(workspace))?;
        let root = data_dir.join("checkpoints");
        let git_dir = root.join(store_key(&workspace));
        if !git::exists(&git_dir) {
            init(&git_dir, &workspace)?;
        }
        write_info(&git_dir)?;
        let head_file = git_dir.join("HEAD");
        let head = format!("ref: {HEAD_REF}\n");
        if std::fs::read(&head_file).ok().as_deref() != Some(head.as_bytes()) {
            std::fs::write(&head_file, head).map_err(io_err(&head_file))?;
        }
        let trusted = git::mtimes_trusted(&workspace);
        let db = ObjectDb::new(&git_dir.join("objects"));
        let live = Live::open(&git_dir, &workspace, options, trusted);
        Ok(CheckpointStore {
            git: Git {
                git_dir,
                work_tree: workspace,
            },
            db,
            live: Arc::new(Mutex::new(live)),
            budget: DEFAULT_BUDGET_MB * 1024 * 1024,
            maintenance_looked: Arc::default(),
        })
    }

    /// Sets the size budget (bytes).
    pub fn with_budget(mut self, bytes: u64) -> Self {
        self.budget = bytes;
        self
    }

    pub fn workspace(&self) -> &Path {
        &self.git.work_tree
    }

    pub fn git_dir(&self) -> &Path {
        &self.git.git_dir
    }

    /// The tree of a checkpoint.
    pub(super) fn tree(&self, id: &CheckpointId) -> Result<Oid, CheckpointError> {
        let missing = || CheckpointError::Missing(id.0.clone());
        let oid = parse_hex(&id.0).ok_or_else(missing)?;
        tree::tree_of_commit(&self.db, &oid)
            .map_err(io_err(self.git_dir()))?
            .ok_or_else(missing)
    }

    /// Whether the store has checkpoint `id` (in this process: written or deferred).
    pub fn has(&self, id: &CheckpointId) -> bool {
        self.tree(id).is_ok()
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
        let (ta, tb) = (self.tree(a)?, self.tree(b)?);
        let found = tree::diff_trees(&self.db, &ta, &tb).map_err(io_err(self.git_dir()))?;
        let blob = |side: tree::Side| {
            side.map(|(mode, oid)| Blob {
                id: hex(&oid),
                mode: format!("{mode:o}"),
            })
        };
        Ok(found
            .into_iter()
            .map(|(path, before, after)| PathChange {
                path: String::from_utf8_lossy(&path).into_owned(),
                kind: match (&before, &after) {
                    (None, _) => ChangeKind::Created,
                    (_, None) => ChangeKind::Deleted,
                    _ => ChangeKind::Changed,
                },
                before: blob(before),
                after: blob(after),
            })
            .collect())
    }

    /// The contents of blobs, in the order asked.
    pub fn blobs(&self, ids: &[&str]) -> Result<Vec<Vec<u8>>, CheckpointError> {
        ids.iter()
            .map(|id| {
                let oid = parse_hex(id).ok_or(CheckpointError::Parse("a blob id"))?;
                match self.db.read(&oid).map_err(io_err(self.git_dir()))? {
                    Some((_, bytes)) => Ok(bytes),
                    None => Err(CheckpointError::Missing(id.to_string())),
                }
            })
            .collect()
    }

    /// The entries of `paths` in checkpoint `id` (absent paths are missing from the map).
    pub(super) fn entries(
        &self,
        id: &CheckpointId,
        paths: &[&str],
    ) -> Result<HashMap<String, Blob>, CheckpointError> {
        let all = tree::flatten(&self.db, &self.tree(id)?).map_err(io_err(self.git_dir()))?;
        Ok(paths
            .iter()
            .filter_map(|p| {
                let (mode, oid) = all.get(p.as_bytes())?;
                Some((
                    p.to_string(),
                    Blob {
                        id: hex(oid),
                        mode: format!("{mode:o}"),
                    },
                ))
            })
            .collect())
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

/// Creates the shadow repository as `git init --bare` would (no template: no sample hooks),
/// with refs as files.
fn init(git_dir: &Path, workspace: &Path) -> Result<(), CheckpointError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(git_dir)
        .map_err(io_err(git_dir))?;
    for dir in [
        "objects/pack",
        "objects/info",
        "refs/heads",
        "refs/tags",
        "refs/cairn",
    ] {
        let path = git_dir.join(dir);
        std::fs::create_dir_all(&path).map_err(io_err(&path))?;
    }
    let files = [
        (
            "config",
            "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n".to_string(),
        ),
        ("cairn-workspace", workspace.display().to_string()),
        // Written last: `git::exists` takes a store with a HEAD for a whole one.
        ("HEAD", format!("ref: {HEAD_REF}\n")),
    ];
    for (name, text) in files {
        let path = git_dir.join(name);
        std::fs::write(&path, text).map_err(io_err(&path))?;
    }
    Ok(())
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
