//! Process and memory limits per command, so `seq 3000 | xargs -P 0 sleep` or a runaway
//! allocation cannot take the machine: a cgroup where cairn can make one (`cgroup`), which
//! binds every process of the command and root too; otherwise rlimits set in the child,
//! `RLIMIT_NPROC` (the user's current count plus the limit: it counts per user) and
//! `RLIMIT_DATA` (not `RLIMIT_AS`, which breaks node and git with their large reservations).
//! Root is exempt from `RLIMIT_NPROC`, so there the process limit does not bind: `binding`
//! says so, for the status line.

use std::os::fd::RawFd;

use super::cgroup::{Caps, Cgroup};
use super::sandbox::Grant;

const MIB: u64 = 1024 * 1024;

/// The limits of one kind of command; `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub processes: Option<u64>,
    /// Bytes.
    pub memory: Option<u64>,
}

/// The limits by grant: commands run unasked in the read-only sandbox get less.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandLimits {
    pub read_only: Limits,
    /// Workspace-write and unsandboxed commands (builds).
    pub workspace_write: Limits,
}

impl Default for CommandLimits {
    /// 256 processes and 1 GiB read-only; 4096 processes and half the machine's memory for
    /// builds.
    fn default() -> Self {
        Self {
            read_only: Limits {
                processes: Some(256),
                memory: Some(1024 * MIB),
            },
            workspace_write: Limits {
                processes: Some(4096),
                memory: machine_memory().map(|total| total / 2),
            },
        }
    }
}

impl CommandLimits {
    /// From the `[sandbox]` keys (processes, MiB; 0 is no limit) over the defaults.
    pub fn configured(
        processes: Option<u64>,
        memory_mb: Option<u64>,
        read_only_processes: Option<u64>,
        read_only_memory_mb: Option<u64>,
    ) -> Self {
        let defaults = Self::default();
        let count = |set: Option<u64>, default: Option<u64>| match set {
            Some(0) => None,
            Some(n) => Some(n),
            None => default,
        };
        let bytes =
            |set: Option<u64>, default| count(set.map(|mb| mb.saturating_mul(MIB)), default);
        Self {
            read_only: Limits {
                processes: count(read_only_processes, defaults.read_only.processes),
                memory: bytes(read_only_memory_mb, defaults.read_only.memory),
            },
            workspace_write: Limits {
                processes: count(processes, defaults.workspace_write.processes),
                memory: bytes(memory_mb, defaults.workspace_write.memory),
            },
        }
    }

    pub fn for_grant(&self, grant: Grant) -> Limits {
        match grant {
            Grant::ReadOnly => self.read_only,
            Grant::WorkspaceWrite | Grant::Unsandboxed => self.workspace_write,
        }
    }
}

/// Total memory of the machine, from `/proc/meminfo`.
fn machine_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// What enforces the limits on this machine; `None` when everything binds.
pub fn binding() -> Option<String> {
    if Cgroup::available() {
        return None;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return Some("no process limit (no cgroup, and root ignores RLIMIT_NPROC)".into());
    }
    None
}

/// One command's limits, ready before the fork: its cgroup, or the rlimits to set.
#[derive(Debug)]
pub struct Bounds {
    limits: Limits,
    cgroup: Option<Cgroup>,
    /// `RLIMIT_NPROC` and `RLIMIT_DATA` for the child when there is no cgroup.
    rlimits: (Option<u64>, Option<u64>),
}

impl Bounds {
    /// No limits at all.
    pub fn none() -> Self {
        Self {
            limits: Limits {
                processes: None,
                memory: None,
            },
            cgroup: None,
            rlimits: (None, None),
        }
    }

    pub fn prepare(limits: Limits) -> Self {
        if limits.processes.is_none() && limits.memory.is_none() {
            return Self {
                limits,
                cgroup: None,
                rlimits: (None, None),
            };
        }
        let caps = Caps {
            processes: limits.processes,
            memory: limits.memory,
        };
        match Cgroup::create(caps) {
            Ok(cgroup) => Self {
                limits,
                cgroup: Some(cgroup),
                rlimits: (None, None),
            },
            Err(err) => {
                tracing::debug!("no cgroup for the command ({err}); rlimits instead");
                let nproc = limits
                    .processes
                    .map(|n| n.saturating_add(processes_of_this_user()));
                Self {
                    limits,
                    cgroup: None,
                    rlimits: (nproc, limits.memory),
                }
            }
        }
    }

    /// What the child needs after the fork: plain values.
    pub fn entry(&self) -> BoundsEntry {
        let mut procs = [-1; 4];
        if let Some(cgroup) = &self.cgroup {
            for (slot, fd) in procs.iter_mut().zip(cgroup.procs_fds()) {
                *slot = fd;
            }
        }
        BoundsEntry {
            procs,
            nproc: self.rlimits.0,
            data: self.rlimits.1,
        }
    }

    /// The limits the command hit, for its result: `256 processes`, `1024 MiB of memory`.
    /// Without a cgroup, judged from what the command printed.
    pub fn hits(&self, stderr: &str) -> Vec<String> {
        let (processes, memory) = match &self.cgroup {
            Some(cgroup) => cgroup.hits(),
            None if self.rlimits != (None, None) => (
                self.rlimits.0.is_some() && stderr.contains("Resource temporarily unavailable"),
                self.rlimits.1.is_some()
                    && (stderr.contains("Cannot allocate memory")
                        || stderr.contains("MemoryError")
                        || stderr.contains("out of memory")),
            ),
            None => (false, false),
        };
        let mut hits = Vec::new();
        if let (true, Some(n)) = (processes, self.limits.processes) {
            hits.push(format!("{n} processes"));
        }
        if let (true, Some(bytes)) = (memory, self.limits.memory) {
            hits.push(format!("{} MiB of memory", bytes / MIB));
        }
        hits
    }
}

/// The part of `Bounds` the forked child applies.
#[derive(Debug, Clone, Copy)]
pub struct BoundsEntry {
    procs: [RawFd; 4],
    nproc: Option<u64>,
    data: Option<u64>,
}

impl BoundsEntry {
    /// Joins the cgroup, or sets the rlimits. Raw system calls only: safe after fork.
    pub fn apply(&self) -> std::io::Result<()> {
        for fd in self.procs.iter().filter(|fd| **fd >= 0) {
            // SAFETY: writes two bytes from a static buffer to a descriptor opened for it.
            if unsafe { libc::write(*fd, c"0".as_ptr().cast(), 1) } != 1 {
                return Err(std::io::Error::last_os_error());
            }
        }
        for (resource, value) in [
            (libc::RLIMIT_NPROC, self.nproc),
            (libc::RLIMIT_DATA, self.data),
        ] {
            if let Some(value) = value {
                let limit = libc::rlimit {
                    rlim_cur: value,
                    rlim_max: value,
                };
                // SAFETY: setrlimit reads the struct it is given.
                if unsafe { libc::setrlimit(resource, &raw const limit) } != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }
}

/// Processes of cairn's user now (`RLIMIT_NPROC` counts them all).
fn processes_of_this_user() -> u64 {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_bound_read_only_commands_tighter_and_zero_lifts_a_limit() {
        let limits = CommandLimits::configured(None, Some(0), None, Some(512));
        assert_eq!(limits.read_only.processes, Some(256));
        assert_eq!(limits.read_only.memory, Some(512 * MIB));
        assert_eq!(limits.workspace_write.processes, Some(4096));
        assert_eq!(limits.workspace_write.memory, None);
        let defaults = CommandLimits::default();
        assert_eq!(defaults.read_only.memory, Some(1024 * MIB));
        assert!(defaults.workspace_write.memory.is_some_and(|m| m > MIB));
        assert_eq!(
            defaults.for_grant(Grant::Unsandboxed),
            defaults.workspace_write
        );
    }

    #[test]
    fn without_a_cgroup_hits_are_read_from_the_output() {
        let bounds = Bounds {
            limits: Limits {
                processes: Some(10),
                memory: Some(64 * MIB),
            },
            cgroup: None,
            rlimits: (Some(500), Some(64 * MIB)),
        };
        assert_eq!(
            bounds.hits("bash: fork: Resource temporarily unavailable\nMemoryError\n"),
            ["10 processes", "64 MiB of memory"]
        );
        assert!(bounds.hits("error: no such file").is_empty());
    }
}
