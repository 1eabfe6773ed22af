//! One cgroup per command, for its process and memory limits (`limits`): made under cairn's
//! own cgroup in each hierarchy that has the `pids` or `memory` controller (v1, or v2 where
//! the controllers can be enabled below cairn), joined by the child between fork and exec
//! through descriptors opened before the fork, and removed once the command ended. Groups
//! left by a cairn that was killed are removed the next time one is made.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The prefix of every group cairn makes: `cairn-PID-N`.
const PREFIX: &str = "cairn-";
/// How long removing a group waits for its last processes to be gone.
const REMOVE_WAIT: Duration = Duration::from_secs(2);

/// Where cairn's own group is in one hierarchy, and which version that hierarchy is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Parent {
    dir: PathBuf,
    v2: bool,
    pids: bool,
    memory: bool,
}

/// The places groups can be made, found once per process.
fn parents() -> &'static [Parent] {
    static PARENTS: OnceLock<Vec<Parent>> = OnceLock::new();
    PARENTS.get_or_init(|| {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let found = find_parents(&mounts, &own);
        for parent in &found {
            remove_stale(&parent.dir);
        }
        found
    })
}

/// The hierarchies holding `pids` and `memory`, from `/proc/self/mounts` and
/// `/proc/self/cgroup`; a v2 one only if both controllers can be enabled below it.
fn find_parents(mounts: &str, own: &str) -> Vec<Parent> {
    let mut parents: Vec<Parent> = Vec::new();
    let own_path = |wanted: &dyn Fn(&str) -> bool| {
        own.lines().find_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            wanted(controllers).then(|| path.trim_start_matches('/').to_owned())
        })
    };
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, mount, kind, options, ..] = fields[..] else {
            continue;
        };
        if kind == "cgroup" {
            let has = |c: &str| options.split(',').any(|o| o == c);
            let (pids, memory) = (has("pids"), has("memory"));
            if !pids && !memory {
                continue;
            }
            let wanted = |list: &str| {
                list.split(',')
                    .any(|c| (pids && c == "pids") || (memory && c == "memory"))
            };
            if let Some(path) = own_path(&wanted) {
                parents.push(Parent {
                    dir: Path::new(mount).join(path),
                    v2: false,
                    pids,
                    memory,
                });
            }
        }
    }
    let have_pids = parents.iter().any(|p| p.pids);
    let have_memory = parents.iter().any(|p| p.memory);
    if !(have_pids && have_memory)
        && let Some(line) = mounts
            .lines()
            .find(|l| l.split_whitespace().nth(2) == Some("cgroup2"))
        && let Some(mount) = line.split_whitespace().nth(1)
        && let Some(path) = own_path(&|list: &str| list.is_empty())
    {
        let dir = Path::new(mount).join(path);
        if v2_ready(&dir) {
            parents.push(Parent {
                dir,
                v2: true,
                pids: !have_pids,
                memory: !have_memory,
            });
        }
    }
    parents
}

/// Whether `pids` and `memory` are (or can be) enabled for groups below `dir`.
fn v2_ready(dir: &Path) -> bool {
    let controllers = std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
    let has = |c: &str| controllers.split_whitespace().any(|x| x == c);
    if !has("pids") || !has("memory") {
        return false;
    }
    let enabled = std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
    if ["pids", "memory"]
        .iter()
        .all(|c| enabled.split_whitespace().any(|x| x == *c))
    {
        return true;
    }
    // Fails where cairn's group holds processes itself (v2's "no internal processes").
    std::fs::write(dir.join("cgroup.subtree_control"), "+pids +memory").is_ok()
}

/// Removes groups of cairn processes that no longer run (killed before they could clean up).
fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// What one command's group limits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caps {
    pub processes: Option<u64>,
    pub memory: Option<u64>,
}

/// One command's group (a directory per hierarchy), removed when dropped.
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<(PathBuf, bool)>,
    /// `cgroup.procs` of each, open for the child to write itself into.
    procs: Vec<OwnedFd>,
}

impl Cgroup {
    /// Whether this machine lets cairn make groups for both limits.
    pub fn available() -> bool {
        let parents = parents();
        parents.iter().any(|p| p.pids) && parents.iter().any(|p| p.memory)
    }

    /// Makes a group with `caps`; fails where no hierarchy lets cairn make one.
    pub fn create(caps: Caps) -> std::io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        if !Self::available() {
            return Err(std::io::Error::other("no cgroup with pids and memory"));
        }
        let name = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut group = Self {
            dirs: Vec::new(),
            procs: Vec::new(),
        };
        for parent in parents() {
            let dir = parent.dir.join(&name);
            std::fs::create_dir(&dir)?;
            group.dirs.push((dir.clone(), parent.v2));
            if parent.pids
                && let Some(max) = caps.processes
            {
                std::fs::write(dir.join("pids.max"), max.to_string())?;
            }
            if parent.memory
                && let Some(max) = caps.memory
            {
                set_memory(&dir, parent.v2, max)?;
            }
            let procs = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"))?;
            group.procs.push(procs.into());
        }
        Ok(group)
    }

    /// The descriptors the child writes `0` (itself) to.
    pub fn procs_fds(&self) -> Vec<RawFd> {
        self.procs.iter().map(AsRawFd::as_raw_fd).collect()
    }

    /// Whether the group refused a fork (`pids`) and whether the kernel killed one of its
    /// processes for memory.
    pub fn hits(&self) -> (bool, bool) {
        let mut processes = false;
        let mut memory = false;
        for (dir, v2) in &self.dirs {
            processes |= counter(&dir.join("pids.events"), "max") > 0;
            let events = if *v2 {
                "memory.events"
            } else {
                "memory.oom_control"
            };
            memory |= counter(&dir.join(events), "oom_kill") > 0;
        }
        (processes, memory)
    }
}

fn set_memory(dir: &Path, v2: bool, max: u64) -> std::io::Result<()> {
    if v2 {
        std::fs::write(dir.join("memory.max"), max.to_string())?;
        // Swap would let a command use far more than its limit; absent without swap.
        let _ = std::fs::write(dir.join("memory.swap.max"), "0");
    } else {
        std::fs::write(dir.join("memory.limit_in_bytes"), max.to_string())?;
        let _ = std::fs::write(dir.join("memory.memsw.limit_in_bytes"), max.to_string());
    }
    Ok(())
}

/// The number after `key` in a flat keyed file like `pids.events` (0 when absent).
fn counter(path: &Path, key: &str) -> u64 {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .find_map(|line| {
            let (k, v) = line.split_once(' ')?;
            (k == key).then(|| v.trim().parse().ok()).flatten()
        })
        .unwrap_or(0)
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.procs.clear();
        for (dir, _) in &self.dirs {
            // Whatever is still inside is the command's, and the command is over.
            let deadline = Instant::now() + REMOVE_WAIT;
            loop {
                for pid in std::fs::read_to_string(dir.join("cgroup.procs"))
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| l.trim().parse::<i32>().ok())
                {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
                match std::fs::remove_dir(dir) {
                    Ok(()) => break,
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => break,
                    Err(err) if Instant::now() >= deadline => {
                        tracing::warn!("removing the command's cgroup {}: {err}", dir.display());
                        break;
                    }
                    // Killed processes leave the group a moment after the signal.
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_hierarchies_are_found_under_cairns_own_groups() {
        let mounts = "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n\
                      cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0\n\
                      cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n\
                      cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";
        let own = "8:pids:/\n4:memory:/api/abc\n1:cpu:/\n0::/\n";
        assert_eq!(
            find_parents(mounts, own),
            [
                Parent {
                    dir: "/sys/fs/cgroup/memory/api/abc".into(),
                    v2: false,
                    pids: false,
                    memory: true,
                },
                Parent {
                    dir: "/sys/fs/cgroup/pids/".into(),
                    v2: false,
                    pids: true,
                    memory: false,
                },
            ]
        );
    }

    #[test]
    fn keyed_counters_are_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("memory.oom_control");
        std::fs::write(&file, "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n").expect("write");
        assert_eq!(counter(&file, "oom_kill"), 3);
        assert_eq!(counter(&file, "max"), 0);
    }
}
