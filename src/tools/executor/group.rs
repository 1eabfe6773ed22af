//! A command's process group: signalling it, telling whether any live member remains (zombies
//! do not count: an orphan may wait for a reaper that never comes), and ending it with SIGTERM,
//! then SIGKILL after a grace period.

use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// Longest wait for the kernel to finish off a group after SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(1);

/// The process group a command leads (its id is the main child's pid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    pgid: Pid,
}

impl Group {
    pub fn new(leader: u32) -> Self {
        Self {
            pgid: Pid::from_raw(leader as i32),
        }
    }

    pub fn id(&self) -> i32 {
        self.pgid.as_raw()
    }

    /// Sends `signal` to every member; a group that is already gone is not an error.
    pub fn signal(&self, signal: Signal) {
        match killpg(self.pgid, signal) {
            Ok(()) | Err(Errno::ESRCH) => {}
            Err(err) => tracing::warn!("signalling process group {}: {err}", self.pgid),
        }
    }

    /// Whether any member is still running (not a zombie).
    pub fn alive(&self) -> bool {
        match killpg(self.pgid, None) {
            Err(Errno::ESRCH) => false,
            // Members exist, but they may all be zombies waiting to be reaped.
            _ => has_live_member(self.pgid.as_raw()),
        }
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
            self.pgid
        );
        self.signal(Signal::SIGKILL);
        if !self.wait_gone(KILL_WAIT).await {
            tracing::warn!(
                "process group {} still has members after SIGKILL",
                self.pgid
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
}

/// Kills the whole group with SIGKILL when dropped while armed: the safety net for a run whose
/// future is dropped mid-way (the caller went away) or a table dropped at session end.
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

/// Scans /proc for a member of group `pgid` that is not a zombie.
fn has_live_member(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        // Without /proc, trust killpg: members exist.
        return true;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            return false;
        };
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| parse_stat(&stat))
            .is_some_and(|(state, group)| group == pgid && state != 'Z' && state != 'X')
    })
}

/// State and process group from a `/proc/PID/stat` line. The command name is in parentheses and
/// may itself contain spaces and parentheses, so parsing starts after the last `)`.
pub fn parse_stat(stat: &str) -> Option<(char, i32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    Some((state, group))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        assert_eq!(parse_stat("42 (sleep) S 1 42 42 0 -1"), Some(('S', 42)));
        assert_eq!(parse_stat("7 (a) b (c)) Z 1 99 99 0"), Some(('Z', 99)));
        assert_eq!(parse_stat("garbage"), None);
    }
}
