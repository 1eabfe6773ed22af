//! Everything a command started: its process group, plus members of its session that moved to
//! groups of their own (a script with `set -m` gives each background job its own group). The
//! command leads both, so both ids are its pid. Signalling them, telling whether any live
//! member remains (zombies do not count: an orphan may wait for a reaper that never comes), and
//! ending them with SIGTERM, then SIGKILL after a grace period. A process that starts a new
//! session of its own (setsid, daemons) leaves this net; it is still caught while it holds the
//! command's output pipe.

use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// Longest wait for the kernel to finish off the processes after SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(1);

/// The process group and session a command leads (both ids are the main child's pid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    leader: Pid,
    /// Inodes of the command's stdout and stderr pipes.
    pipes: [u64; 2],
}

/// What /proc says about one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub state: char,
    pub parent: i32,
    pub group: i32,
    pub session: i32,
}

impl Group {
    pub fn new(leader: u32, pipes: [u64; 2]) -> Self {
        Self {
            leader: Pid::from_raw(leader as i32),
            pipes,
        }
    }

    pub fn id(&self) -> i32 {
        self.leader.as_raw()
    }

    /// Sends `signal` to the group and to every session member outside it; processes that are
    /// already gone are not an error.
    pub fn signal(&self, signal: Signal) {
        match killpg(self.leader, signal) {
            Ok(()) | Err(Errno::ESRCH) => {}
            Err(err) => tracing::warn!("signalling process group {}: {err}", self.leader),
        }
        for (pid, in_group) in self.live_members() {
            if !in_group {
                let _ = kill(Pid::from_raw(pid), signal);
            }
        }
    }

    /// Stops every member (SIGSTOP) and waits, up to `within`, until the kernel reports each
    /// one stopped (or gone): what runs after cannot race a write of theirs. False when some
    /// member was still running at the deadline. `resume` lets them go on.
    pub async fn pause(&self, within: Duration) -> bool {
        self.signal(Signal::SIGSTOP);
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if self.running_members() == 0 {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// Lets a paused group go on.
    pub fn resume(&self) {
        self.signal(Signal::SIGCONT);
    }

    /// Members neither stopped nor gone.
    fn running_members(&self) -> usize {
        self.live_members()
            .iter()
            .filter(|(pid, _)| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|stat| parse_stat(&stat))
                    .is_some_and(|stat| !matches!(stat.state, 'T' | 't' | 'Z' | 'X'))
            })
            .count()
    }

    /// Whether any member of the group or the session is still running (not a zombie).
    pub fn alive(&self) -> bool {
        !self.live_members().is_empty()
    }

    /// Ends every member: SIGTERM (and SIGCONT, so stopped members see it), then SIGKILL once
    /// `grace` has passed. Returns when no live member remains, or the kernel did not finish
    /// them within a second of SIGKILL.
    pub async fn end(&self, grace: Duration) {
        if !self.alive() {
            return;
        }
        self.signal(Signal::SIGTERM);
        self.signal(Signal::SIGCONT);
        if self.wait_gone(grace).await {
            return;
        }
        tracing::debug!(
            "process group {} outlived SIGTERM; sending SIGKILL",
            self.leader
        );
        self.signal(Signal::SIGKILL);
        if !self.wait_gone(KILL_WAIT).await {
            tracing::warn!(
                "process group {} still has members after SIGKILL",
                self.leader
            );
        }
    }

    /// Polls until no live member remains (true) or `limit` passes (false).
    async fn wait_gone(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        let mut pause = Duration::from_millis(1);
        loop {
            if !self.alive() {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }

    /// SIGKILLs every other process that still holds the command's output pipes: something the
    /// command started that left its session (setsid) but kept writing to our pipe. Returns how
    /// which they were.
    pub fn kill_pipe_holders(&self) -> Vec<i32> {
        let links = self.pipes.map(|inode| format!("pipe:[{inode}]"));
        let own = std::process::id().to_string();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let holders: Vec<i32> = entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name();
                let name = name.to_str()?;
                let pid: i32 = name.parse().ok().filter(|_| name != own)?;
                if is_spawn_in_flight(pid) {
                    return None;
                }
                let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
                let holds = fds.flatten().any(|fd| {
                    std::fs::read_link(fd.path()).is_ok_and(|target| {
                        links.iter().any(|link| target.as_os_str() == link.as_str())
                    })
                });
                holds.then_some(pid)
            })
            .collect();
        for pid in &holders {
            tracing::debug!("killing process {pid}: it left the session but holds the output pipe");
            let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
        }
        holders
    }

    /// Live processes in the group or the session, and whether each is in the group.
    fn live_members(&self) -> Vec<(i32, bool)> {
        let id = self.leader.as_raw();
        let candidates = match super::reaper::possible_members() {
            Some(pids) => pids,
            None => {
                let Ok(entries) = std::fs::read_dir("/proc") else {
                    // Without /proc, trust killpg alone: a group that answers has members.
                    return match killpg(self.leader, None) {
                        Err(Errno::ESRCH) => Vec::new(),
                        _ => vec![(id, true)],
                    };
                };
                entries
                    .flatten()
                    .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
                    .collect()
            }
        };
        candidates
            .into_iter()
            .filter_map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                let stat = parse_stat(&stat)?;
                let member = stat.group == id || stat.session == id;
                (member && stat.state != 'Z' && stat.state != 'X')
                    .then_some((pid, stat.group == id))
            })
            .collect()
    }
}

/// Kills the whole group with SIGKILL when dropped while armed: the safety net for a run whose
/// future is dropped mid-way (the caller went away).
pub struct GroupGuard {
    group: Option<Group>,
}

impl GroupGuard {
    pub fn new(group: Group) -> Self {
        Self { group: Some(group) }
    }

    /// The group has been ended properly; nothing left to do on drop.
    pub fn disarm(mut self) {
        self.group = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.group.take() {
            group.signal(Signal::SIGKILL);
        }
    }
}

/// Whether `pid` is one of cairn's own children still between fork and exec: it runs cairn's
/// image and holds copies of every descriptor cairn had open at the fork, our pipes included,
/// until its exec closes them. Another command being started at the same moment is not a
/// process that left our command's session, and must not be killed as one.
fn is_spawn_in_flight(pid: i32) -> bool {
    let own_child = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| parse_stat(&stat))
        .is_some_and(|stat| stat.parent == std::process::id() as i32);
    let same_image = || match (
        std::fs::read_link(format!("/proc/{pid}/exe")),
        std::fs::read_link("/proc/self/exe"),
    ) {
        (Ok(theirs), Ok(ours)) => theirs == ours,
        _ => false,
    };
    own_child && same_image()
}

/// Polls until none of `pids` is running any more (gone, or a zombie) or `limit` passes. A
/// SIGKILLed process closes its files before it is done dying, so seeing the pipe close is
/// not yet seeing it gone.
pub async fn wait_pids_gone(pids: &[i32], limit: Duration) {
    let running = |pid: &i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| parse_stat(&stat))
            .is_some_and(|stat| stat.state != 'Z' && stat.state != 'X')
    };
    let deadline = tokio::time::Instant::now() + limit;
    while pids.iter().any(running) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// State, parent, process group and session from a `/proc/PID/stat` line. The command name is
/// in parentheses and may itself contain spaces and parentheses, so parsing starts after the
/// last `)`.
pub fn parse_stat(stat: &str) -> Option<ProcStat> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some(ProcStat {
        state,
        parent,
        group,
        session,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        let stat = |state, group, session| {
            Some(ProcStat {
                state,
                parent: 1,
                group,
                session,
            })
        };
        assert_eq!(parse_stat("42 (sleep) S 1 42 40 0 -1"), stat('S', 42, 40));
        assert_eq!(parse_stat("7 (a) b (c)) Z 1 99 98 0"), stat('Z', 99, 98));
        assert_eq!(parse_stat("garbage"), None);
    }

    /// A child still running cairn's own image is a spawn between fork and exec (it holds
    /// copies of cairn's descriptors for that moment); a child that exec'd a command is not,
    /// and neither is cairn itself.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn only_own_children_still_in_cairns_image_count_as_spawns_in_flight() {
        // SAFETY: the child only calls async-signal-safe functions (pause, _exit) until it
        // is killed: the state of a spawn between fork and exec.
        let forked = match unsafe { nix::unistd::fork() }.unwrap() {
            nix::unistd::ForkResult::Child => loop {
                // SAFETY: pause has no preconditions.
                unsafe { libc::pause() };
            },
            nix::unistd::ForkResult::Parent { child } => child,
        };
        let mut sleeper = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let forked_seen = is_spawn_in_flight(forked.as_raw());
        let sleeper_seen = is_spawn_in_flight(sleeper.id() as i32);
        let _ = kill(forked, Signal::SIGKILL);
        let _ = nix::sys::wait::waitpid(forked, None);
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        assert!(
            forked_seen,
            "a child between fork and exec is a spawn in flight"
        );
        assert!(!sleeper_seen, "a child that exec'd a command is not");
        assert!(!is_spawn_in_flight(std::process::id() as i32));
    }
}
