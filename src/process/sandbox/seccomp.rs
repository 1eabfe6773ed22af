//! "Network off" for sandboxed commands, as a seccomp filter: no socket but Unix (local IPC)
//! and netlink (the kernel's own: routing, socket listings and device events only, see
//! `NETLINK_ALLOWED`) ones, so TCP, UDP, raw, packet and vsock sockets all fail with EACCES
//! (Landlock alone only covers TCP). Every check is an allowlist: families, Unix socket types,
//! netlink protocols, the architecture; what is not named is refused.
//! Unix sockets are the doors to the user's own servers (tmux, Docker, the session bus): the
//! filter hands them to a supervisor in cairn (seccomp user notification, `unix_supervisor`),
//! which either refuses every new Unix socket (`UnixSockets::Refused`) or connects the command's
//! sockets itself, only to places it allows (`UnixSockets::Supervised`). Unix datagram sockets,
//! which can send to any path without connecting, are refused in both; `socketpair` of stream
//! and seqpacket sockets (a process's own pipes: libuv, Python) stays allowed. io_uring, which
//! can create sockets behind seccomp's back, is refused, and system calls of another
//! architecture (32-bit `int 0x80`, x32) end the process, so the filter cannot be walked
//! around through another system call table.
//!
//! A network namespace would also do, but needs unprivileged user namespaces, which several
//! distributions switch off; a seccomp filter works wherever the kernel has it. The program is
//! built here rather than by a crate: seccompiler (rust-vmm) has no user-notification action
//! and no x32 guard, and libseccomp needs its C library at build and run time. `BpfProgram`
//! resolves named jumps, and the tests run every program through a small interpreter.

/// `struct seccomp_data` offsets: the system call number, the architecture, the low halves
/// (little-endian) of the first two arguments.
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0_LOW: u32 = 16;
const ARG1_LOW: u32 = 24;
const ARG2_LOW: u32 = 32;

/// The netlink protocols a command may open, by allowlist: the routing tables and addresses
/// (`getaddrinfo`, `getifaddrs`, `ip`), socket listings (`ss`) and device events (udev
/// monitors), all read-only without privileges. Every other protocol is refused: some carry
/// messages between unprivileged processes (`NETLINK_USERSOCK`, a door to a listener outside
/// the sandbox), generic netlink's families answer about other processes (taskstats), and a
/// protocol the kernel adds later is not judged yet.
const NETLINK_ALLOWED: &[u32] = &[
    libc::NETLINK_ROUTE as u32,
    libc::NETLINK_SOCK_DIAG as u32,
    libc::NETLINK_KOBJECT_UEVENT as u32,
];

// Classic BPF opcodes.
// BPF_LD | BPF_W | BPF_ABS (the first two are zero).
const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x05 | 0x10;
const JGE_K: u16 = 0x05 | 0x30;
const AND_K: u16 = 0x04 | 0x50;
const RET_K: u16 = 0x06;

const RET_ALLOW: u32 = 0x7fff_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_USER_NOTIF: u32 = 0x7fc0_0000;

/// The socket type without `SOCK_NONBLOCK` and `SOCK_CLOEXEC`.
const SOCK_TYPE_MASK: u32 = 0xf;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: Option<u32> = Some(0xc000_003e);
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: Option<u32> = Some(0xc000_00b7);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const AUDIT_ARCH: Option<u32> = None;

/// x32 system calls on x86_64 have this bit set.
#[cfg(target_arch = "x86_64")]
const X32_BIT: u32 = 0x4000_0000;
#[cfg(not(target_arch = "x86_64"))]
const X32_BIT: u32 = u32::MAX;

/// What a command may do with Unix sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnixSockets {
    /// `socket(AF_UNIX, ...)` goes to the supervisor, which refuses it (and notes it).
    Refused,
    /// Stream and seqpacket sockets may be made; every `connect` goes to the supervisor, which
    /// makes it on the command's behalf where allowed.
    Supervised,
}

/// A filter program. Its notifications need a supervisor: without one they fail (ENOSYS).
#[derive(Debug, Clone)]
pub struct Filter {
    pub program: Vec<libc::sock_filter>,
}

/// Where a jump goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    Allow,
    Deny,
    Notify,
    Kill,
    Socket,
    NewUnixSocket,
    Socketpair,
    Connect,
    Netlink,
}

enum Op {
    Load(u32),
    And(u32),
    /// If the accumulator equals `k` go to the label, else fall through.
    JumpIfEq(u32, Label),
    JumpIfAtLeast(u32, Label),
    JumpIfNotEq(u32, Label),
    Return(u32),
    /// Marks where a label's code starts.
    Here(Label),
}

/// A list of operations with named jump targets, assembled into classic BPF.
struct BpfProgram(Vec<Op>);

impl BpfProgram {
    fn assemble(&self) -> Vec<libc::sock_filter> {
        let mut at = Vec::new();
        let mut index = 0usize;
        for op in &self.0 {
            match op {
                Op::Here(label) => at.push((*label, index)),
                _ => index += 1,
            }
        }
        let target = |label: Label| -> usize {
            at.iter()
                .find(|(l, _)| *l == label)
                .map(|(_, i)| *i)
                .expect("every label a program jumps to is placed in it")
        };
        let mut out = Vec::new();
        for op in &self.0 {
            let here = out.len();
            let offset = |label: Label| -> u8 {
                u8::try_from(target(label) - here - 1)
                    .expect("seccomp programs here are far shorter than 256 instructions")
            };
            let (code, jt, jf, k) = match *op {
                Op::Here(_) => continue,
                Op::Load(offset) => (LD_W_ABS, 0, 0, offset),
                Op::And(mask) => (AND_K, 0, 0, mask),
                Op::JumpIfEq(k, label) => (JEQ_K, offset(label), 0, k),
                Op::JumpIfNotEq(k, label) => (JEQ_K, 0, offset(label), k),
                Op::JumpIfAtLeast(k, label) => (JGE_K, offset(label), 0, k),
                Op::Return(k) => (RET_K, 0, 0, k),
            };
            out.push(libc::sock_filter { code, jt, jf, k });
        }
        out
    }
}

/// The "network off" program for `unix`, or `None` on an architecture it was not written for
/// (there only Landlock's rules apply).
pub fn deny_sockets(unix: UnixSockets) -> Option<Filter> {
    use Label::*;
    use Op::*;
    let arch = AUDIT_ARCH?;
    let (new_unix_socket, on_connect) = match unix {
        UnixSockets::Refused => (Notify, Allow),
        UnixSockets::Supervised => (Allow, Notify),
    };
    let program = BpfProgram(vec![
        Load(ARCH),
        JumpIfNotEq(arch, Kill),
        Load(NR),
        JumpIfAtLeast(X32_BIT, Deny),
        JumpIfEq(libc::SYS_socket as u32, Socket),
        JumpIfEq(libc::SYS_socketpair as u32, Socketpair),
        JumpIfEq(libc::SYS_connect as u32, Connect),
        JumpIfEq(libc::SYS_io_uring_setup as u32, Deny),
        Return(RET_ALLOW),
        // By allowlist: the Unix socket types whose every way out is a `connect` the
        // supervisor sees (stream, seqpacket). Anything else is refused, datagram sockets
        // included however they are asked for (`SOCK_RAW` makes one too), since a datagram
        // socket reaches any path by `sendto`, with no `connect` to supervise.
        Here(Socket),
        Load(ARG0_LOW),
        JumpIfEq(libc::AF_NETLINK as u32, Netlink),
        JumpIfNotEq(libc::AF_UNIX as u32, Deny),
        Load(ARG1_LOW),
        And(SOCK_TYPE_MASK),
        JumpIfEq(libc::SOCK_STREAM as u32, NewUnixSocket),
        JumpIfEq(libc::SOCK_SEQPACKET as u32, NewUnixSocket),
        // The supervisor refuses it and notes what was refused.
        Return(RET_USER_NOTIF),
        Here(NewUnixSocket),
        Return(ret(new_unix_socket)),
        // A process's own pipes (libuv, Python): a pair of stream or seqpacket Unix sockets.
        // A datagram pair could be re-connected, or sent from, to any path.
        Here(Socketpair),
        Load(ARG0_LOW),
        JumpIfNotEq(libc::AF_UNIX as u32, Deny),
        Load(ARG1_LOW),
        And(SOCK_TYPE_MASK),
        JumpIfEq(libc::SOCK_STREAM as u32, Allow),
        JumpIfEq(libc::SOCK_SEQPACKET as u32, Allow),
        Return(RET_ERRNO | libc::EACCES as u32),
        Here(Connect),
        Return(ret(on_connect)),
        // Netlink by protocol (the third argument), by allowlist.
        Here(Netlink),
        Load(ARG2_LOW),
        JumpIfEq(NETLINK_ALLOWED[0], Allow),
        JumpIfEq(NETLINK_ALLOWED[1], Allow),
        JumpIfEq(NETLINK_ALLOWED[2], Allow),
        Return(RET_ERRNO | libc::EACCES as u32),
        Here(Deny),
        Return(RET_ERRNO | libc::EACCES as u32),
        Here(Notify),
        Return(RET_USER_NOTIF),
        Here(Kill),
        Return(RET_KILL_PROCESS),
        Here(Allow),
        Return(RET_ALLOW),
    ]);
    Some(Filter {
        program: program.assemble(),
    })
}

fn ret(label: Label) -> u32 {
    match label {
        Label::Notify => RET_USER_NOTIF,
        Label::Deny => RET_ERRNO | libc::EACCES as u32,
        Label::Kill => RET_KILL_PROCESS,
        _ => RET_ALLOW,
    }
}

/// Installs `filter` on the calling thread and returns its user-notification listener. Needs
/// `PR_SET_NO_NEW_PRIVS` first; a single system call, safe between fork and exec.
pub fn install(filter: &Filter) -> std::io::Result<std::os::fd::RawFd> {
    let program = libc::sock_fprog {
        len: filter.program.len() as u16,
        filter: filter.program.as_ptr().cast_mut(),
    };
    // SAFETY: `program` points at the filter, which outlives the call; the kernel copies it.
    let listener = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as u32,
            &raw const program,
        )
    };
    if listener < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(listener as std::os::fd::RawFd)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a classic BPF program on one system call, as the kernel would.
    fn verdict(program: &[libc::sock_filter], arch: u32, nr: u32, args: [u32; 3]) -> u32 {
        let mut acc = 0u32;
        let mut pc = 0usize;
        loop {
            let op = program[pc];
            pc += 1;
            match op.code {
                LD_W_ABS => {
                    acc = match op.k {
                        NR => nr,
                        ARCH => arch,
                        ARG0_LOW => args[0],
                        ARG1_LOW => args[1],
                        ARG2_LOW => args[2],
                        other => panic!("load of offset {other}"),
                    }
                }
                AND_K => acc &= op.k,
                RET_K => return op.k,
                JEQ_K | JGE_K => {
                    let taken = if op.code == JEQ_K {
                        acc == op.k
                    } else {
                        acc >= op.k
                    };
                    pc += usize::from(if taken { op.jt } else { op.jf });
                }
                other => panic!("opcode {other:#x}"),
            }
            assert!(pc < program.len(), "ran off the end");
        }
    }

    const DENY: u32 = RET_ERRNO | libc::EACCES as u32;

    fn call(unix: UnixSockets, nr: libc::c_long, args: [i32; 2]) -> u32 {
        call3(unix, nr, [args[0], args[1], 0])
    }

    fn call3(unix: UnixSockets, nr: libc::c_long, args: [i32; 3]) -> u32 {
        let Some(filter) = deny_sockets(unix) else {
            return RET_ALLOW;
        };
        let arch = AUDIT_ARCH.unwrap_or_default();
        verdict(&filter.program, arch, nr as u32, args.map(|a| a as u32))
    }

    #[test]
    fn only_local_sockets_are_made_and_unix_ones_go_to_the_supervisor() {
        if AUDIT_ARCH.is_none() {
            return;
        }
        use UnixSockets::*;
        let socket = libc::SYS_socket;
        let stream = libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
        for unix in [Refused, Supervised] {
            for family in [
                libc::AF_INET,
                libc::AF_INET6,
                libc::AF_PACKET,
                libc::AF_VSOCK,
            ] {
                assert_eq!(call(unix, socket, [family, stream]), DENY, "{family}");
            }
            assert_eq!(
                call(unix, socket, [libc::AF_NETLINK, 3]),
                RET_ALLOW,
                "NETLINK_ROUTE"
            );
            let dgram = libc::SOCK_DGRAM | libc::SOCK_CLOEXEC;
            assert_eq!(call(unix, socket, [libc::AF_UNIX, dgram]), RET_USER_NOTIF);
            // The pipes a process makes for itself stay; a datagram pair could send anywhere.
            let pair = libc::SYS_socketpair;
            assert_eq!(call(unix, pair, [libc::AF_UNIX, stream]), RET_ALLOW);
            let seqpacket = libc::SOCK_SEQPACKET;
            assert_eq!(call(unix, pair, [libc::AF_UNIX, seqpacket]), RET_ALLOW);
            assert_eq!(call(unix, pair, [libc::AF_UNIX, dgram]), DENY);
            assert_eq!(call(unix, libc::SYS_io_uring_setup, [8, 0]), DENY);
            assert_eq!(call(unix, libc::SYS_read, [0, 0]), RET_ALLOW);
        }
        let unix_stream = [libc::AF_UNIX, stream];
        assert_eq!(call(Refused, socket, unix_stream), RET_USER_NOTIF);
        assert_eq!(call(Refused, libc::SYS_connect, [3, 0]), RET_ALLOW);
        assert_eq!(call(Supervised, socket, unix_stream), RET_ALLOW);
        assert_eq!(call(Supervised, libc::SYS_connect, [3, 0]), RET_USER_NOTIF);
    }

    /// Unix sockets by allowlist: every type but stream and seqpacket (SOCK_RAW, which the
    /// kernel makes a datagram socket, SOCK_RDM, SOCK_PACKET, a type number not known yet)
    /// never becomes a socket the command holds, made alone or as a pair, and a pair of
    /// another family is refused.
    #[test]
    fn unix_sockets_are_made_only_of_the_types_the_supervisor_judges() {
        if AUDIT_ARCH.is_none() {
            return;
        }
        use UnixSockets::*;
        let flags = libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
        for unix in [Refused, Supervised] {
            for kind in [
                libc::SOCK_DGRAM,
                libc::SOCK_RAW,
                libc::SOCK_RDM,
                10, // SOCK_PACKET
                7,
                15,
            ] {
                let socket = call(unix, libc::SYS_socket, [libc::AF_UNIX, kind | flags]);
                assert_eq!(socket, RET_USER_NOTIF, "socket type {kind}");
                let pair = call(unix, libc::SYS_socketpair, [libc::AF_UNIX, kind | flags]);
                assert_eq!(pair, DENY, "socketpair type {kind}");
            }
            for family in [libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK, 99] {
                let pair = call(unix, libc::SYS_socketpair, [family, libc::SOCK_STREAM]);
                assert_eq!(pair, DENY, "socketpair family {family}");
            }
            let seqpacket = [libc::AF_UNIX, libc::SOCK_SEQPACKET | flags];
            let expected = if unix == Supervised {
                RET_ALLOW
            } else {
                RET_USER_NOTIF
            };
            assert_eq!(call(unix, libc::SYS_socket, seqpacket), expected);
        }
    }

    /// Netlink by allowlist of protocols: routing, socket diagnostics and device events; the
    /// protocol that carries messages between unprivileged processes (USERSOCK), generic
    /// netlink, audit, netfilter, the proc connector and a number not known yet are refused,
    /// for every socket type and flag.
    #[test]
    fn netlink_sockets_are_made_only_of_the_protocols_allowed() {
        if AUDIT_ARCH.is_none() {
            return;
        }
        let flags = libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
        for unix in [UnixSockets::Refused, UnixSockets::Supervised] {
            for kind in [libc::SOCK_RAW, libc::SOCK_DGRAM] {
                for protocol in [
                    libc::NETLINK_ROUTE,
                    libc::NETLINK_SOCK_DIAG,
                    libc::NETLINK_KOBJECT_UEVENT,
                ] {
                    let made = call3(
                        unix,
                        libc::SYS_socket,
                        [libc::AF_NETLINK, kind | flags, protocol],
                    );
                    assert_eq!(made, RET_ALLOW, "protocol {protocol}");
                }
                for protocol in [
                    libc::NETLINK_USERSOCK,
                    libc::NETLINK_GENERIC,
                    libc::NETLINK_AUDIT,
                    libc::NETLINK_NETFILTER,
                    libc::NETLINK_CONNECTOR,
                    libc::NETLINK_XFRM,
                    libc::NETLINK_CRYPTO,
                    libc::NETLINK_RDMA,
                    31,
                    -1,
                ] {
                    let made = call3(
                        unix,
                        libc::SYS_socket,
                        [libc::AF_NETLINK, kind | flags, protocol],
                    );
                    assert_eq!(made, DENY, "protocol {protocol}");
                }
            }
        }
    }

    #[test]
    fn another_architecture_or_system_call_table_is_refused() {
        let (Some(arch), Some(filter)) = (AUDIT_ARCH, deny_sockets(UnixSockets::Refused)) else {
            return;
        };
        let i386 = 0x4000_0003;
        assert_eq!(
            verdict(&filter.program, i386, 1, [0, 0, 0]),
            RET_KILL_PROCESS
        );
        if X32_BIT != u32::MAX {
            let x32_socket = X32_BIT | libc::SYS_socket as u32;
            assert_eq!(verdict(&filter.program, arch, x32_socket, [2, 1, 0]), DENY);
        }
    }
}
