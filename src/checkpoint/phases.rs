//! Where a checkpoint's time goes, for the benches (`cargo bench --bench agent_loop`,
//! `--bench checkpoint`): wall time and the calling thread's CPU time per phase, summed over
//! the process. CPU time is what a shared, loaded machine does not blur: wall time there
//! measures the neighbours' builds as much as the work. Two clock reads a phase (vDSO), so it
//! is always on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The phases of taking and using a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// On the agent's path: the checkpoint before a batch that may change files (wall only).
    Before,
    /// On the agent's path: a command's checkpoint after and its changed-file list (wall).
    CommandAfter,
    /// The agent waiting for a snapshot running in the background (wall only).
    Settle,
    /// A whole snapshot, lock to refs (the sum of the next five and a little more).
    Snapshot,
    /// Reading the notification queue.
    Drain,
    /// Looking at the paths that may have changed (stat, read, hash, write blobs).
    Look,
    /// A walk of the whole workspace (first snapshot, fallback), blobs included.
    Scan,
    /// Writing the trees of changed directories.
    Trees,
    /// The commit and the two refs.
    Commit,
    /// A command's list of changed files (tree diff and the diffs of the files).
    Changes,
    /// Writing a deferred checkpoint to disk (in the background).
    Flush,
}

const PHASES: [Phase; 11] = [
    Phase::Before,
    Phase::CommandAfter,
    Phase::Settle,
    Phase::Snapshot,
    Phase::Drain,
    Phase::Look,
    Phase::Scan,
    Phase::Trees,
    Phase::Commit,
    Phase::Changes,
    Phase::Flush,
];

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Before => "on the path: checkpoint before a batch",
            Phase::CommandAfter => "on the path: a command's after + its list",
            Phase::Settle => "wait for a background snapshot",
            Phase::Snapshot => "snapshot (all of it)",
            Phase::Drain => "  read notifications",
            Phase::Look => "  look at changed paths",
            Phase::Scan => "  walk the whole tree",
            Phase::Trees => "  write trees",
            Phase::Commit => "  commit and refs",
            Phase::Changes => "a command's changed-file list",
            Phase::Flush => "write a deferred checkpoint (background)",
        }
    }
}

struct Totals {
    count: AtomicU64,
    wall_ns: AtomicU64,
    cpu_ns: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: Totals = Totals {
    count: AtomicU64::new(0),
    wall_ns: AtomicU64::new(0),
    cpu_ns: AtomicU64::new(0),
};
static TOTALS: [Totals; PHASES.len()] = [ZERO; PHASES.len()];

/// The CPU time of the calling thread.
pub fn thread_cpu() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } == 0;
    if !ok {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// CPU time (user + system) of this process, all its threads, and the children it waited
/// for: on a shared machine wall time measures the neighbours too, this measures the work.
pub fn process_cpu() -> Duration {
    let mut total = Duration::ZERO;
    for who in [libc::RUSAGE_SELF, libc::RUSAGE_CHILDREN] {
        // SAFETY: getrusage only writes the struct it is given.
        let usage = unsafe {
            let mut usage = std::mem::zeroed::<libc::rusage>();
            libc::getrusage(who, &mut usage);
            usage
        };
        for t in [usage.ru_utime, usage.ru_stime] {
            total += Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64);
        }
    }
    total
}

/// Times a phase until dropped. `on_thread`: the phase runs on this thread throughout (its
/// CPU time means something); an awaited phase may move threads and counts wall time only.
pub struct Timer {
    phase: Phase,
    wall: Instant,
    cpu: Option<Duration>,
}

/// Times a synchronous phase (wall and CPU time).
pub fn time(phase: Phase) -> Timer {
    Timer {
        phase,
        wall: Instant::now(),
        cpu: Some(thread_cpu()),
    }
}

/// Times an awaited phase (wall time only).
pub fn time_wall(phase: Phase) -> Timer {
    Timer {
        phase,
        wall: Instant::now(),
        cpu: None,
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        let Some(slot) = PHASES.iter().position(|p| *p == self.phase) else {
            return;
        };
        let totals = &TOTALS[slot];
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        totals.count.fetch_add(1, Ordering::Relaxed);
        totals
            .wall_ns
            .fetch_add(nanos(self.wall.elapsed()), Ordering::Relaxed);
        if let Some(cpu) = self.cpu {
            totals
                .cpu_ns
                .fetch_add(nanos(thread_cpu().saturating_sub(cpu)), Ordering::Relaxed);
        }
    }
}

/// One phase's totals since the last `reset`.
#[derive(Debug, Clone, Copy)]
pub struct PhaseTotal {
    pub phase: Phase,
    pub count: u64,
    pub wall: Duration,
    pub cpu: Duration,
}

/// Every phase's totals since the last `reset` (phases never entered left out).
pub fn totals() -> Vec<PhaseTotal> {
    PHASES
        .iter()
        .zip(TOTALS.iter())
        .map(|(phase, t)| PhaseTotal {
            phase: *phase,
            count: t.count.load(Ordering::Relaxed),
            wall: Duration::from_nanos(t.wall_ns.load(Ordering::Relaxed)),
            cpu: Duration::from_nanos(t.cpu_ns.load(Ordering::Relaxed)),
        })
        .filter(|t| t.count > 0)
        .collect()
}

/// Starts counting afresh.
pub fn reset() {
    for t in &TOTALS {
        t.count.store(0, Ordering::Relaxed);
        t.wall_ns.store(0, Ordering::Relaxed);
        t.cpu_ns.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_phase_is_counted_with_its_cpu_time() {
        let before = totals()
            .into_iter()
            .find(|t| t.phase == Phase::Changes)
            .map_or(0, |t| t.count);
        {
            let _timer = time(Phase::Changes);
            let mut x = 0u64;
            for i in 0..100_000u64 {
                x = std::hint::black_box(x.wrapping_add(i));
            }
        }
        let after = totals()
            .into_iter()
            .find(|t| t.phase == Phase::Changes)
            .expect("the phase was entered");
        assert!(after.count > before);
        assert!(after.wall > Duration::ZERO);
    }
}
