//! The sandbox every `bash` command runs in (Landlock plus a seccomp socket filter), built in
//! cairn before the fork and entered by the child between fork and exec with a few raw system
//! calls, so a sandboxed command costs no extra process.
//!
//! Two profiles. **Read-only** (commands the classifier judged read-only that run unasked):
//! read and execute everywhere, write nowhere but `/dev/null`-like sinks and a private temp dir.
//! **Workspace-write** (approved and auto-run commands): also the workspace, `/tmp` and the
//! configured `writable` dirs. In both the network is off unless allowed (no TCP/UDP/raw
//! sockets at all: seccomp; TCP also by Landlock), and the command cannot signal, ptrace or read
//! the memory or environment of any process outside its own sandbox (Landlock scopes and its
//! ptrace rule), cairn included.
//!
//! What git and the agents run or obey later (`.git` config and hooks, `.cairn/`, `.agents/`,
//! `.claude/`) must not change.
//! Landlock grants by hierarchy and cannot subtract, so there are two ways to keep them, chosen
//! by how long the command lives (`WorkspaceReach`):
//! - A **foreground** command gets the workspace root itself (new top-level entries, `git
//!   commit`, `git init` work); `protect` records the protected set before it and puts back
//!   whatever it changed once it and all its descendants are gone.
//! - A **background job** outlives any such check (it runs on while the model works), so it
//!   gets the workspace entry by entry: every top-level entry but `.git` and the project
//!   settings (`.cairn`, `.agents`, `.claude`, and what links there lead to) with full rights, the workspace directory itself none. It cannot create, delete or rename top-level
//!   entries, and git commands that write `.git` fail in it.

pub mod cli;
pub mod read_grants;
mod seccomp;
mod unix_supervisor;

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope,
};

use crate::secret_stores::SecretStores;
use seccomp::UnixSockets;
use unix_supervisor::{Channel, SocketReach, Supervisor};

/// What the configuration lets sandboxed commands do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// The workspace (canonical): writable in workspace-write, except `.git` and `.cairn`.
    pub workspace: PathBuf,
    /// Further directories workspace-write commands may write in (`/tmp`, `sandbox.writable`).
    pub writable: Vec<PathBuf>,
    /// Whether workspace-write commands may use the network (`sandbox.network`).
    pub network: bool,
    /// Unix sockets (or directories of them) every sandboxed command may connect to, as
    /// configured (`sandbox.allow_unix_sockets`, e.g. Docker's).
    pub unix_sockets: Vec<PathBuf>,
    /// The secret stores no grant may contain (`[sandbox] deny_read` and the defaults).
    pub deny_read: SecretStores,
}

impl SandboxPolicy {
    /// What a sandboxed command with `grant` may reach through Unix sockets or the network,
    /// for the approval prompt ("it may …"); `None` when that is nothing beyond its own
    /// workspace and temp dir.
    pub fn socket_note(&self, grant: Grant) -> Option<String> {
        if grant == Grant::WorkspaceWrite && self.network {
            return Some("use the network and every Unix socket".into());
        }
        if self.unix_sockets.is_empty() {
            return None;
        }
        let listed: Vec<String> = self
            .unix_sockets
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        Some(format!(
            "connect to the Unix sockets `[sandbox] allow_unix_sockets` lists: {}",
            listed.join(", ")
        ))
    }
}

/// How a workspace-write sandbox grants the workspace; see the module doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkspaceReach {
    /// The workspace root: for foreground commands, checked afterwards by `protect`.
    Root,
    /// Every top-level entry but `.git` and `.cairn`: for background jobs.
    Entries,
}

/// How much one command's sandbox allows; chosen per call by the agent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Grant {
    /// Judged read-only and run unasked: no writes but the private temp dir, no network.
    ReadOnly,
    /// Approved or auto-run: the workspace and temp dirs; network as configured.
    #[default]
    WorkspaceWrite,
    /// The user chose "run without sandbox" for this call.
    Unsandboxed,
}

impl Grant {
    pub fn as_str(self) -> &'static str {
        match self {
            Grant::ReadOnly => "read-only sandbox",
            Grant::WorkspaceWrite => "workspace-write sandbox",
            Grant::Unsandboxed => "no sandbox",
        }
    }
}

/// Exit status when the sandbox cannot be applied (like a command that cannot execute).
pub const EXIT_UNSANDBOXED: i32 = 126;

/// Output sinks every profile may write: writing them changes nothing.
const SINKS: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// Terminal devices and shared memory, which workspace-write commands may also use (`script`,
/// Python's multiprocessing).
const DEVICE_DIRS: &[&str] = &["/dev/pts", "/dev/shm", "/dev/ptmx"];

/// Whether a top-level workspace entry stays read-only in every profile: what git and the
/// agents execute or obey later, outside any sandbox (`core.fsmonitor`, hooks, project rules,
/// skills and settings: `.git` and `crate::dirs::PROJECT_SETTINGS`).
pub fn protected_entry(name: &std::ffi::OsStr) -> bool {
    name == ".git" || crate::dirs::is_project_settings(name)
}

/// Whether this kernel can sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LandlockStatus {
    /// Landlock works; the ABI version decides what it can restrict (TCP needs 4, scopes 6).
    Available(u32),
    Unavailable(String),
}

/// True where cairn has a seccomp socket filter for the architecture (elsewhere only
/// Landlock's rules keep the network off).
pub fn seccomp_available() -> bool {
    seccomp::deny_sockets(UnixSockets::Refused).is_some()
}

/// Asks the kernel which Landlock ABI it offers. `CAIRN_TEST_NO_LANDLOCK=1` pretends it has
/// none, so tests can check the behaviour of such systems on any kernel.
pub fn landlock_status() -> LandlockStatus {
    if std::env::var_os("CAIRN_TEST_NO_LANDLOCK").is_some_and(|v| v == "1") {
        return LandlockStatus::Unavailable("Landlock is disabled for this test run".into());
    }
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

/// Why the sandbox could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the Landlock sandbox is unavailable: {0}")]
    Unavailable(String),
    #[error("building the Landlock sandbox failed: {0}")]
    Landlock(#[from] landlock::RulesetError),
    #[error("creating the command's temp dir failed: {0}")]
    Temp(#[from] std::io::Error),
}

/// A sandbox ready to enter: the Landlock ruleset, the seccomp program and the command's
/// private temp dir (removed when this is dropped, after the command ended); once the command
/// started, the supervisor of its Unix sockets.
pub struct PreparedSandbox {
    ruleset: OwnedFd,
    filter: Option<seccomp::Filter>,
    /// Where the child sends its filter's listener, and what the supervisor allows.
    channel: Option<(Channel, SocketReach)>,
    supervisor: Option<Supervisor>,
    temp: tempfile::TempDir,
}

impl std::fmt::Debug for PreparedSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("ruleset", &self.ruleset)
            .field("network_filter", &self.filter.is_some())
            .field("supervisor", &self.supervisor)
            .field("temp", &self.temp.path())
            .finish()
    }
}

impl PreparedSandbox {
    /// Builds the sandbox of one command under `policy` with `grant` (not `Unsandboxed`);
    /// `reach` says how a workspace-write grant covers the workspace.
    pub fn build(
        policy: &SandboxPolicy,
        grant: Grant,
        reach: WorkspaceReach,
    ) -> Result<Self, SandboxError> {
        let abi = match landlock_status() {
            LandlockStatus::Available(abi) => abi,
            LandlockStatus::Unavailable(reason) => return Err(SandboxError::Unavailable(reason)),
        };
        let write = grant == Grant::WorkspaceWrite;
        let network = write && policy.network;
        let temp = tempfile::Builder::new()
            .prefix("cairn-cmd-")
            .tempdir_in(std::env::temp_dir())?;
        // Rights we restrict. Device ioctls (ABI 5) stay unhandled so terminal programs keep
        // working; connecting to pathname Unix sockets (ABI 9) is handled where the kernel can.
        let fs_all = AccessFs::from_all(ABI::V4);
        let mut handled = fs_all;
        if !network {
            handled |= AccessFs::ResolveUnix;
        }
        let mut ruleset = Ruleset::default()
            .handle_access(handled)?
            .scope(Scope::Signal | Scope::AbstractUnixSocket)?;
        if !network && abi >= 4 {
            ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4))?;
        }
        let mut created = ruleset.create()?;
        let read = AccessFs::from_read(ABI::V4);
        created = grant_split(created, Path::new("/"), read, &policy.deny_read)?;
        let file_write: BitFlags<AccessFs> = AccessFs::from_file(ABI::V4);
        for sink in SINKS {
            created = grant_path(created, Path::new(sink), file_write)?;
        }
        created = grant_path(created, temp.path(), handled)?;
        if write {
            for dir in DEVICE_DIRS {
                created = grant_path(created, Path::new(dir), fs_all)?;
            }
            match reach {
                WorkspaceReach::Root => {
                    created = grant_split(created, &policy.workspace, handled, &policy.deny_read)?
                }
                WorkspaceReach::Entries => {
                    for entry in workspace_entries(&policy.workspace) {
                        created = grant_split(created, &entry, handled, &policy.deny_read)?;
                    }
                }
            }
            // A writable dir that holds the workspace (a checkout under /tmp) would grant its
            // `.git` to a background job, and to any command the workspace itself (it could be
            // renamed away): it is left out.
            // Unix sockets only in the workspace and the private temp dir: not all of /tmp,
            // where tmux keeps its server's socket.
            for dir in policy
                .writable
                .iter()
                .filter(|dir| !policy.workspace.starts_with(dir))
            {
                created = grant_split(
                    created,
                    dir,
                    handled & !AccessFs::ResolveUnix,
                    &policy.deny_read,
                )?;
            }
        }
        // Landlock tells socket paths apart from ABI 9 on: there it is a second wall behind
        // the supervisor (and the only one where the seccomp filter is not built).
        if !network && abi >= 9 {
            for socket in &policy.unix_sockets {
                created = grant_path(created, socket, AccessFs::ResolveUnix.into())?;
            }
        }
        let ruleset: Option<OwnedFd> = created.into();
        let ruleset = ruleset.ok_or_else(|| {
            SandboxError::Unavailable("the kernel did not create a Landlock ruleset".into())
        })?;
        let unix = if write || !policy.unix_sockets.is_empty() {
            UnixSockets::Supervised
        } else {
            UnixSockets::Refused
        };
        let filter = if network {
            None
        } else {
            seccomp::deny_sockets(unix)
        };
        let channel = match &filter {
            Some(_) => Some((Channel::new()?, socket_reach(policy, write, temp.path()))),
            None => None,
        };
        Ok(Self {
            ruleset,
            filter,
            channel,
            supervisor: None,
            temp,
        })
    }

    /// Starts the supervisor of the command's sockets; call once the command was spawned (its
    /// listener was handed over before its exec).
    pub fn supervise(&mut self) -> std::io::Result<()> {
        if let Some((channel, reach)) = self.channel.take() {
            self.supervisor = Some(Supervisor::start(channel, reach)?);
        }
        Ok(())
    }

    /// The Unix sockets (or socket kinds) the command was refused so far.
    pub fn refused_sockets(&self) -> Vec<String> {
        self.supervisor
            .as_ref()
            .map(Supervisor::refused)
            .unwrap_or_default()
    }

    /// The command's private temp dir (its `TMPDIR`).
    pub fn temp_dir(&self) -> &Path {
        self.temp.path()
    }

    /// What the child needs after the fork: plain values, no allocation.
    pub fn entry(&self) -> SandboxEntry {
        SandboxEntry {
            ruleset: self.ruleset.as_raw_fd(),
            filter: self.filter.clone(),
            channel: self
                .channel
                .as_ref()
                .map(|(channel, _)| channel.child_end()),
        }
    }
}

/// Where a command may connect Unix sockets: the configured ones; in workspace-write also the
/// workspace and its private temp dir (canonical, as the supervisor compares real paths).
fn socket_reach(policy: &SandboxPolicy, write: bool, temp: &Path) -> SocketReach {
    let mut allowed: Vec<PathBuf> = policy.unix_sockets.clone();
    if write {
        allowed.push(policy.workspace.clone());
        allowed.push(temp.to_path_buf());
    }
    for place in &mut allowed {
        if let Ok(real) = std::fs::canonicalize(&*place) {
            *place = real;
        }
    }
    SocketReach { allowed }
}

/// The part of a `PreparedSandbox` the forked child enters.
pub struct SandboxEntry {
    ruleset: RawFd,
    filter: Option<seccomp::Filter>,
    channel: Option<RawFd>,
}

impl SandboxEntry {
    /// Enters the sandbox: no new privileges, the Landlock domain, the seccomp filter.
    /// Only raw system calls: safe between fork and exec in a multi-threaded process.
    pub fn enter(&self) -> std::io::Result<()> {
        // SAFETY: prctl and the Landlock and seccomp system calls take plain integers and a
        // pointer to the filter program, which lives in `self` for the duration of the call.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, self.ruleset, 0u32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if let Some(filter) = &self.filter {
            let listener = seccomp::install(filter)?;
            match self.channel {
                Some(channel) => unix_supervisor::hand_over(channel, listener)?,
                None => {
                    // SAFETY: a descriptor this process just got and nothing else uses.
                    unsafe { libc::close(listener) };
                }
            }
        }
        Ok(())
    }
}

/// Grants `access` on `root` but not on the secret stores in it: a root that holds one is
/// granted entry by entry (`read_grants`), its split directories only the right to list.
fn grant_split(
    mut created: landlock::RulesetCreated,
    root: &Path,
    access: BitFlags<AccessFs>,
    stores: &SecretStores,
) -> Result<landlock::RulesetCreated, landlock::RulesetError> {
    let split = read_grants::split(root, stores);
    for path in &split.whole {
        created = grant_path(created, path, access)?;
    }
    let list = access & AccessFs::ReadDir;
    if !list.is_empty() {
        for dir in &split.split {
            created = grant_path(created, dir, list)?;
        }
    }
    Ok(created)
}

fn grant_path(
    created: landlock::RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<landlock::RulesetCreated, landlock::RulesetError> {
    // A path that does not exist cannot be written anyway.
    let Ok(fd) = PathFd::new(path) else {
        return Ok(created);
    };
    // A file gets only the rights that make sense for a file.
    let is_dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
    let access = if is_dir {
        access
    } else {
        access & AccessFs::from_file(ABI::V4)
    };
    created.add_rule(PathBeneath::new(fd, access))
}

/// The workspace's top-level entries a workspace-write command may change: all but the
/// protected ones, symlinks (which could point anywhere) and those holding a place the
/// project settings lead to through a link (`.claude/skills -> ../tools/skills` keeps `tools`).
fn workspace_entries(workspace: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(workspace) else {
        return Vec::new();
    };
    let linked = crate::dirs::linked_project_settings(workspace);
    entries
        .flatten()
        .filter(|entry| {
            !protected_entry(&entry.file_name())
                && entry.file_type().is_ok_and(|t| !t.is_symlink())
                && !std::fs::canonicalize(entry.path())
                    .is_ok_and(|real| linked.iter().any(|l| l.starts_with(&real)))
        })
        .map(|entry| entry.path())
        .collect()
}

/// What a failed sandboxed command printed that the sandbox causes: a refused write or
/// connection.
pub fn looks_refused(stderr: &str) -> bool {
    [
        "Permission denied",
        "Operation not permitted",
        "Read-only file system",
        "Address family not supported",
    ]
    .iter()
    .any(|needle| stderr.contains(needle))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn refusals_are_recognised_by_their_messages() {
        assert!(looks_refused("bash: /etc/x: Permission denied\n"));
        assert!(looks_refused(
            "touch: cannot touch 'x': Read-only file system"
        ));
        assert!(!looks_refused("error: no such file"));
    }

    #[test]
    fn protected_entries_and_symlinks_are_not_granted() {
        let ws = tempfile::tempdir().unwrap();
        for dir in [".git", ".cairn", ".agents", ".claude", "src"] {
            std::fs::create_dir(ws.path().join(dir)).unwrap();
        }
        std::fs::write(ws.path().join("README.md"), "hi").unwrap();
        std::os::unix::fs::symlink("/", ws.path().join("root")).unwrap();
        let mut names: Vec<String> = workspace_entries(ws.path())
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["README.md", "src"]);
        // Where the settings lead through links stays out too: the entry that holds it.
        for dir in ["tools/skills", "config/agents", "docs"] {
            std::fs::create_dir_all(ws.path().join(dir)).unwrap();
        }
        std::os::unix::fs::symlink("../tools/skills", ws.path().join(".claude/skills")).unwrap();
        std::fs::remove_dir(ws.path().join(".agents")).unwrap();
        std::os::unix::fs::symlink("config/agents", ws.path().join(".agents")).unwrap();
        let mut names: Vec<String> = workspace_entries(&std::fs::canonicalize(ws.path()).unwrap())
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["README.md", "docs", "src"]);
    }
}
