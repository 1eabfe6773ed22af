//! Variables that tell a command where a server of the user's listens: tmux, screen, Docker,
//! the D-Bus session bus, X11 and Wayland, terminal emulators' and editors' remote-control
//! sockets, ssh and gpg agents. A command that finds one can ask that server to run something
//! outside the sandbox (`tmux run-shell`, `docker run -v /:/host`, `nvim --remote-send`), so
//! `process::hidden_vars` drops them all from commands' environments unless `pass_env` lists
//! them. Recognised by name (a list plus the naming patterns such variables follow) and by
//! value (a `unix:` address, or a path that is a Unix socket), so a server this list never
//! heard of is caught by what its variable holds.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// Names of server variables that follow no pattern below.
const SERVER_VARS: &[&str] = &[
    // Terminal multiplexers.
    "TMUX",
    "TMUX_PANE",
    "TMUX_TMPDIR",
    "STY",
    "ZELLIJ",
    "ZELLIJ_SESSION_NAME",
    "ZELLIJ_PANE_ID",
    // Containers and their engines.
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "CONTAINER_HOST",
    "PODMAN_HOST",
    // Desktop sessions: the bus, the display servers, sound, the session manager.
    "XDG_RUNTIME_DIR",
    "DISPLAY",
    "XAUTHORITY",
    "WAYLAND_DISPLAY",
    "SESSION_MANAGER",
    "PULSE_SERVER",
    "PIPEWIRE_REMOTE",
    "HYPRLAND_INSTANCE_SIGNATURE",
    // systemd's service-manager sockets.
    "NOTIFY_SOCKET",
    "LISTEN_FDS",
    "LISTEN_PID",
    "LISTEN_FDNAMES",
    // Terminal emulators' remote control.
    "KITTY_LISTEN_ON",
    "KITTY_WINDOW_ID",
    "KITTY_PID",
    "WEZTERM_UNIX_SOCKET",
    "WEZTERM_PANE",
    "ALACRITTY_SOCKET",
    // Editors' servers.
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "VIM_SERVERNAME",
    "EMACS_SERVER_FILE",
    "EMACS_SOCKET_NAME",
    "VSCODE_GIT_ASKPASS_NODE",
    "VSCODE_GIT_ASKPASS_MAIN",
    "VSCODE_GIT_ASKPASS_EXTRA_ARGS",
    "JETBRAINS_REMOTE_RUN",
    // Agents that sign or decrypt on request.
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "GNOME_KEYRING_CONTROL",
    "GNOME_KEYRING_SOCKET",
];

/// Name endings and parts that mark a server address (`I3SOCK`, `SWAYSOCK`,
/// `DBUS_SYSTEM_BUS_ADDRESS`, `VSCODE_IPC_HOOK_CLI`, `VSCODE_GIT_IPC_HANDLE`, ...).
const SERVER_NAME_ENDINGS: &[&str] = &["SOCK", "SOCKET", "SOCKET_NAME", "SOCKET_PATH"];
const SERVER_NAME_PARTS: &[&str] = &[
    "_BUS_ADDRESS",
    "_IPC_",
    "_IPC",
    "IPC_HOOK",
    "IPC_HANDLE",
    "_LISTEN_ON",
    "_LISTEN_ADDRESS",
    "_AGENT_INFO",
    "_SERVER_FILE",
    "_SOCKET_",
    "_SOCK_",
    "DBUS_",
];

/// Whether the variable `name=value` names a server a command could ask to run something.
pub fn names_a_server(name: &str, value: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SERVER_VARS.contains(&upper.as_str())
        || SERVER_NAME_ENDINGS.iter().any(|end| upper.ends_with(end))
        || SERVER_NAME_PARTS.iter().any(|part| upper.contains(part))
        || holds_socket_address(value)
}

/// A `unix:` address (D-Bus, gRPC, Docker spell it so), or a path to a Unix socket, alone or
/// as one item of a `,` or `:` separated value (tmux's `TMUX` is `socket,pid,session`).
fn holds_socket_address(value: &str) -> bool {
    let lower = value.trim().to_ascii_lowercase();
    if ["unix:", "unix-abstract:", "npipe:", "vsock:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme))
    {
        return true;
    }
    value
        .split([',', ':', ';'])
        .filter(|item| item.starts_with('/'))
        .take(8)
        .any(|item| is_socket(Path::new(item)))
}

fn is_socket(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| meta.file_type().is_socket())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn servers_are_recognised_by_name() {
        for name in [
            "TMUX",
            "TMUX_PANE",
            "STY",
            "DOCKER_HOST",
            "DBUS_SESSION_BUS_ADDRESS",
            "DBUS_SYSTEM_BUS_ADDRESS",
            "XDG_RUNTIME_DIR",
            "DISPLAY",
            "WAYLAND_DISPLAY",
            "KITTY_LISTEN_ON",
            "NVIM",
            "NVIM_LISTEN_ADDRESS",
            "VSCODE_IPC_HOOK",
            "VSCODE_IPC_HOOK_CLI",
            "VSCODE_GIT_IPC_HANDLE",
            "EMACS_SOCKET_NAME",
            "SSH_AUTH_SOCK",
            "GPG_AGENT_INFO",
            "I3SOCK",
            "SWAYSOCK",
            "NIRI_SOCKET",
            "AT_SPI_BUS_ADDRESS",
            "MY_EDITOR_SOCKET_PATH",
            "tmux",
        ] {
            assert!(names_a_server(name, "x"), "{name}");
        }
    }

    #[test]
    fn ordinary_variables_stay() {
        for (name, value) in [
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("HOME", "/home/u"),
            ("TERM", "xterm-256color"),
            ("LANG", "C.UTF-8"),
            ("CARGO_HOME", "/home/u/.cargo"),
            ("EDITOR", "nvim"),
            ("SHELL", "/bin/bash"),
            ("PWD", "/"),
            ("MAKEFLAGS", "-j4"),
            ("NODE_OPTIONS", "--max-old-space-size=4096"),
        ] {
            assert!(!names_a_server(name, value), "{name}={value}");
        }
    }

    #[test]
    fn servers_are_recognised_by_what_the_variable_holds() {
        assert!(names_a_server("MY_BUS", "unix:path=/run/user/1/bus"));
        assert!(names_a_server("RPC", "UNIX:///run/app.sock"));
        assert!(names_a_server("RPC", "unix-abstract:app"));
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let socket = socket.to_str().unwrap();
        assert!(names_a_server("WHATEVER", socket));
        // tmux's form: the socket, the server's pid and the session.
        assert!(names_a_server("MULTIPLEXER", &format!("{socket},1234,0")));
        assert!(names_a_server("SEARCH_PATH", &format!("/usr/bin:{socket}")));
        // A plain file or directory is not a server.
        assert!(!names_a_server("WHATEVER", dir.path().to_str().unwrap()));
    }
}
