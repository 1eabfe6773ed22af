//! Nothing a command starts outlives it. cairn is a child subreaper
//! (`PR_SET_CHILD_SUBREAPER`), so whatever a command leaves behind when its parent dies —
//! `setsid -f`, double forks, `nohup … & disown` — is re-parented to cairn instead of init. At
//! the end of a foreground command, every such orphan that started after the command did is
//! killed with its whole subtree and reaped; at the end of the session, all of them are.
//!
//! cairn's own children that tokio (or the editor) waits for are registered here while they
//! live, and only unregistered pids are ever killed or reaped: stealing an exit status tokio
//! waits for would lose a command's result. Registration and the sweep's scan share one lock,
//! so a child forked during a sweep cannot be mistaken for an orphan.
//!
//! Limit: a daemon detached by a *background job* is found by nothing but its start time, so
//! it lives until the session ends (or a foreground command started before it ends).

use crate::sync::MutexExt;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

/// Longest wait for killed orphans to die and be reaped.
const REAP_WAIT: Duration = Duration::from_secs(2);
/// Rounds of scan-and-kill, for orphans that fork while being killed.
const ROUNDS: usize = 5;

/// Children cairn spawned and waits for itself.
static KNOWN: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Set once this process is a subreaper. Only then does it sweep: a process that embeds the
/// process service without being the reaper (a test binary) has children that are none of its
/// commands' business, and orphans do not come to it anyway.
static REAPER: AtomicBool = AtomicBool::new(false);

fn known() -> MutexGuard<'static, BTreeSet<i32>> {
    KNOWN.locked()
}

/// Makes this process the reaper of its orphaned descendants. Call once at start-up.
pub fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: a prctl with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    REAPER.store(true, Ordering::SeqCst);
    Ok(())
}

/// Spawns a child and registers it as one cairn waits for, under the sweep's lock.
pub fn spawn_known<T>(
    spawn: impl FnOnce() -> std::io::Result<T>,
    pid_of: impl Fn(&T) -> Option<u32>,
) -> std::io::Result<T> {
    let mut known = known();
    let child = spawn()?;
    if let Some(pid) = pid_of(&child) {
        known.insert(pid as i32);
    }
    Ok(child)
}

/// The child has been waited for: its pid may be reused by anything now.
pub fn forget(pid: u32) {
    known().remove(&(pid as i32));
}

/// One line of `/proc/PID/stat`, the fields the sweep needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Proc {
    parent: i32,
    zombie: bool,
    /// Clock ticks after boot.
    start: u64,
}

fn read_proc(pid: i32) -> Option<Proc> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse(&stat)
}

fn parse(stat: &str) -> Option<Proc> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(Proc {
        zombie: matches!(fields.first()?.chars().next()?, 'Z' | 'X'),
        parent: fields.get(1)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// The children of `pid` from `/proc/PID/task/*/children` (a thread's own list; orphans land on
/// any thread of their reaper). `None` where the kernel does not offer the lists.
fn children_of(pid: i32) -> Option<Vec<i32>> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut children = Vec::new();
    for task in tasks.flatten() {
        let list = std::fs::read_to_string(task.path().join("children")).ok()?;
        children.extend(
            list.split_whitespace()
                .filter_map(|c| c.parse::<i32>().ok()),
        );
    }
    Some(children)
}

/// cairn's children and all their descendants with what the sweep needs to know of them:
/// from the children lists (cheap), or a scan of all of /proc where those are missing.
fn family(me: i32) -> BTreeMap<i32, Proc> {
    descendants(me).unwrap_or_else(all_processes)
}

/// `family` from the children lists alone; `None` where the kernel does not offer them.
fn descendants(me: i32) -> Option<BTreeMap<i32, Proc>> {
    let mut queue = children_of(me)?;
    let mut found = BTreeMap::new();
    while let Some(pid) = queue.pop() {
        if found.contains_key(&pid) {
            continue;
        }
        let Some(proc) = read_proc(pid) else {
            continue;
        };
        found.insert(pid, proc);
        queue.extend(children_of(pid).unwrap_or_default());
    }
    Some(found)
}

/// Every process that can be a member of a command's group or session, when cairn is the
/// subreaper: its descendants (a session's members all descend from its leader, cairn's child,
/// and an orphan among them is re-parented to cairn, not init). `None` when cairn is not the
/// subreaper: then (or where the kernel offers no children lists) only a scan of all of /proc
/// finds them. On a busy machine that scan reads hundreds of stat files, once or more at the
/// end of every command.
pub(super) fn possible_members() -> Option<Vec<i32>> {
    if !REAPER.load(Ordering::SeqCst) {
        return None;
    }
    descendants(std::process::id() as i32).map(|found| found.into_keys().collect())
}

fn all_processes() -> BTreeMap<i32, Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            Some((pid, read_proc(pid)?))
        })
        .collect()
}

/// When `pid` started, in clock ticks after boot; what `sweep` compares orphans against.
pub fn start_time(pid: u32) -> Option<u64> {
    read_proc(pid as i32).map(|p| p.start)
}

/// Kills every orphan re-parented to cairn (not a registered child) that started at or after
/// `since` (all of them with `None`), with all its descendants, and reaps them. Returns the
/// pids it killed.
pub async fn sweep(since: Option<u64>) -> Vec<i32> {
    let killed = kill_orphans(since);
    let deadline = Instant::now() + REAP_WAIT;
    while !reap(&killed) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    killed
}

/// `sweep` for the last moments of the process, without a runtime.
pub fn sweep_blocking(since: Option<u64>) -> Vec<i32> {
    let killed = kill_orphans(since);
    let deadline = Instant::now() + REAP_WAIT;
    while !reap(&killed) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    killed
}

fn kill_orphans(since: Option<u64>) -> Vec<i32> {
    if !REAPER.load(Ordering::SeqCst) {
        return Vec::new();
    }
    let me = std::process::id() as i32;
    let mut killed = BTreeSet::new();
    for _ in 0..ROUNDS {
        // Held while scanning and signalling: no registered spawn can slip in between.
        let known = known();
        let procs = family(me);
        let mut victims: Vec<i32> = procs
            .iter()
            .filter(|(pid, p)| {
                p.parent == me
                    && !known.contains(pid)
                    && (p.zombie || since.is_none_or(|since| p.start >= since))
            })
            .map(|(pid, _)| *pid)
            .collect();
        // Their descendants, which are not cairn's children (yet).
        let mut i = 0;
        while i < victims.len() {
            let parent = victims[i];
            victims.extend(
                procs
                    .iter()
                    .filter(|(pid, p)| p.parent == parent && !victims.contains(pid))
                    .map(|(pid, _)| *pid)
                    .collect::<Vec<_>>(),
            );
            i += 1;
        }
        drop(known);
        let fresh: Vec<i32> = victims
            .into_iter()
            .filter(|pid| killed.insert(*pid))
            .collect();
        let live: Vec<&i32> = fresh
            .iter()
            .filter(|pid| procs.get(pid).is_some_and(|p| !p.zombie))
            .collect();
        if live.is_empty() && fresh.is_empty() {
            break;
        }
        for pid in live {
            tracing::debug!("killing process {pid}: a command left it behind");
            let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
        }
    }
    killed.into_iter().collect()
}

/// Reaps those of `pids` that are cairn's zombie children now; true once none of them is
/// left running or waiting to be reaped by cairn.
fn reap(pids: &[i32]) -> bool {
    let me = std::process::id() as i32;
    let mut done = true;
    for pid in pids {
        let Some(proc) = read_proc(*pid) else {
            continue;
        };
        if proc.parent != me {
            // Still running under a dying parent; it comes to cairn when that one is gone.
            done &= proc.zombie;
            continue;
        }
        match waitpid(Pid::from_raw(*pid), Some(WaitPidFlag::WNOHANG)) {
            Ok(nix::sys::wait::WaitStatus::StillAlive) => done = false,
            Ok(_) | Err(Errno::ECHILD) => {}
            Err(_) => done = false,
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_parent_state_and_start() {
        let line = "42 (a) b) S 7 42 42 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 123456 0 0";
        assert_eq!(
            parse(line),
            Some(Proc {
                parent: 7,
                zombie: false,
                start: 123456
            })
        );
        assert_eq!(parse("garbage"), None);
    }
}
