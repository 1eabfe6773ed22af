//! Keeps the provider key and other secrets out of the model's reach. At start-up, secret
//! variables leave cairn's environment block for good: cairn re-executes itself without them
//! and reads them back from a pipe (`/proc/PID/environ` shows the *initial* block, so removing
//! a variable in-process is not enough). The process is then marked non-dumpable, so other
//! processes of the same user cannot read its memory or environment either. Configuration
//! reads keys through `var`; commands get none of them unless `bash.pass_env` names them; and
//! any known secret value that still shows up in a tool's output is replaced by
//! `[redacted NAME]` before the model or the session log sees it.

use crate::sync::RwLockExt;
use std::borrow::Cow;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::sync::{RwLock, RwLockReadGuard};

/// The variable that tells the re-executed cairn which descriptor carries its secrets.
pub const FD_VAR: &str = "CAIRN_SECRETS_FD";

/// Values shorter than this are not redacted: they would match ordinary text.
const MIN_REDACT: usize = 8;

/// Secrets by name, as they were in the environment at start-up (or remembered since).
static STASH: RwLock<Vec<(String, String)>> = RwLock::new(Vec::new());

fn stash() -> RwLockReadGuard<'static, Vec<(String, String)>> {
    STASH.read_locked()
}

/// Whether a variable looks like a secret: its name contains KEY, TOKEN, SECRET, PASS,
/// CREDENTIAL or `_AUTH` (this covers `SSH_AUTH_SOCK` and AWS's), or its value is a URL with a
/// password (`postgres://user:pw@host`).
pub fn looks_secret(name: &str, value: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASS", "CREDENTIAL", "_AUTH"]
        .iter()
        .any(|part| upper.contains(part))
        || url_with_password(value)
}

/// `scheme://user:password@host…`
fn url_with_password(value: &str) -> bool {
    let Some((_, rest)) = value.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority.rsplit_once('@').is_some_and(|(userinfo, _)| {
        userinfo
            .split_once(':')
            .is_some_and(|(_, pw)| !pw.is_empty())
    })
}

/// A variable's value: from the stash first, then the environment (empty counts as unset).
pub fn var(name: &str) -> Option<String> {
    let stashed = stash()
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone());
    stashed
        .or_else(|| std::env::var(name).ok())
        .filter(|v| !v.is_empty())
}

/// The stashed secrets, by name.
pub fn stashed() -> Vec<(String, String)> {
    stash().clone()
}

/// Adds a secret to redact (the provider key under a name the patterns do not match).
pub fn remember(name: &str, value: &str) {
    let mut stash = STASH.write_locked();
    if !stash.iter().any(|(n, v)| n == name && v == value) {
        stash.push((name.to_owned(), value.to_owned()));
    }
}

/// `text` with every known secret value replaced by `[redacted NAME]`.
pub fn redact(text: &str) -> Cow<'_, str> {
    let stash = stash();
    let mut secrets: Vec<&(String, String)> = stash
        .iter()
        .filter(|(_, v)| v.len() >= MIN_REDACT && text.contains(v.as_str()))
        .collect();
    if secrets.is_empty() {
        return Cow::Borrowed(text);
    }
    // Longest first, so a secret containing another is replaced whole.
    secrets.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    let mut out = text.to_owned();
    for (name, value) in secrets {
        out = out.replace(value.as_str(), &format!("[redacted {name}]"));
    }
    Cow::Owned(out)
}

/// A serialisable value with every known secret redacted in all its strings.
pub fn redact_value<T: serde::Serialize + serde::de::DeserializeOwned>(value: T) -> T {
    let Ok(json) = serde_json::to_string(&value) else {
        return value;
    };
    let stash = stash();
    let hit = stash.iter().any(|(_, v)| {
        v.len() >= MIN_REDACT
            && serde_json::to_string(v).is_ok_and(|quoted| json.contains(quoted.trim_matches('"')))
    });
    drop(stash);
    if !hit {
        return value;
    }
    let mut parsed: serde_json::Value = match serde_json::from_str(&json) {
        Ok(parsed) => parsed,
        Err(_) => return value,
    };
    redact_strings(&mut parsed);
    serde_json::from_value(parsed).unwrap_or(value)
}

fn redact_strings(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(text) => {
            if let Cow::Owned(clean) = redact(text) {
                *text = clean;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact_strings),
        serde_json::Value::Object(fields) => fields.values_mut().for_each(redact_strings),
        _ => {}
    }
}

/// What `protect` did.
#[derive(Debug, PartialEq, Eq)]
pub enum Protected {
    /// This is the re-executed cairn; the secrets came over the pipe.
    Received(usize),
    /// No secret in the environment; nothing to move.
    Nothing,
    /// Re-executing failed; the secrets stay in the initial environment block (said why).
    Failed(String),
}

/// Start-up, before any thread exists: moves secret variables out of the environment block
/// (re-executing cairn when there are any, so this returns only in the new process, or on
/// failure) and makes the process non-dumpable.
pub fn protect() -> Protected {
    let outcome = match std::env::var(FD_VAR) {
        Ok(fd) => receive(&fd),
        Err(_) => {
            let secrets: Vec<(String, String)> = std::env::vars()
                .filter(|(name, value)| name != FD_VAR && looks_secret(name, value))
                .collect();
            if secrets.is_empty() {
                Protected::Nothing
            } else {
                let err = reexec(&secrets);
                // Still here: keep them in memory at least, and out of children's way.
                *STASH.write_locked() = secrets;
                Protected::Failed(err)
            }
        }
    };
    // SAFETY: a prctl with integer arguments. Non-dumpable: other processes of this user can
    // no longer read /proc/PID/mem or /proc/PID/environ of cairn, nor ptrace it.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    outcome
}

fn receive(fd: &str) -> Protected {
    // SAFETY: single-threaded start-up; nothing else reads the environment concurrently.
    unsafe { std::env::remove_var(FD_VAR) };
    let Ok(fd) = fd.parse::<i32>() else {
        return Protected::Failed(format!("{FD_VAR} is not a descriptor"));
    };
    if fd < 3
        || nix::fcntl::fcntl(
            unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) },
            nix::fcntl::FcntlArg::F_GETFD,
        )
        .is_err()
    {
        return Protected::Failed(format!("{FD_VAR} names no open descriptor"));
    }
    // SAFETY: the descriptor was checked open above and is ours alone from here on.
    let mut pipe = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let mut bytes = Vec::new();
    if let Err(err) = pipe.read_to_end(&mut bytes) {
        return Protected::Failed(format!("reading the secrets: {err}"));
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut fields = text.split('\0');
    let mut secrets = Vec::new();
    while let (Some(name), Some(value)) = (fields.next(), fields.next()) {
        if !name.is_empty() {
            secrets.push((name.to_owned(), value.to_owned()));
        }
    }
    let count = secrets.len();
    *STASH.write_locked() = secrets;
    Protected::Received(count)
}

/// Execs cairn again without `secrets` in its environment, handing them over on a pipe.
/// Returns only on failure, with the reason.
fn reexec(secrets: &[(String, String)]) -> String {
    let mut payload = Vec::new();
    for (name, value) in secrets {
        payload.extend_from_slice(name.as_bytes());
        payload.push(0);
        payload.extend_from_slice(value.as_bytes());
        payload.push(0);
    }
    let (read, write) = match nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC) {
        Ok(ends) => ends,
        Err(err) => return format!("creating a pipe: {err}"),
    };
    // The whole payload must fit before exec; a pipe holds up to a megabyte.
    if payload.len() > 64 * 1024 {
        let _ = nix::fcntl::fcntl(&write, nix::fcntl::FcntlArg::F_SETPIPE_SZ(1 << 20));
    }
    let mut writer = std::fs::File::from(write);
    if let Err(err) = writer.write_all(&payload) {
        return format!("handing the secrets over: {err}");
    }
    drop(writer);
    // The read end must survive exec.
    if let Err(err) = nix::fcntl::fcntl(
        &read,
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
    ) {
        return format!("keeping the pipe open: {err}");
    }
    let mut args = std::env::args_os();
    let argv0 = args.next().unwrap_or_else(|| "cairn".into());
    let mut command = std::process::Command::new("/proc/self/exe");
    command.arg0(argv0).args(args);
    for (name, _) in secrets {
        command.env_remove(name);
    }
    command.env(FD_VAR, read.as_raw_fd().to_string());
    let err = command.exec();
    format!("re-executing cairn: {err}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_and_password_urls_are_recognised() {
        for name in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "PGPASSWORD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "SSH_AUTH_SOCK",
            "NPM_CONFIG__AUTH",
            "my_key",
        ] {
            assert!(looks_secret(name, "x"), "{name}");
        }
        for name in ["PATH", "HOME", "TERM", "LANG", "XAUTHORITY"] {
            assert!(!looks_secret(name, "/usr/bin"), "{name}");
        }
        assert!(looks_secret(
            "DATABASE_URL",
            "postgres://app:hunter2@db:5432/app"
        ));
        assert!(looks_secret("X", "https://u:p@h/"));
        assert!(!looks_secret("DATABASE_URL", "postgres://app@db/app"));
        assert!(!looks_secret("HOMEPAGE", "https://example.com/a:b@c"));
    }

    #[test]
    fn known_values_are_redacted_by_name() {
        remember("TEST_REDACT_KEY", "sk-test-0123456789");
        remember("TEST_SHORT", "abc");
        let text = "key=sk-test-0123456789 and abc";
        assert_eq!(redact(text), "key=[redacted TEST_REDACT_KEY] and abc");
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
        let value = serde_json::json!({"out": ["sk-test-0123456789"], "n": 1});
        assert_eq!(
            redact_value(value),
            serde_json::json!({"out": ["[redacted TEST_REDACT_KEY]"], "n": 1})
        );
    }
}
