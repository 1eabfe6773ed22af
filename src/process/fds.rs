//! What a started program inherits of cairn's descriptors: its three standard ones, nothing
//! else. cairn opens its own descriptors close-on-exec, but what cairn itself inherited (a
//! socket its parent left open, an editor's pipe, a test harness's descriptors) would pass on
//! to every command, hook and server: a door out of the sandbox (a socket to a server, a
//! file opened outside the workspace) that no rule sees.

/// Marks every descriptor from 3 up close-on-exec. Between fork and exec: raw system calls
/// only, nothing allocated.
pub fn close_inherited_on_exec() -> std::io::Result<()> {
    // SAFETY: close_range only changes descriptor flags of this process.
    let done = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if done == 0 {
        return Ok(());
    }
    // Kernels before 5.11: every descriptor up to the limit, one by one.
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let top = i32::try_from(limit.rlim_cur.min(1 << 20)).unwrap_or(1 << 20);
    for fd in 3..top {
        // SAFETY: fcntl on a descriptor that is not open fails with EBADF, nothing else.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
            // SAFETY: as above; it only sets the descriptor's flag.
            unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) };
        }
    }
    Ok(())
}
