//! The supervisor of one sandboxed command's Unix sockets: a thread in cairn that answers the
//! seccomp filter's user notifications (`seccomp::UnixSockets`). Landlock on the kernels most
//! users have cannot tell one socket path from another, and a seccomp filter cannot read
//! paths, so the decision is made here, where paths can be read.
//!
//! A refused `socket(AF_UNIX)` is answered EACCES and noted. A `connect` is never let through
//! to run in the command (its address could be rewritten by another thread after the check):
//! the supervisor copies the address, takes a duplicate of the command's socket
//! (`pidfd_getfd`), opens the named path itself, checks where that really is (the opened file,
//! not the name, so no symlink or rename race moves it), and connects the socket to the opened
//! file through `/proc/self/fd`. Places outside `SocketReach` are answered EACCES and noted, so the
//! command's result can say which server it was kept from.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::sync::MutexExt;

/// `SO_DOMAIN` (the generic value; the filter exists only for x86_64 and aarch64).
const SO_DOMAIN: libc::c_int = 39;
/// Refusals kept per command (the result names a few, not thousands).
const KEEP_REFUSED: usize = 8;

/// Where a supervised command may connect: sockets, or directories whose sockets it may use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SocketReach {
    pub allowed: Vec<PathBuf>,
}

impl SocketReach {
    fn allows(&self, real: &Path) -> bool {
        self.allowed.iter().any(|place| real.starts_with(place))
    }
}

/// The pair of sockets the command's listener travels over, made before the fork.
#[derive(Debug)]
pub struct Channel {
    parent: OwnedFd,
    child: OwnedFd,
}

impl Channel {
    pub fn new() -> std::io::Result<Self> {
        let mut fds = [0; 2];
        // SAFETY: socketpair writes two descriptors into `fds`, which we then own.
        let made = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if made != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just created and are owned by nothing else.
        Ok(unsafe {
            Self {
                parent: OwnedFd::from_raw_fd(fds[0]),
                child: OwnedFd::from_raw_fd(fds[1]),
            }
        })
    }

    /// The end the child sends its listener on.
    pub fn child_end(&self) -> RawFd {
        self.child.as_raw_fd()
    }
}

/// Child side, between fork and exec: sends `listener` to cairn and closes it here, so the
/// command never holds its own supervisor's descriptor. Raw system calls only.
pub fn hand_over(channel: RawFd, listener: RawFd) -> std::io::Result<()> {
    // A control message with one descriptor, on the stack (no allocation after fork).
    let mut space = [0u64; 4];
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: every pointer refers to the locals above, which outlive the sendmsg call;
    // CMSG_* only compute offsets inside `space`, which is large enough for one descriptor.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(size_of::<RawFd>() as u32) as usize;
        let cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(size_of::<RawFd>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), listener);
        let sent = libc::sendmsg(channel, &raw const msg, libc::MSG_NOSIGNAL);
        libc::close(listener);
        if sent != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A running supervisor; it stops when dropped (or when no process of the command is left).
#[derive(Debug)]
pub struct Supervisor {
    /// Closing this wakes the thread to stop.
    _stop: OwnedFd,
    refused: Arc<Mutex<Vec<String>>>,
}

impl Supervisor {
    /// Takes the listener the child sent over `channel` (it was sent before the child's exec,
    /// which `spawn` waited for) and starts answering it.
    pub fn start(channel: Channel, reach: SocketReach) -> std::io::Result<Self> {
        let listener = receive(&channel.parent)?;
        drop(channel);
        let (stop_read, stop_write) =
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(std::io::Error::from)?;
        let refused = Arc::new(Mutex::new(Vec::new()));
        let noted = Arc::clone(&refused);
        std::thread::Builder::new()
            .name("cairn-sockets".into())
            .spawn(move || serve(&listener, &stop_read, &reach, &noted))?;
        Ok(Self {
            _stop: stop_write,
            refused,
        })
    }

    /// What the command was refused, like `/tmp/tmux-1000/default` or `a new Unix socket`.
    pub fn refused(&self) -> Vec<String> {
        self.refused.locked().clone()
    }
}

fn receive(channel: &OwnedFd) -> std::io::Result<OwnedFd> {
    let mut space = [0u64; 4];
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: as in `hand_over`; the received descriptor is checked before it is owned.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &raw mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.as_mut_ptr().cast();
        msg.msg_controllen = size_of_val(&space);
        let got = libc::recvmsg(
            channel.as_raw_fd(),
            &raw mut msg,
            libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
        );
        let cmsg = libc::CMSG_FIRSTHDR(&raw const msg);
        if got != 1 || cmsg.is_null() || (*cmsg).cmsg_type != libc::SCM_RIGHTS {
            return Err(std::io::Error::other(
                "the sandboxed command did not hand over its socket listener",
            ));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

fn serve(listener: &OwnedFd, stop: &OwnedFd, reach: &SocketReach, refused: &Mutex<Vec<String>>) {
    loop {
        let mut fds = [
            libc::pollfd {
                fd: listener.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: stop.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: `fds` is a valid array of two pollfd for the duration of the call.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        // Stopped, or every process under the filter is gone.
        if fds[1].revents != 0 || fds[0].revents & (libc::POLLHUP | libc::POLLERR) != 0 {
            return;
        }
        if fds[0].revents & libc::POLLIN == 0 {
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
            // The caller was interrupted or died meanwhile: nothing to answer.
            continue;
        }
        let answer = decide(listener, &notif, reach, refused);
        let mut resp = libc::seccomp_notif_resp {
            id: notif.id,
            val: 0,
            error: 0,
            flags: 0,
        };
        if let Err(errno) = answer {
            resp.error = -errno;
        }
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

fn note(refused: &Mutex<Vec<String>>, what: String) {
    let mut refused = refused.locked();
    if refused.len() < KEEP_REFUSED && !refused.contains(&what) {
        refused.push(what);
    }
}

/// The answer to one notification: `Ok` (the call returns 0) or an errno.
fn decide(
    listener: &OwnedFd,
    notif: &libc::seccomp_notif,
    reach: &SocketReach,
    refused: &Mutex<Vec<String>>,
) -> Result<(), i32> {
    let nr = libc::c_long::from(notif.data.nr);
    if nr == libc::SYS_socket {
        let kind = notif.data.args[1] as i32 & 0xf;
        let what = match kind {
            libc::SOCK_STREAM | libc::SOCK_SEQPACKET => "a new Unix socket",
            libc::SOCK_DGRAM | libc::SOCK_RAW => "a Unix datagram socket",
            _ => "a Unix socket of an unknown type",
        };
        note(refused, what.into());
        return Err(libc::EACCES);
    }
    if nr != libc::SYS_connect {
        return Err(libc::ENOSYS);
    }
    let pid = notif.pid as libc::pid_t;
    let len = (notif.data.args[2] as usize).min(size_of::<libc::sockaddr_storage>());
    let address = read_memory(pid, notif.data.args[1], len)?;
    // The pid could have been reused by now: the notification still being live proves it
    // names the caller, and the pidfd keeps naming that process afterwards.
    let pidfd = pidfd_open(pid)?;
    still_waiting(listener, notif.id)?;
    let socket = pidfd_getfd(&pidfd, notif.data.args[0] as RawFd)?;
    let family = address
        .get(..2)
        .map_or(0, |b| libc::sa_family_t::from_ne_bytes([b[0], b[1]]));
    if socket_domain(&socket)? != libc::AF_UNIX || i32::from(family) != libc::AF_UNIX {
        // Not a Unix address: the kernel judges our copy on the same socket.
        return connect_raw(&socket, &address);
    }
    let path = &address[2..];
    if path.first().is_none_or(|b| *b == 0) {
        let name = String::from_utf8_lossy(path.get(1..).unwrap_or_default());
        let name = name.trim_end_matches('\0');
        note(refused, format!("the abstract Unix socket @{name}"));
        return Err(libc::EACCES);
    }
    let end = path.iter().position(|b| *b == 0).unwrap_or(path.len());
    let named = Path::new(std::ffi::OsStr::from_bytes(&path[..end]));
    let named = if named.is_absolute() {
        named.to_path_buf()
    } else {
        PathBuf::from(format!("/proc/{pid}/cwd")).join(named)
    };
    let opened = open_path(&named)?;
    let real = std::fs::read_link(format!("/proc/self/fd/{}", opened.as_raw_fd()))
        .map_err(|err| err.raw_os_error().unwrap_or(libc::EACCES))?;
    if !reach.allows(&real) {
        note(refused, real.display().to_string());
        return Err(libc::EACCES);
    }
    let through = format!("/proc/self/fd/{}", opened.as_raw_fd());
    connect_raw(&socket, &unix_address(through.as_bytes()))
}

fn read_memory(pid: libc::pid_t, at: u64, len: usize) -> Result<Vec<u8>, i32> {
    let mut buf = vec![0u8; len];
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: at as *mut libc::c_void,
        iov_len: len,
    };
    // SAFETY: `local` covers `buf`; the kernel checks the remote range itself.
    let got = unsafe { libc::process_vm_readv(pid, &raw const local, 1, &raw const remote, 1, 0) };
    if got < 0 {
        return Err(libc::EFAULT);
    }
    buf.truncate(got as usize);
    Ok(buf)
}

fn still_waiting(listener: &OwnedFd, id: u64) -> Result<(), i32> {
    let mut id = id;
    // SAFETY: ID_VALID reads the u64 it is given.
    let valid = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
            &mut id,
        )
    };
    if valid != 0 {
        return Err(libc::EINTR);
    }
    Ok(())
}

fn pidfd_open(pid: libc::pid_t) -> Result<OwnedFd, i32> {
    // SAFETY: pidfd_open takes plain integers and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    owned(fd)
}

fn pidfd_getfd(pidfd: &OwnedFd, target: RawFd) -> Result<OwnedFd, i32> {
    // SAFETY: pidfd_getfd duplicates the target's descriptor into ours, or fails.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), target, 0) };
    owned(fd)
}

fn owned(fd: libc::c_long) -> Result<OwnedFd, i32> {
    if fd < 0 {
        return Err(last_errno());
    }
    // SAFETY: a descriptor the kernel just returned to us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EACCES)
}

fn socket_domain(socket: &OwnedFd) -> Result<i32, i32> {
    let mut domain: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `domain`.
    let done = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_DOMAIN,
            (&raw mut domain).cast(),
            &raw mut len,
        )
    };
    if done != 0 {
        return Err(last_errno());
    }
    Ok(domain)
}

fn open_path(path: &Path) -> Result<OwnedFd, i32> {
    let name = CString::new(path.as_os_str().as_bytes()).map_err(|_| libc::EINVAL)?;
    // SAFETY: `name` is a valid C string; O_PATH opens nothing but a handle on the file.
    let fd = unsafe { libc::open(name.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    owned(libc::c_long::from(fd))
}

/// A `sockaddr_un` for `path`, as bytes.
fn unix_address(path: &[u8]) -> Vec<u8> {
    let mut address = (libc::AF_UNIX as libc::sa_family_t).to_ne_bytes().to_vec();
    address.extend_from_slice(path);
    address.push(0);
    address
}

fn connect_raw(socket: &OwnedFd, address: &[u8]) -> Result<(), i32> {
    // SAFETY: `address` holds `len` bytes of a socket address; the kernel copies them.
    let done = unsafe {
        libc::connect(
            socket.as_raw_fd(),
            address.as_ptr().cast(),
            address.len() as libc::socklen_t,
        )
    };
    if done != 0 {
        return Err(last_errno());
    }
    Ok(())
}
