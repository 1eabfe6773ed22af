//! The pseudo-terminal harness: cairn started in a PTY with private directories, its output
//! fed to a vt100 screen that the tests read and wait on.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use crate::support::cairn_cmd::{CAIRN, Sandbox};

/// Guard for every wait: generous, because CI machines are slow; never a synchronisation.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// Longer than a prompt's dead time and than the window after a key typed as text: a key
/// sent after this pause stands alone.
pub const PAUSE: Duration =
    Duration::from_millis(cairn::tui::stand_alone::DEAD_TIME.as_millis() as u64 + 150);

/// cairn running in a pseudo-terminal, its screen mirrored by a vt100 parser.
pub struct Tui {
    pub screen: Arc<Mutex<vt100::Parser>>,
    writer: Box<dyn Write + Send>,
    master: Box<dyn MasterPty + Send>,
    pub child: Box<dyn Child + Send + Sync>,
}

impl Tui {
    pub fn start(sb: &Sandbox, url: &str, mode: &str, cols: u16, rows: u16) -> Tui {
        Self::start_args(sb, &["--base-url", url, "--mode", mode], cols, rows)
    }

    pub fn start_args(sb: &Sandbox, args: &[&str], cols: u16, rows: u16) -> Tui {
        Self::start_env(sb, args, &[], cols, rows)
    }

    pub fn start_env(
        sb: &Sandbox,
        args: &[&str],
        env: &[(&str, &str)],
        cols: u16,
        rows: u16,
    ) -> Tui {
        let pty = native_pty_system();
        let pair = pty
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let root = sb.data_dir().parent().unwrap().to_path_buf();
        let mut cmd = CommandBuilder::new(CAIRN);
        cmd.cwd(sb.workspace());
        cmd.args(args);
        for key in [
            "DEEPSEEK_API_KEY",
            "OPENAI_API_KEY",
            "OPENROUTER_API_KEY",
            "CAIRN_PROVIDER",
            "CAIRN_MODEL",
            "CAIRN_MODE",
            "CAIRN_BASE_URL",
            "VISUAL",
            // No clipboard: what Ctrl+V finds must not depend on the desktop the tests run on.
            "DISPLAY",
            "WAYLAND_DISPLAY",
            "SSH_CONNECTION",
            "SSH_TTY",
        ] {
            cmd.env_remove(key);
        }
        let dir = |name: &str| root.join(name).into_os_string();
        cmd.env("CAIRN_API_KEY", "test");
        cmd.env("CAIRN_DATA_DIR", sb.data_dir());
        cmd.env("CAIRN_CONFIG_DIR", dir("config"));
        cmd.env("HOME", &root);
        cmd.env("XDG_DATA_HOME", dir("xdg-data"));
        cmd.env("XDG_CONFIG_HOME", dir("xdg-config"));
        cmd.env("XDG_STATE_HOME", dir("xdg-state"));
        cmd.env("TERM", "xterm-256color");
        for (key, value) in env {
            cmd.env(key, value);
        }
        let child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let screen = Arc::new(Mutex::new(vt100::Parser::new(nz(rows), nz(cols), 0)));
        let mut reader = pair.master.try_clone_reader().unwrap();
        let sink = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 16 * 1024];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().process(&buf[..n]);
            }
        });
        let writer = pair.master.take_writer().unwrap();
        Tui {
            screen,
            writer,
            master: pair.master,
            child,
        }
    }

    pub fn contents(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    /// Waits until the screen satisfies `check`; returns the screen then.
    pub async fn wait_for(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.contents();
            if check(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {what}; the screen:\n{screen}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    pub async fn wait_for_text(&self, text: &str) -> String {
        self.wait_for(&format!("`{text}`"), |s| s.contains(text))
            .await
    }

    pub fn send(&mut self, bytes: &str) {
        self.writer.write_all(bytes.as_bytes()).unwrap();
        self.writer.flush().unwrap();
    }

    /// A key pressed the way a person answers what is on screen: after a pause longer than a
    /// prompt's dead time and the typing window (so it stands alone; what the pause is for is
    /// the rule under test, not a wait for cairn), and nothing after it.
    pub async fn press(&mut self, key: &str) {
        tokio::time::sleep(PAUSE).await;
        self.send(key);
    }

    pub async fn submit(&mut self, prompt: &str) {
        self.wait_for_text("What should we work on?").await;
        self.send(prompt);
        self.wait_for_text(prompt).await;
        self.send("\r");
    }

    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        self.screen.lock().unwrap().set_size(nz(rows), nz(cols));
    }

    /// Ctrl+C twice, then the process must exit and leave the normal screen behind. Returns
    /// the screen, where what cairn printed after the UI (the resume hint) still arrives.
    pub async fn quit(mut self) -> Arc<Mutex<vt100::Parser>> {
        self.send("\x03");
        self.wait_for_text("Ctrl+C again").await;
        self.send("\x03");
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "cairn exited with {status:?}");
                break;
            }
            assert!(start.elapsed() < DEADLINE, "cairn did not quit");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        // The reader thread may still be feeding the last bytes (the switch back to the
        // normal screen) to the parser when the exit is seen: poll until it has.
        let start = Instant::now();
        while self.screen.lock().unwrap().screen().alternate_screen() {
            assert!(
                start.elapsed() < DEADLINE,
                "cairn exited but left the alternate screen on"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Arc::clone(&self.screen)
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

pub fn nz(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n).unwrap()
}

pub fn process_alive(pid: i32) -> bool {
    // Signal 0 checks existence; a zombie waiting for its parent counts as gone.
    let status = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = status
        .rsplit(')')
        .next()
        .and_then(|rest| rest.split_whitespace().next());
    !status.is_empty() && state != Some("Z")
}

pub fn read_pid(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}
