//! Starting a program: the environment it gets, its session and process group, its limits and
//! its sandbox, set up the same way for every caller (`Launch`), then either the captured
//! pipes of a command (`spawn_program`) or the open pipes of a server (`served`).

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Instant;

use nix::fcntl::OFlag;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};

use super::sandbox::{PreparedSandbox, WorkspaceReach};
use super::{
    Capture, Grant, Group, Lifetime, Program, Settings, Spawned, Which, limits, net_env, protect,
    reaper, server_env,
};

/// Bytes per read from a pipe: large reads keep a command printing gigabytes cheap.
const READ_CHUNK: usize = 128 * 1024;

/// What a program reads on its standard input.
#[derive(Debug, Clone, Default)]
pub enum Input {
    /// Nothing: `/dev/null`.
    #[default]
    Null,
    /// These bytes, then end of file (a hook's JSON).
    Bytes(Vec<u8>),
}

/// A program's command, set up but not started, with what must outlive the start: its
/// sandbox (whose temp dir goes with it), the protected set taken before it ran, its limits.
pub(super) struct Launch {
    pub command: Command,
    pub sandbox: Option<PreparedSandbox>,
    pub guard: Option<protect::ProtectedSet>,
    pub bounds: limits::Bounds,
}

/// A started program, before its pipes are read.
pub(super) struct LaunchedChild {
    pub child: Child,
    pub sandbox: Option<PreparedSandbox>,
    pub guard: Option<protect::ProtectedSet>,
    pub bounds: limits::Bounds,
}

impl Launch {
    /// Sets up `program` (stdio is the caller's): the scrubbed environment, the network
    /// variables its grant allows, its own session, its limits and its sandbox.
    pub fn new(program: &Program<'_>, reach: WorkspaceReach) -> std::io::Result<Self> {
        let (name, args) = program
            .argv
            .split_first()
            .ok_or_else(|| std::io::Error::other("an empty command line: nothing to run"))?;
        let settings = program.settings;
        let sandbox = match (&settings.sandbox, program.grant) {
            (Some(policy), grant) if grant != Grant::Unsandboxed => {
                Some(PreparedSandbox::build(policy, grant, reach).map_err(|err| {
                    std::io::Error::other(format!("{err}; the command did not run"))
                })?)
            }
            _ => None,
        };
        // Recorded before the program can touch anything.
        let guard = match (&settings.sandbox, program.grant, reach) {
            (Some(policy), Grant::WorkspaceWrite, WorkspaceReach::Root) => {
                Some(protect::ProtectedSet::take(&policy.workspace))
            }
            _ => None,
        };
        let mut command = Command::new(name);
        command
            .args(args)
            .current_dir(program.cwd)
            .kill_on_drop(true);
        scrub_env(&mut command, settings, program.grant);
        command.envs([
            ("NO_COLOR", "1"),
            ("TERM", "dumb"),
            ("PAGER", "cat"),
            ("GIT_PAGER", "cat"),
        ]);
        if let Some(sandbox) = &sandbox {
            command.env("TMPDIR", sandbox.temp_dir());
        }
        command.envs(program.env.iter().map(|(name, value)| (name, value)));
        // Unsandboxed programs (sandbox off, or `u`) are bounded like workspace-write ones.
        let grant = if sandbox.is_some() {
            program.grant
        } else {
            Grant::Unsandboxed
        };
        let bounds = limits::Bounds::prepare(settings.limits.for_grant(grant));
        enter_on_exec(&mut command, sandbox.as_ref(), &bounds);
        Ok(Self {
            command,
            sandbox,
            guard,
            bounds,
        })
    }

    /// Starts the program, known to the reaper from its first instant, with its sandbox's
    /// socket supervisor running.
    pub fn start(self) -> std::io::Result<LaunchedChild> {
        let Launch {
            mut command,
            mut sandbox,
            guard,
            bounds,
        } = self;
        let mut child = reaper::spawn_known(|| command.spawn(), Child::id)?;
        // The Command holds the parent's copies of the pipes' write ends: close them now, or
        // the readers would never see end of file.
        drop(command);
        if let Some(sandbox) = &mut sandbox
            && let Err(err) = sandbox.supervise()
        {
            // Without its supervisor the program's socket calls would fail oddly: it does
            // not run.
            let _ = child.start_kill();
            return Err(std::io::Error::other(format!(
                "starting the sandbox's socket supervisor failed: {err}; the command did not run"
            )));
        }
        Ok(LaunchedChild {
            child,
            sandbox,
            guard,
            bounds,
        })
    }
}

/// The environment every program gets: cairn's minus what looks secret or names a server,
/// plus the secrets the user lets through, plus the proxy and CA variables when its grant may
/// reach the network (none of them when it may not).
fn scrub_env(command: &mut Command, settings: &Settings, grant: Grant) {
    for name in &hidden_vars(settings, std::env::vars_os()) {
        command.env_remove(name);
    }
    for (name, value) in crate::secrets::stashed() {
        if settings.allowed_env.contains(&name) {
            command.env(name, value);
        }
    }
    let network = match (&settings.sandbox, grant) {
        (None, _) | (_, Grant::Unsandboxed) => true,
        (Some(policy), Grant::WorkspaceWrite) => policy.network,
        (Some(_), Grant::ReadOnly) => false,
    };
    for change in settings.network_env.changes(network, &settings.allowed_env) {
        match change {
            net_env::EnvChange::Set(name, value) => command.env(name, value),
            net_env::EnvChange::Remove(name) => command.env_remove(name),
        };
    }
}

/// What runs in the child between fork and exec: no inherited descriptor, its own session,
/// death with cairn, its limits, then its sandbox.
fn enter_on_exec(
    command: &mut Command,
    sandbox: Option<&PreparedSandbox>,
    bounds: &limits::Bounds,
) {
    let entry = sandbox.map(PreparedSandbox::entry);
    let bounds_entry = bounds.entry();
    // SAFETY: setsid, prctl, getppid and the sandbox's raw system calls are async-signal-safe
    // and nothing here allocates or touches memory of the parent. A new session gives the
    // program its own process group (so the whole group can be signalled) and no controlling
    // terminal, so nothing it runs can stop on, read from or draw over the TUI's terminal;
    // password prompts that open /dev/tty fail at once instead of hanging.
    let parent = std::process::id();
    unsafe {
        command.pre_exec(move || {
            // Nothing of cairn's but the standard three descriptors reaches the program.
            super::fds::close_inherited_on_exec()?;
            nix::unistd::setsid()
                .map(|_| ())
                .map_err(std::io::Error::from)?;
            // If cairn itself is killed (SIGKILL leaves no chance to clean up), the kernel
            // kills the program too instead of leaving it orphaned. prctl is signal-safe.
            // The signal follows the *thread* that forked: spawns happen on the runtime's
            // worker threads, which live as long as the runtime.
            #[cfg(target_os = "linux")]
            {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // cairn died between fork and prctl: the signal will never come. (No
                // allocation after fork, so a plain errno.)
                if libc::getppid() as u32 != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
            }
            // Into its cgroup (or under its rlimits) before anything of the program runs.
            bounds_entry.apply()?;
            // Last, so nothing above runs restricted; the program itself never runs outside.
            if let Some(entry) = &entry {
                entry.enter()?;
            }
            Ok(())
        });
    }
}

/// Starts `program` (inside its sandbox when the sandbox is on and its grant asks for one)
/// with `input` on its stdin and reader threads on both output pipes.
pub fn spawn_program(
    program: &Program<'_>,
    input: Input,
    keep_tail: bool,
    lifetime: Lifetime,
) -> std::io::Result<Spawned> {
    let reach = match lifetime {
        Lifetime::Foreground => WorkspaceReach::Root,
        Lifetime::Background => WorkspaceReach::Entries,
    };
    let mut launch = Launch::new(program, reach)?;
    let (out_read, out_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    launch
        .command
        .stdin(match input {
            Input::Null => Stdio::null(),
            Input::Bytes(_) => Stdio::piped(),
        })
        .stdout(Stdio::from(out_write))
        .stderr(Stdio::from(err_write));
    let LaunchedChild {
        mut child,
        sandbox,
        guard,
        bounds,
    } = launch.start()?;
    if let (Input::Bytes(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        // A program that exits without reading all of it closes the pipe: not an error of
        // ours, its exit status says what happened.
        tokio::spawn(async move {
            let _ = stdin.write_all(&bytes).await;
        });
    }
    let pid = child
        .id()
        .ok_or_else(|| std::io::Error::other("the child exited before it was tracked"))?;
    let group = Group::new(pid, [inode(&out_read)?, inode(&err_read)?]);
    let capture = Arc::new(Capture::new(keep_tail));
    start_reader(out_read, Which::Stdout, capture.clone())?;
    start_reader(err_read, Which::Stderr, capture.clone())?;
    Ok(Spawned {
        child,
        group,
        capture,
        sandboxed: sandbox.is_some(),
        started: Instant::now(),
        start_ticks: reaper::start_time(pid),
        sandbox,
        guard,
        bounds,
    })
}

/// Variables removed from a command's environment: the configured ones, and every one that
/// looks like a secret (see `secrets::looks_secret`) or names a server that could run
/// something outside the sandbox (see `server_env`), unless allowed (`pass_env`).
pub fn hidden_vars(
    settings: &Settings,
    vars: impl Iterator<Item = (OsString, OsString)>,
) -> Vec<OsString> {
    let allowed = |name: &str| settings.allowed_env.iter().any(|a| a == name);
    let mut hidden: Vec<OsString> = vars
        .filter(|(name, value)| {
            let Some(name) = name.to_str() else {
                return false;
            };
            !allowed(name)
                && (crate::secrets::looks_secret(name, &value.to_string_lossy())
                    || server_env::names_a_server(name, &value.to_string_lossy())
                    || settings.hidden_env.iter().any(|h| h == name))
        })
        .map(|(name, _)| name)
        .collect();
    // Configured names go even when the current process does not have them (yet).
    for name in &settings.hidden_env {
        if !allowed(name) && !hidden.iter().any(|h| h == name.as_str()) {
            hidden.push(name.into());
        }
    }
    hidden
}

pub(super) fn inode(fd: impl AsFd) -> std::io::Result<u64> {
    Ok(nix::sys::stat::fstat(fd)
        .map_err(std::io::Error::from)?
        .st_ino)
}

/// A pipe whose read end stays blocking (for the reader thread) and whose ends do not leak
/// into other children.
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(std::io::Error::from)?;
    // A larger pipe means fewer wake-ups for a command printing a lot; failure is harmless.
    let _ = nix::fcntl::fcntl(&read, nix::fcntl::FcntlArg::F_SETPIPE_SZ(1 << 20));
    Ok((read, write))
}

/// Reads a pipe to its end on a plain thread: blocking reads of large chunks are the cheapest
/// way to move gigabytes, and a thread never holds up the async runtime's shutdown.
pub(super) fn start_reader(
    fd: OwnedFd,
    which: Which,
    capture: Arc<Capture>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("cairn-output".into())
        .spawn(move || {
            use std::io::Read;
            let mut pipe = std::fs::File::from(fd);
            let mut buf = vec![0; READ_CHUNK];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => capture.push(which, &buf[..n]),
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(err) => {
                        tracing::warn!("reading command {which:?}: {err}");
                        break;
                    }
                }
            }
            capture.finish(which);
        })?;
    Ok(())
}
