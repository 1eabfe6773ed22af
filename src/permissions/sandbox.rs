//! Landlock sandbox for `bash`, applied in the child before exec. The bash tool spawns
//! `cairn __sandbox --write DIR ... [--no-network] -- bash -c CMD`; `main` routes that to
//! `sandbox_main`, which restricts the process (read everywhere, write only in the given
//! directories and a few devices, optionally no TCP) and then execs the command.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus,
};

/// What a sandboxed command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Directories the command may write in (the workspace, the temp dir, configured paths).
    pub writable: Vec<PathBuf>,
    /// Whether the command may open network connections.
    pub network: bool,
}

/// The hidden subcommand `main` routes to `sandbox_main`.
pub const SANDBOX_SUBCOMMAND: &str = "__sandbox";

/// Exit status when the sandbox cannot be applied (like a command that cannot execute).
pub const EXIT_UNSANDBOXED: i32 = 126;

/// Files under `/dev` every command may write: output sinks and terminals.
const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
    "/dev/ptmx",
];

/// Directories under `/dev` every command may write in.
const WRITABLE_DEVICE_DIRS: &[&str] = &["/dev/pts", "/dev/shm"];

/// The file-system rights we handle; newer rights (ioctl on devices) are left alone so that
/// terminal programs keep working.
const FS_ABI: ABI = ABI::V4;

impl SandboxPolicy {
    /// The policy for a workspace: write in it and the system temp directory, plus `extra`.
    pub fn for_workspace(workspace: &Path, extra: &[PathBuf], network: bool) -> Self {
        let mut writable = vec![workspace.to_path_buf(), std::env::temp_dir()];
        if Path::new("/tmp").is_dir() {
            writable.push(PathBuf::from("/tmp"));
        }
        for path in extra {
            if !writable.contains(path) {
                writable.push(path.clone());
            }
        }
        Self { writable, network }
    }

    /// The arguments (after the cairn executable) that run `bash -c command` under this policy.
    pub fn child_args(&self, command: &str, allow_unsandboxed: bool) -> Vec<String> {
        let mut args = vec![SANDBOX_SUBCOMMAND.to_string()];
        for dir in &self.writable {
            args.push("--write".into());
            args.push(dir.to_string_lossy().into_owned());
        }
        if !self.network {
            args.push("--no-network".into());
        }
        if allow_unsandboxed {
            args.push("--allow-unsandboxed".into());
        }
        args.extend(["--".into(), "bash".into(), "-c".into(), command.to_string()]);
        args
    }

    /// A note for the model and the user when a sandboxed command failed in a way the sandbox
    /// causes (`Permission denied` on a write, a refused connection); `None` otherwise.
    pub fn blocked_note(&self, stderr: &str) -> Option<String> {
        let denied = [
            "Permission denied",
            "Operation not permitted",
            "Read-only file system",
        ];
        if !denied.iter().any(|d| stderr.contains(d)) {
            return None;
        }
        let dirs: Vec<String> = self
            .writable
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        let network = if self.network {
            ""
        } else {
            "; network connections are blocked"
        };
        Some(format!(
            "[sandbox: the command may have been blocked by the sandbox: writes are allowed only in {}{network}]",
            dirs.join(", ")
        ))
    }
}

/// Whether this kernel can sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LandlockStatus {
    /// Landlock works; the ABI version decides what it can restrict (TCP needs 4).
    Available(u32),
    Unavailable(String),
}

/// Asks the kernel which Landlock ABI it offers.
pub fn landlock_status() -> LandlockStatus {
    // SAFETY: `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)` only
    // queries the ABI version; it reads no memory and creates nothing.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    if version > 0 {
        return LandlockStatus::Available(u32::try_from(version).unwrap_or(u32::MAX));
    }
    let err = std::io::Error::last_os_error();
    let reason = match err.raw_os_error() {
        Some(libc::EOPNOTSUPP) => {
            "Landlock is built into this kernel but disabled at boot".to_string()
        }
        Some(libc::ENOSYS) => "this kernel has no Landlock support".to_string(),
        _ => format!("Landlock is unavailable: {err}"),
    };
    LandlockStatus::Unavailable(reason)
}

/// Why the sandbox could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the Landlock sandbox is unavailable: {0}")]
    Unavailable(String),
    #[error("applying the Landlock sandbox failed: {0}")]
    Landlock(#[from] landlock::RulesetError),
    #[error("opening / for the Landlock sandbox failed: {0}")]
    Root(#[from] landlock::PathFdError),
    #[error("the kernel did not enforce the Landlock sandbox")]
    NotEnforced,
}

/// What `restrict_current_process` achieved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restricted {
    pub abi: u32,
    /// False when the network was to be blocked but the kernel cannot (ABI below 4).
    pub network_blocked: bool,
}

/// Restricts the calling thread (and what it execs) to `policy`: read and execute everywhere,
/// write only beneath `policy.writable` and the harmless devices, and with `network == false`
/// no TCP bind or connect.
pub fn restrict_current_process(policy: &SandboxPolicy) -> Result<Restricted, SandboxError> {
    let abi = match landlock_status() {
        LandlockStatus::Available(abi) => abi,
        LandlockStatus::Unavailable(reason) => return Err(SandboxError::Unavailable(reason)),
    };
    let block_network = !policy.network && abi >= 4;
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(FS_ABI))?;
    if block_network {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4))?;
    }
    let mut created = ruleset.create()?;
    created = created.add_rule(PathBeneath::new(
        PathFd::new("/")?,
        AccessFs::from_read(FS_ABI),
    ))?;
    let dirs = policy
        .writable
        .iter()
        .map(PathBuf::as_path)
        .chain(WRITABLE_DEVICE_DIRS.iter().map(Path::new));
    for dir in dirs {
        // A directory that does not exist cannot be written in anyway.
        if let Ok(fd) = PathFd::new(dir) {
            created = created.add_rule(PathBeneath::new(fd, AccessFs::from_all(FS_ABI)))?;
        }
    }
    // `> /dev/stdout` opens the command's own pipe through `/proc/self/fd` with O_TRUNC; a
    // real file reached that way is still checked against its own path, so this grants
    // nothing beyond the descriptors the command already holds.
    if let Ok(fd) = PathFd::new("/proc") {
        created = created.add_rule(PathBeneath::new(fd, AccessFs::from_file(FS_ABI)))?;
    }
    for device in WRITABLE_DEVICES {
        if let Ok(fd) = PathFd::new(device) {
            created = created.add_rule(PathBeneath::new(fd, AccessFs::from_file(FS_ABI)))?;
        }
    }
    let status = created.restrict_self()?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(SandboxError::NotEnforced);
    }
    Ok(Restricted {
        abi,
        network_blocked: block_network,
    })
}

/// The parsed arguments of `cairn __sandbox`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SandboxArgs {
    policy: SandboxPolicy,
    allow_unsandboxed: bool,
    command: Vec<String>,
}

fn parse_args(args: &[String]) -> Result<SandboxArgs, String> {
    let args = match args.first() {
        Some(first) if first == SANDBOX_SUBCOMMAND => &args[1..],
        _ => args,
    };
    let mut policy = SandboxPolicy {
        writable: Vec::new(),
        network: true,
    };
    let mut allow_unsandboxed = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--write" => {
                let dir = args.get(i + 1).ok_or("--write needs a directory")?;
                policy.writable.push(PathBuf::from(dir));
                i += 2;
            }
            "--no-network" => {
                policy.network = false;
                i += 1;
            }
            "--allow-unsandboxed" => {
                allow_unsandboxed = true;
                i += 1;
            }
            "--" => {
                let command = args[i + 1..].to_vec();
                if command.is_empty() {
                    return Err("no command after `--`".into());
                }
                return Ok(SandboxArgs {
                    policy,
                    allow_unsandboxed,
                    command,
                });
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Err("usage: cairn __sandbox [--write DIR]... [--no-network] [--allow-unsandboxed] -- COMMAND...".into())
}

/// Entry of the hidden `cairn __sandbox` subcommand (`args` with or without the subcommand
/// itself). Applies the sandbox, then execs the command; returns only on failure: 2 for bad
/// arguments, 126 when the sandbox cannot be applied (unless `--allow-unsandboxed`), 127
/// when the command cannot be executed. Messages go to stderr, prefixed `cairn sandbox:`.
pub fn sandbox_main(args: Vec<String>) -> i32 {
    let parsed = match parse_args(&args) {
        Ok(parsed) => parsed,
        Err(message) => {
            say(&message);
            return 2;
        }
    };
    match restrict_current_process(&parsed.policy) {
        Ok(restricted) => {
            if !parsed.policy.network && !restricted.network_blocked {
                say(&format!(
                    "this kernel's Landlock (ABI {}) cannot block the network (needs ABI 4); the command runs with network access",
                    restricted.abi
                ));
            }
        }
        Err(err) if parsed.allow_unsandboxed => {
            say(&format!(
                "{err}; running the command unsandboxed because the configuration allows it"
            ));
        }
        Err(err) => {
            say(&format!(
                "{err}; refusing to run the command unsandboxed (set `allow_unsandboxed = true` in [sandbox] to run it anyway, or disable the sandbox)"
            ));
            return EXIT_UNSANDBOXED;
        }
    }
    let err = std::process::Command::new(&parsed.command[0])
        .args(&parsed.command[1..])
        .exec();
    say(&format!("cannot run {}: {err}", parsed.command[0]));
    127
}

fn say(message: &str) {
    let _ = writeln!(std::io::stderr(), "cairn sandbox: {message}");
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn child_args_parse_back_to_the_same_policy() {
        let policy = SandboxPolicy {
            writable: vec!["/work space".into(), "/tmp".into()],
            network: false,
        };
        let args = policy.child_args("echo 'hi there' > x", true);
        let parsed = parse_args(&args).unwrap();
        assert_eq!(
            parsed,
            SandboxArgs {
                policy,
                allow_unsandboxed: true,
                command: strings(&["bash", "-c", "echo 'hi there' > x"]),
            }
        );
    }

    #[test]
    fn bad_arguments_are_reported() {
        assert_eq!(
            parse_args(&strings(&["--write"])).unwrap_err(),
            "--write needs a directory"
        );
        assert_eq!(
            parse_args(&strings(&["--frobnicate"])).unwrap_err(),
            "unknown argument `--frobnicate`"
        );
        assert_eq!(
            parse_args(&strings(&["--no-network", "--"])).unwrap_err(),
            "no command after `--`"
        );
        assert_eq!(sandbox_main(strings(&["__sandbox", "--bogus"])), 2);
    }

    #[test]
    fn a_blocked_write_gets_a_note_naming_the_writable_places() {
        let policy = SandboxPolicy {
            writable: vec!["/ws".into()],
            network: false,
        };
        let note = policy
            .blocked_note("bash: /etc/x: Permission denied\n")
            .unwrap();
        assert!(note.contains("/ws") && note.contains("network"), "{note}");
        assert_eq!(policy.blocked_note("error: no such file"), None);
    }

    #[test]
    fn the_workspace_policy_includes_the_temp_dir() {
        let policy = SandboxPolicy::for_workspace(Path::new("/ws"), &["/cache".into()], true);
        assert!(policy.writable.contains(&PathBuf::from("/ws")));
        assert!(policy.writable.contains(&std::env::temp_dir()));
        assert!(policy.writable.contains(&PathBuf::from("/cache")));
    }
}
