//! Finding a session's hooks: the user's (`[hooks]` of their config and `--config`, then
//! `~/.claude/settings.json`), then the project's (`.cairn/config.toml`, then
//! `.claude/settings.json`). A mistake in the user's own files stops the start with the
//! file's name; a project file that cannot be read is left out with a warning. A project's
//! hooks are judged by the one trust rule for project processes (`trust::ProcessTrust`): only
//! those trusted in their current content are loaded; the others are listed, for the user
//! to review (`cairn hooks list`, `cairn hooks trust`), and left out with a warning.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::claude::{self, ClaudeHook};
use super::{
    Event, Hook, HookFormat, HookOrigin, Hooks, MAX_STOP_BLOCKS, OnError, RunSettings, TIMEOUT_SECS,
};
use crate::config::{HookEntry, HooksFile};
use crate::trust::{Judged, ProcessKind, ProcessTrust, ProjectProcess};

/// Claude Code's hooks default to a minute, as there.
const CLAUDE_TIMEOUT_SECS: u64 = 60;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: hook {hook}: the matcher {matcher:?} is not a valid regex: {message}")]
    Matcher {
        path: PathBuf,
        hook: String,
        matcher: String,
        message: String,
    },
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
}

/// The hooks found, what to tell the user about them, and the project's hooks that wait for
/// the user's trust (`untrusted_notice` tells of those).
#[derive(Debug, Default)]
pub struct Loaded {
    pub hooks: Hooks,
    pub notices: Vec<String>,
    pub untrusted: Vec<Judged>,
}

impl Loaded {
    /// The warning for the project's hooks left out until trusted (none when all are): a
    /// headless run gives it; the TUI offers them at its start-up trust prompt instead.
    pub fn untrusted_notice(&self) -> Option<String> {
        (!self.untrusted.is_empty()).then(|| {
            format!(
                "{} (review them with `cairn hooks list`; `cairn hooks trust` trusts them, and they run from then on, also in this session)",
                crate::trust::skipped_warning(&self.untrusted)
            )
        })
    }
}

/// Every hook of a session in `workspace`. `user` is the merged `[hooks]` of the user's files
/// (`config_path` names them), `home` the user's home (for `~/.claude`), `trust` judges the
/// project's.
pub fn load(
    user: &HooksFile,
    config_path: &Path,
    home: Option<&Path>,
    run: RunSettings,
    trust: ProcessTrust,
) -> Result<Loaded, LoadError> {
    let workspace = run.workspace.clone();
    let mut loaded = Loaded::default();
    let mut hooks = from_file(user, config_path, false)?;
    if let Some(home) = home {
        let path = home.join(".claude").join("settings.json");
        hooks.extend(from_claude(&path, false, &mut loaded.notices)?);
    }
    let mut project = Vec::new();
    let cairn_path = workspace.join(".cairn").join("config.toml");
    match project_hooks_file(&cairn_path) {
        Ok(Some(file)) => match from_file(&file, &cairn_path, true) {
            Ok(found) => project.extend(found),
            Err(err) => loaded
                .notices
                .push(format!("left out the project's hooks: {err}")),
        },
        Ok(None) => {}
        Err(err) => loaded
            .notices
            .push(format!("left out the project's hooks: {err}")),
    }
    let claude_path = workspace.join(".claude").join("settings.json");
    match from_claude(&claude_path, true, &mut loaded.notices) {
        Ok(found) => project.extend(found),
        Err(err) => loaded
            .notices
            .push(format!("left out the project's hooks: {err}")),
    }
    for mut hook in project {
        let Some(process) = &hook.process else {
            continue;
        };
        match trust.judge(process) {
            Ok(judged) if judged.trusted() => hooks.push(hook),
            Ok(judged) => {
                loaded.untrusted.push(judged);
                hook.awaiting_trust = true;
                hooks.push(hook);
            }
            Err(err) => loaded
                .notices
                .push(format!("left out project hook {}: {err}", hook.name)),
        }
    }
    loaded.hooks = Hooks {
        hooks,
        max_stop_blocks: user.max_stop_blocks.unwrap_or(MAX_STOP_BLOCKS),
        run,
        trust: Some(trust),
    };
    Ok(loaded)
}

/// The `[hooks]` table of a project's `.cairn/config.toml` (its other keys are not ours).
fn project_hooks_file(path: &Path) -> Result<Option<HooksFile>, LoadError> {
    let failed = |message: String| LoadError::File {
        path: path.to_path_buf(),
        message,
    };
    let Some(text) = read_regular(path).map_err(|err| failed(err.to_string()))? else {
        return Ok(None);
    };
    let table: toml::Table = text
        .parse()
        .map_err(|err: toml::de::Error| failed(err.to_string()))?;
    let Some(hooks) = table.get("hooks") else {
        return Ok(None);
    };
    let file: HooksFile = hooks
        .clone()
        .try_into()
        .map_err(|err: toml::de::Error| failed(format!("[hooks]: {err}")))?;
    Ok(Some(file))
}

/// A file's text; `None` when there is none. A project file that is a symlink is not
/// followed (it could make a file outside the workspace the project's config).
fn read_regular(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::symlink_metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err),
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(std::io::Error::other(
                "it is a symlink; cairn does not follow it",
            ));
        }
        Ok(_) => {}
    }
    std::fs::read_to_string(path).map(Some)
}

fn from_file(file: &HooksFile, path: &Path, project: bool) -> Result<Vec<Hook>, LoadError> {
    let origin = HookOrigin {
        file: path.to_path_buf(),
        project,
        format: HookFormat::Cairn,
    };
    let mut hooks = Vec::new();
    for (event_name, entries) in file.by_event() {
        let event = Event::parse(event_name).ok_or_else(|| LoadError::File {
            path: path.to_path_buf(),
            message: format!("unknown hook event {event_name}"),
        })?;
        for (i, entry) in entries.iter().enumerate() {
            hooks.push(hook_of(event, i + 1, entry, &origin)?);
        }
    }
    Ok(hooks)
}

fn hook_of(
    event: Event,
    n: usize,
    entry: &HookEntry,
    origin: &HookOrigin,
) -> Result<Hook, LoadError> {
    let short = format!("{event} #{n}");
    let name = if origin.project {
        format!("{short} (.cairn/config.toml)")
    } else {
        short.clone()
    };
    Ok(Hook {
        matcher: matcher(entry.matcher.as_deref(), &origin.file, &name)?,
        event,
        command: entry.command.clone(),
        timeout: Duration::from_secs(entry.timeout_secs.unwrap_or(TIMEOUT_SECS).max(1)),
        on_error: entry.on_error.unwrap_or_default(),
        process: origin
            .project
            .then(|| process(&short, &origin.file, &entry.command)),
        awaiting_trust: false,
        origin: origin.clone(),
        name,
    })
}

fn process(name: &str, config: &Path, command: &str) -> ProjectProcess {
    ProjectProcess {
        kind: ProcessKind::Hook,
        name: name.to_string(),
        config: config.to_path_buf(),
        command: vec![command.to_string()],
    }
}

/// A matcher matched whole; none for an empty one or `*`.
fn matcher(text: Option<&str>, path: &Path, hook: &str) -> Result<Option<regex::Regex>, LoadError> {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty() && *t != "*") else {
        return Ok(None);
    };
    regex::Regex::new(&format!("^(?:{text})$"))
        .map(Some)
        .map_err(|err| LoadError::Matcher {
            path: path.to_path_buf(),
            hook: hook.to_string(),
            matcher: text.to_string(),
            message: err.to_string(),
        })
}

/// The hooks of a Claude Code settings file (none when it does not exist). Events cairn has
/// no point for are named in a notice.
fn from_claude(
    path: &Path,
    project: bool,
    notices: &mut Vec<String>,
) -> Result<Vec<Hook>, LoadError> {
    let failed = |message: String| LoadError::File {
        path: path.to_path_buf(),
        message,
    };
    let text = if project {
        read_regular(path)
    } else {
        match std::fs::read_to_string(path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            other => other.map(Some),
        }
    };
    let Some(text) = text.map_err(|err| failed(err.to_string()))? else {
        return Ok(Vec::new());
    };
    let found = claude::parse_settings(&text).map_err(failed)?;
    let origin = HookOrigin {
        file: path.to_path_buf(),
        project,
        format: HookFormat::Claude,
    };
    let place = if project {
        ".claude/settings.json"
    } else {
        "~/.claude/settings.json"
    };
    let mut hooks = Vec::new();
    let mut counts: std::collections::HashMap<String, usize> = Default::default();
    let mut unknown: Vec<String> = Vec::new();
    for ClaudeHook {
        event,
        matcher: pattern,
        command,
        timeout_secs,
    } in found
    {
        let Some(ours) = Event::parse(&event) else {
            if !unknown.contains(&event) {
                unknown.push(event);
            }
            continue;
        };
        let n = counts.entry(event.clone()).or_default();
        *n += 1;
        let short = format!("{event} #{n}");
        let name = format!("{short} ({place})");
        hooks.push(Hook {
            matcher: if ours.is_tool() {
                matcher(pattern.as_deref(), path, &name)?
            } else {
                None
            },
            event: ours,
            timeout: Duration::from_secs(timeout_secs.unwrap_or(CLAUDE_TIMEOUT_SECS).max(1)),
            on_error: OnError::Deny,
            process: project.then(|| process(&short, path, &command)),
            awaiting_trust: false,
            command,
            origin: origin.clone(),
            name,
        });
    }
    if !unknown.is_empty() {
        notices.push(format!(
            "{place}: cairn has no hook point for {}; those hooks do not run",
            unknown.join(", ")
        ));
    }
    Ok(hooks)
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
