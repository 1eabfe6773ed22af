//! Counting the programs a piece of code starts, for the tests and benches that must show a
//! path spawns no process (a checkpoint after an edit) or count how many a step spawns.
//!
//! A seccomp filter on the calling thread turns every `execve`/`execveat` of that thread, of
//! the threads it starts afterwards and of their child processes into a user notification; a
//! supervisor thread (it never starts a program itself) notes the program's path and lets the
//! call go on. The call waits for that answer, so a program is counted before its
//! `spawn` returns: reading the count after the code under test needs no waiting. Polling
//! `/proc/*/children` would miss a short-lived `git`.
//!
//! The filter cannot be removed: install it on a thread made for the purpose (a test), or in a
//! process that only measures (a bench). A process under it cannot install another filter with
//! a listener (the sandbox's socket supervision), so measured commands run unsandboxed.
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::sync::MutexExt;

/// How long the supervisor waits for a notification before it looks at its stop flag.
const POLL_MS: libc::c_int = 50;

/// The programs started under the filter, in order (their paths as the caller named them).
pub struct ExecCounter {
    programs: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    supervisor: Option<std::thread::JoinHandle<()>>,
}

impl ExecCounter {
    /// Puts the calling thread (and what it starts from now on) under the counting filter.
    pub fn install_on_this_thread() -> std::io::Result<Self> {
        // SAFETY: prctl with these arguments only sets the calling thread's flag.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let listener = install_filter()?;
        let programs = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let supervisor = {
            let (programs, stop) = (Arc::clone(&programs), Arc::clone(&stop));
            std::thread::spawn(move || supervise(&listener, &programs, &stop))
        };
        Ok(Self {
            programs,
            stop,
            supervisor: Some(supervisor),
        })
    }

    /// How many programs were started so far.
    pub fn count(&self) -> usize {
        self.programs.locked().len()
    }

    /// The paths of the programs started so far.
    pub fn programs(&self) -> Vec<String> {
        self.programs.locked().clone()
    }
}

impl Drop for ExecCounter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(supervisor) = self.supervisor.take() {
            let _ = supervisor.join();
        }
    }
}

/// The filter: `execve` and `execveat` notify, everything else is allowed.
fn install_filter() -> std::io::Result<OwnedFd> {
    const NR: u32 = 0;
    const ARCH: u32 = 4;
    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH: u32 = 0xc000_003e;
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH: u32 = 0xc000_00b7;
    let ld = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    let jeq = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    let ret = (libc::BPF_RET | libc::BPF_K) as u16;
    let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let program = [
        op(ld, 0, 0, ARCH),
        op(jeq, 0, 4, AUDIT_ARCH),
        op(ld, 0, 0, NR),
        op(jeq, 3, 0, libc::SYS_execve as u32),
        op(jeq, 2, 0, libc::SYS_execveat as u32),
        op(ret, 0, 0, libc::SECCOMP_RET_ALLOW),
        op(ret, 0, 0, libc::SECCOMP_RET_ALLOW),
        op(ret, 0, 0, libc::SECCOMP_RET_USER_NOTIF),
    ];
    let fprog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: `fprog` points at `program`, which outlives the call; the kernel copies it.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as u32,
            &raw const fprog,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just gave us this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

fn supervise(listener: &OwnedFd, programs: &Mutex<Vec<String>>, stop: &AtomicBool) {
    while !stop.load(Ordering::Acquire) {
        let mut fds = [libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        // SAFETY: `fds` is a valid array of one pollfd for the duration of the call.
        if unsafe { libc::poll(fds.as_mut_ptr(), 1, POLL_MS) } <= 0
            || fds[0].revents & libc::POLLIN == 0
        {
            continue;
        }
        // SAFETY: the kernel wants a zeroed notification to fill in.
        let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: RECV fills `notif`, which is the size the ioctl is defined for.
        if unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV,
                &mut notif,
            )
        } != 0
        {
            continue;
        }
        let address = if notif.data.nr == libc::SYS_execveat as i32 {
            notif.data.args[1]
        } else {
            notif.data.args[0]
        };
        // A search of PATH tries every directory: only a program that exists starts.
        if let Some(path) = read_path(notif.pid, address)
            && exists_for(notif.pid, &path)
        {
            programs.locked().push(path);
        }
        let mut resp = libc::seccomp_notif_resp {
            id: notif.id,
            val: 0,
            error: 0,
            flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
        };
        // SAFETY: SEND reads `resp`; a caller that went away makes it fail harmlessly.
        unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SEND,
                &mut resp,
            )
        };
    }
}

/// Whether `path`, as process `pid` would resolve it, names a file.
fn exists_for(pid: u32, path: &str) -> bool {
    let path = std::path::Path::new(path);
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::path::Path::new(&format!("/proc/{pid}/cwd")).join(path)
    };
    full.is_file()
}

/// The NUL-terminated path at `address` in process `pid`.
fn read_path(pid: u32, address: u64) -> Option<String> {
    use std::os::unix::fs::FileExt;
    let mem = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut buf = vec![0u8; 512];
    let n = mem.read_at(&mut buf, address).ok()?;
    let bytes = &buf[..n];
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_program_started_under_the_filter_is_counted_before_spawn_returns() {
        let (before, after, programs) = std::thread::spawn(|| {
            let counter = ExecCounter::install_on_this_thread().unwrap();
            let before = counter.count();
            let status = std::process::Command::new("true").status().unwrap();
            assert!(status.success());
            (before, counter.count(), counter.programs())
        })
        .join()
        .unwrap();
        assert_eq!((before, after), (0, 1), "{programs:?}");
        assert!(programs[0].ends_with("true"), "{programs:?}");
    }
}
