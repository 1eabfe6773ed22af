//! Running `git` against the shadow repository, for maintenance only (packing, pruning; in
//! the background, never per step): `GIT_DIR` points at the shadow store, every other `GIT_*`
//! variable is removed, no user or system config is read, hooks and fsmonitor are off, and it
//! runs in the store, not the workspace, so nothing of the user's own repository is read or
//! written (its index, refs, stash, config and hooks stay byte-identical).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::error::CheckpointError;

/// How to run git for one shadow repository.
#[derive(Debug, Clone)]
pub(super) struct Git {
    pub git_dir: PathBuf,
    /// The workspace (never given to git).
    pub work_tree: PathBuf,
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
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .current_dir(&self.git_dir)
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
