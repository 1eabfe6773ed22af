//! Runs the real `cairn` binary in a temp workspace with its own data and config directories,
//! so tests never see the developer's sessions, config or keys.
#![allow(clippy::unwrap_used, dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::AsyncWriteExt;

pub const CAIRN: &str = env!("CARGO_BIN_EXE_cairn");

/// What a run printed and how it ended.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// A workspace plus private data/config dirs for one test.
pub struct Sandbox {
    root: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("ws")).unwrap();
        Self { root }
    }

    pub fn file(self, rel: &str, content: &str) -> Self {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
        self
    }

    /// Writes the user's config file (`config.toml` in the private config directory).
    pub fn config(self, toml: &str) -> Self {
        let dir = self.root.path().join("config");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), toml).unwrap();
        self
    }

    /// The workspace directory (canonical, as cairn records it).
    pub fn workspace(&self) -> PathBuf {
        std::fs::canonicalize(self.root.path().join("ws")).unwrap()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join("ws").join(rel)
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    pub fn data_dir(&self) -> PathBuf {
        self.root.path().join("data")
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.data_dir().join("sessions")
    }

    /// The only (or newest) session log.
    pub fn log_path(&self) -> PathBuf {
        let mut logs: Vec<PathBuf> = std::fs::read_dir(self.sessions_dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        logs.sort();
        logs.pop().expect("no session log was written")
    }

    pub fn session_id(&self) -> String {
        self.log_path()
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    pub fn log_records(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.log_path())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// A `Command` for cairn in the workspace with the private directories.
    pub fn command(&self, args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(CAIRN);
        cmd.current_dir(self.workspace())
            .env("CAIRN_DATA_DIR", self.data_dir())
            .env("CAIRN_CONFIG_DIR", self.root.path().join("config"))
            .env("HOME", self.root.path())
            .env_remove("DEEPSEEK_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENROUTER_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("CAIRN_API_KEY")
            .env_remove("CAIRN_PROVIDER")
            .env_remove("CAIRN_MODEL")
            .env_remove("CAIRN_BASE_URL")
            .env_remove("CAIRN_API")
            .env_remove("CAIRN_MODE")
            .args(args)
            .kill_on_drop(true);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    pub async fn exec(&self, url: &str, args: &[&str]) -> Run {
        let mut full = vec!["exec", "--base-url", url];
        full.extend_from_slice(args);
        self.exec_raw(&full, &[]).await
    }

    pub async fn exec_raw(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let output = self
            .command(args, env)
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap();
        to_run(output)
    }

    /// Runs cairn without a prompt and waits: (status, stdout, stderr).
    pub fn exec_raw_sync(&self, args: &[&str]) -> (i32, String, String) {
        let out = std::process::Command::new(CAIRN)
            .current_dir(self.workspace())
            .env("CAIRN_DATA_DIR", self.data_dir())
            .env("CAIRN_CONFIG_DIR", self.root.path().join("config"))
            .env("HOME", self.root.path())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    pub async fn exec_with_stdin(
        &self,
        url: &str,
        args: &[&str],
        stdin: &str,
        env: &[(&str, &str)],
    ) -> Run {
        let mut full = vec!["exec", "--base-url", url];
        full.extend_from_slice(args);
        let mut child = self
            .command(&full, env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(stdin.as_bytes()).await.unwrap();
        drop(pipe);
        to_run(child.wait_with_output().await.unwrap())
    }
}

fn to_run(output: std::process::Output) -> Run {
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Polls `check` until it holds or the deadline passes; the deadline is only a guard.
pub async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !check() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// True while a process with this pid exists (and is not a zombie we could still reap).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

pub fn read_pid(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Live processes whose process group is `pgid`.
pub fn processes_in_group(pgid: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // Fields after the command name: state ppid pgrp ...
            let rest: Vec<&str> = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect();
            rest.first() != Some(&"Z")
                && rest.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid)
        })
        .collect()
}

/// This process's user id, from `/proc/self/status`.
fn current_uid() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|l| l.split_whitespace().next().map(str::to_string))
        })
        .unwrap_or_else(|| "0".into())
}

/// A directory outside the temp directories, or None (having said why the test `test` is
/// skipped) where none can be made: a build farm whose checkout, target dir and HOME all lie
/// under the temp directory, with no runtime dir, /run or /var/cache to write.
pub fn try_dir_outside_temp(test: &str) -> Option<tempfile::TempDir> {
    let temps = [
        std::env::temp_dir(),
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
    ];
    let in_temp = |path: &Path| {
        temps
            .iter()
            .any(|t| path.starts_with(std::fs::canonicalize(t).unwrap_or_else(|_| t.clone())))
    };
    let home_cache = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/cairn-tests"));
    // A build farm puts the checkout, the target dir and HOME under the temp directory: then
    // a directory made elsewhere (the user's runtime dir, /run, /var/cache) stands in.
    let uid = current_uid();
    let elsewhere = [
        std::env::var_os("XDG_RUNTIME_DIR").map(|d| PathBuf::from(d).join("cairn-tests")),
        Some(PathBuf::from(format!("/run/user/{uid}/cairn-tests"))),
        Some(PathBuf::from("/run/cairn-tests")),
        Some(PathBuf::from("/var/cache/cairn-tests")),
    ];
    let base = std::iter::once(PathBuf::from(env!("CARGO_TARGET_TMPDIR")))
        .chain(home_cache)
        .chain(elsewhere.into_iter().flatten())
        .filter(|candidate| !in_temp(candidate) && !candidate.starts_with("/dev"))
        .find(|candidate| std::fs::create_dir_all(candidate).is_ok());
    let Some(base) = base else {
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "SKIPPED {test}: it needs a directory outside the temp directories, and none of \
                 the target dir, $HOME, the runtime dir, /run or /var/cache is outside them and writable"
            );
        }
        return None;
    };
    tempfile::tempdir_in(base).ok()
}

/// `cairn undo --json --yes` in `sb`: its exit code and its report.
pub fn undo_json(sb: &Sandbox) -> (i32, serde_json::Value) {
    let run = sb.exec_raw_sync(&["undo", "--json", "--yes"]);
    let report = serde_json::from_str(run.1.trim()).unwrap_or(serde_json::Value::Null);
    assert!(!report.is_null(), "undo printed {:?} / {:?}", run.1, run.2);
    (run.0, report)
}

/// The report's reverted files as (path, action), sorted.
pub fn reverted(report: &serde_json::Value) -> Vec<(String, String)> {
    let mut list: Vec<(String, String)> = report["reverted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().into(),
                r["action"].as_str().unwrap().into(),
            )
        })
        .collect();
    list.sort();
    list
}
