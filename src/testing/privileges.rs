//! Running a closure without the privilege to read what file permissions deny, so a test of
//! "permission denied" means the same when the suite runs as root (containers, CI) as when it
//! runs as a user. Linux capabilities are per thread: the closure runs on a thread of its own
//! whose effective `CAP_DAC_OVERRIDE` and `CAP_DAC_READ_SEARCH` are dropped; threads it spawns
//! inherit that, the rest of the process keeps its own.

/// Runs `work` on a new thread that file permissions bind even as root. `None` when the
/// capabilities could not be dropped (then permission tests cannot mean anything here).
pub fn without_dac_override<T: Send>(work: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| drop_dac_capabilities().then(work))
            .join()
            .ok()
            .flatten()
    })
}

#[cfg(target_os = "linux")]
fn drop_dac_capabilities() -> bool {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    // CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2), from linux/capability.h.
    const DAC: u32 = (1 << 1) | (1 << 2);
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: capget/capset with a version-3 header and two data words, as the ABI wants; pid
    // 0 is the calling thread.
    unsafe {
        if libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) != 0 {
            return false;
        }
        data[0].effective &= !DAC;
        libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn drop_dac_capabilities() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() != 0 }
}
