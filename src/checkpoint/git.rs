//! Running `git` against the shadow repository only: `GIT_DIR`, `GIT_WORK_TREE` and
//! `GIT_INDEX_FILE` point at the shadow store and the workspace, no user or system config is
//! read, hooks and fsmonitor are off, so nothing of the user's own repository is read or
//! written (its index, refs, stash, config and hooks stay byte-identical).
//!
//! The shadow index keeps git's caches on: its stat cache (what `git status` refreshes) and
//! the untracked cache (directories whose mtime did not move are not read again), both
//! written back by `git status`, so a snapshot after the first costs about a `git status`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::store::CheckpointError;

/// How to run git for one shadow repository.
#[derive(Debug, Clone)]
pub(super) struct Git {
    pub git_dir: PathBuf,
    pub work_tree: PathBuf,
    pub index: PathBuf,
    /// Trust directory mtimes to say a directory's entries did not change (git's untracked
    /// cache): true but on network and FUSE file systems, which may not keep them.
    pub untracked_cache: bool,
}

impl Git {
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.autocrlf=false",
            "-c",
            "core.safecrlf=false",
            "-c",
            "core.quotepath=false",
            "-c",
            // The workspace's own `.gitattributes` are overridden by `info/attributes` (see
            // `store`); no user-wide attributes file either.
            "core.attributesFile=/dev/null",
            "-c",
            "gc.auto=0",
            "-c",
            "maintenance.auto=false",
            "-c",
            if self.untracked_cache {
                "core.untrackedCache=true"
            } else {
                "core.untrackedCache=false"
            },
            "-c",
            // The untracked cache serves `status -uall` only when it was built for it.
            "status.showUntrackedFiles=all",
            "-c",
            // No checksum over the whole index on each write (a third of what updating a
            // 20,000-entry index costs); git reads it either way.
            "index.skipHash=true",
            "-c",
            // No reflogs: the checkpoints' history is the commits' parents.
            "core.logAllRefUpdates=false",
            "-c",
            "core.fileMode=true",
            "-c",
            "core.symlinks=true",
            "-c",
            "user.name=cairn",
            "-c",
            "user.email=cairn@localhost",
        ]);
        cmd.args(args);
        // Nothing the environment says to git may reach it (a cairn started from a git hook
        // inherits GIT_DIR and friends; GIT_TRACE*, GIT_EXEC_PATH, GIT_SSH_COMMAND, GIT_ASKPASS,
        // GIT_CONFIG_* and whatever later versions add would change what it does): every
        // GIT_* variable goes, then the ones below are set.
        for (key, _) in std::env::vars_os() {
            if key.as_encoded_bytes().starts_with(b"GIT_") {
                cmd.env_remove(key);
            }
        }
        cmd.env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_INDEX_FILE", &self.index)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            // `git status` writes its refreshed stat and untracked caches back to the shadow
            // index (the store's own lock keeps two cairns from racing on it).
            .env("GIT_OPTIONAL_LOCKS", "1")
            .env("GIT_LITERAL_PATHSPECS", "0")
            .env("GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z")
            .env("LC_ALL", "C")
            .current_dir(&self.work_tree)
            .stdin(Stdio::null());
        cmd
    }

    /// Runs git, returns its stdout; a failure carries its stderr.
    pub fn run(&self, args: &[&str]) -> Result<Vec<u8>, CheckpointError> {
        self.run_with_input(args, None)
    }

    pub fn run_with_input(
        &self,
        args: &[&str],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, CheckpointError> {
        let mut cmd = self.command(args);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd.spawn().map_err(CheckpointError::NoGit)?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            // Written from a thread: git may fill its stdout pipe before reading all input.
            let input = input.to_vec();
            let writer = std::thread::spawn(move || {
                let _ = stdin.write_all(&input);
            });
            let output = child.wait_with_output().map_err(CheckpointError::NoGit)?;
            let _ = writer.join();
            return finish(args, output);
        }
        let output = child.wait_with_output().map_err(CheckpointError::NoGit)?;
        finish(args, output)
    }

    /// Creates the shadow repository (bare: the work tree is given on each call; no template,
    /// so no sample hooks or description take room in the store).
    pub fn init(&self) -> Result<(), CheckpointError> {
        let mut cmd = self.command(&["init", "-q", "--bare", "--template="]);
        cmd.env_remove("GIT_WORK_TREE").env_remove("GIT_INDEX_FILE");
        let output = cmd.output().map_err(CheckpointError::NoGit)?;
        finish(&["init"], output).map(|_| ())
    }

    pub fn run_str(&self, args: &[&str]) -> Result<String, CheckpointError> {
        Ok(String::from_utf8_lossy(&self.run(args)?).trim().to_string())
    }
}

fn finish(args: &[&str], output: std::process::Output) -> Result<Vec<u8>, CheckpointError> {
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(CheckpointError::Git {
            command: args.first().copied().unwrap_or_default().to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        })
    }
}

/// Whether directory mtimes on the file system of `path` can be trusted to change when an
/// entry is added or removed (local file systems do; network and FUSE ones may cache or fake
/// them, and a missed new file is a change a checkpoint would not record).
pub(super) fn mtimes_trusted(path: &Path) -> bool {
    use nix::sys::statfs::{FUSE_SUPER_MAGIC, FsType, NFS_SUPER_MAGIC, SMB_SUPER_MAGIC, statfs};
    // CIFS and SMB2 (no constants in nix).
    const CIFS: u32 = 0xFF53_4D42;
    const SMB2: u32 = 0xFE53_4D42;
    let Ok(fs) = statfs(path) else {
        return false;
    };
    let kind: FsType = fs.filesystem_type();
    let raw = kind.0 as u32;
    ![NFS_SUPER_MAGIC, SMB_SUPER_MAGIC, FUSE_SUPER_MAGIC].contains(&kind)
        && raw != CIFS
        && raw != SMB2
}

/// True when `path` looks like a directory git may write into.
pub(super) fn exists(path: &Path) -> bool {
    path.join("HEAD").is_file() && path.join("objects").is_dir()
}
