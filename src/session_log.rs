//! The session log: append-only JSONL, one file per session, the single source of truth.
//! The agent appends a record before it publishes the matching event; resume and replay
//! rebuild the conversation, todos and session rules from the records alone.

pub mod images;

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bus::Mode;
use crate::bus::{
    CallId, Decision, EndReason, RevertTarget, SessionId, SessionSummary, ToolResult, Usage,
};
use crate::content::{Part, ReasoningPart};

/// A tool call as the model made it, arguments as raw JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedCall {
    pub id: CallId,
    pub name: String,
    pub arguments: String,
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    Meta {
        id: SessionId,
        cwd: String,
        provider: String,
        model: String,
        version: String,
        started: String,
    },
    User {
        text: String,
        /// When it was sent (RFC 3339, UTC); logs written before it was recorded have none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        time: Option<String>,
        /// What follows the typed text: attached files (`@path`) as text parts, images named
        /// by hash (their bytes are in the session's image store). Old logs have none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<Part>,
    },
    /// Written before any of its tool calls runs, so a crash leaves a record of what ran.
    Assistant {
        text: String,
        /// The reasoning part: its text and what the provider sent with it to be sent back
        /// (`thinking_blocks` / `reasoning_details` and the like), kept so a resumed session
        /// sends them back. Written as the same top-level fields logs always had.
        #[serde(flatten)]
        reasoning: ReasoningPart,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<LoggedCall>,
    },
    ToolResult {
        call: CallId,
        name: String,
        result: ToolResult,
    },
    Approval {
        call: CallId,
        decision: Decision,
    },
    /// "Approve this prefix for the session".
    SessionRule {
        prefix: String,
    },
    Usage(Usage),
    Mode {
        mode: Mode,
    },
    Model {
        model: String,
    },
    /// How a user request ended, when it did not simply complete.
    Ended {
        reason: EndReason,
    },
    /// The system prompt of the session, written before its first request. It never changes
    /// within a session (so the provider's prefix cache keeps hitting); a resume sends it
    /// again byte for byte. `told` is the changing state the prompt describes.
    System {
        prompt: String,
        told: ToldState,
    },
    /// State that changed since the model was last told (mode, git branch), told as a short
    /// user-role note at the end of the conversation instead of an edit of the system prompt.
    Note {
        text: String,
        told: ToldState,
        /// Parts after the text: the images `read_image` read in a step.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<Part>,
    },
    /// The workspace was recorded in the checkpoint store: before or after a batch of calls
    /// that may change it, or a turn was undone back to `commit`.
    Checkpoint {
        commit: crate::checkpoint::CheckpointId,
        kind: crate::checkpoint::CheckpointKind,
    },
    /// An `/undo`, `/redo` or `/rewind` was done: what it did (after its `Checkpoint` and
    /// `Fork` records), so a resume and `cairn replay` show the line the user saw.
    Restored {
        what: crate::bus::Restore,
        done: crate::bus::RestorePlan,
    },
    /// `/rewind` forked the conversation: from here on it is what it was just before the user
    /// message `at` (its ordinal among all user records of the log, 0 first). The records of
    /// the branch left stay in the log (`cairn replay` shows them); a resume continues here.
    Fork {
        at: usize,
    },
    /// The user reverted a change from the diff pane. `changes` are the revert's own diffs
    /// (the diff pane shows them, and they can be reverted in turn); `before` and `after` are
    /// checkpoints around it (when checkpoints are on), where whole contents are found again.
    Revert {
        id: String,
        target: RevertTarget,
        what: String,
        changes: Vec<crate::tool_output::FileChange>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        before: Option<crate::checkpoint::CheckpointId>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<crate::checkpoint::CheckpointId>,
    },
    /// The provider refused an image (too large, a format it does not take, a model without
    /// vision): from here on every message holding the image with `hash` holds `note` in its
    /// place, so neither the retry nor any resume sends it again.
    ImageRemoved {
        hash: String,
        note: String,
    },
    /// A skill was loaded (the model's `skill` call, or the user's `/name`): what the model was
    /// given, so a compaction can attach it again and a resume knows it (its directory stays
    /// readable for the session).
    SkillLoaded {
        name: String,
        dir: String,
        text: String,
    },
    /// The user's own command (`!cmd`, `!!cmd`) and how it ended. `told` is what the
    /// conversation got of it (`!cmd` only): a user-role message, sent again on resume.
    Shell {
        id: String,
        command: String,
        context: bool,
        result: ToolResult,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        told: Option<String>,
    },
    /// A queued message entered the conversation (the user record before this one) after
    /// model step `step` of the session.
    Delivered {
        id: String,
        step: u64,
    },
    /// A queued message or command was taken back before delivery; `text` is what it said.
    Withdrawn {
        id: String,
        text: String,
    },
    /// A queued message the request ended without: it went back to the user undelivered.
    Returned {
        id: String,
        text: String,
    },
    /// The conversation was compacted: the tool results at the `stubs` indices were replaced
    /// by the stub text, then messages `..summarized` by one user message, `summary`. Kept as
    /// a change, not the result, so a long session's log grows by the stubs only. `usage` is
    /// what the summary request cost.
    Compacted {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        stubs: Vec<(usize, String)>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        #[serde(default)]
        summarized: usize,
        before: u64,
        after: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
}

impl Record {
    /// A user message sent now.
    pub fn user(text: impl Into<String>) -> Self {
        Self::user_with(text, Vec::new())
    }

    /// A user message sent now, with attached parts after its text.
    pub fn user_with(text: impl Into<String>, parts: Vec<Part>) -> Self {
        Record::User {
            text: text.into(),
            time: Some(humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()),
            parts,
        }
    }
}

/// The changing facts the model was last told about.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToldState {
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("session log {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no session `{0}` (see `cairn sessions`)")]
    NotFound(String),
    #[error("no earlier session in this directory")]
    NoneHere,
    #[error("session log {path} has no session header; it is not a cairn log")]
    NoMeta { path: PathBuf },
}

/// A new session id: sortable by start time, unique enough for one user's machine.
pub fn new_session_id() -> SessionId {
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let stamp: String = now.chars().filter(|c| c.is_ascii_digit()).collect();
    let (date, time) = stamp.split_at(8.min(stamp.len()));
    SessionId(format!("{date}-{time}-{:04x}", fastrand::u16(..)))
}

/// Appends records, one `write` per line, so a crash loses at most the line being written.
pub struct SessionLog {
    path: PathBuf,
    file: File,
}

impl SessionLog {
    pub fn create(dir: &Path, id: &SessionId) -> Result<Self, LogError> {
        let path = dir.join(format!("{id}.jsonl"));
        let io_err = |source| LogError::Io {
            path: path.clone(),
            source,
        };
        // Logs hold command output and file contents: private to the user.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io_err)?;
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .mode(0o600)
            .open(&path)
            .map_err(io_err)?;
        Ok(Self { path, file })
    }

    /// Opens a log for appending. A last line cut short by a crash is closed with a newline
    /// first, so the next record starts on a line of its own instead of merging with it.
    pub fn open_append(path: PathBuf) -> Result<Self, LogError> {
        let io_err = |source| LogError::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(io_err)?;
        if ends_without_newline(&mut file).map_err(io_err)? {
            file.write_all(b"\n").map_err(io_err)?;
        }
        Ok(Self { path, file })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn append(&mut self, record: &Record) -> Result<(), LogError> {
        let mut line = serde_json::to_vec(record).map_err(|err| LogError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(err),
        })?;
        line.push(b'\n');
        self.file.write_all(&line).map_err(|source| LogError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

fn ends_without_newline(file: &mut File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    if file.metadata()?.len() == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// A log read back: its records, and warnings about lines that had to be skipped.
#[derive(Debug, Default)]
pub struct LoadedLog {
    pub records: Vec<Record>,
    pub warnings: Vec<String>,
}

/// Reads a log. A line that does not parse (a crash mid-write, a hand edit) is skipped with a
/// warning naming its line number; the rest of the session is kept.
pub fn read_log(path: &Path) -> Result<LoadedLog, LogError> {
    let file = File::open(path).map_err(|source| LogError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut loaded = LoadedLog::default();
    let mut line = Vec::new();
    let mut number = 0usize;
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|source| LogError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if read == 0 {
            break;
        }
        number += 1;
        let complete = line.last() == Some(&b'\n');
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        if body.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Record>(body) {
            Ok(record) => loaded.records.push(record),
            Err(err) if !complete => loaded.warnings.push(format!(
                "{}: skipped the truncated last line {number} ({err})",
                path.display()
            )),
            Err(err) => loaded.warnings.push(format!(
                "{}: skipped unreadable line {number} ({err})",
                path.display()
            )),
        }
    }
    if !matches!(loaded.records.first(), Some(Record::Meta { .. })) {
        return Err(LogError::NoMeta {
            path: path.to_path_buf(),
        });
    }
    Ok(loaded)
}

/// Reads only what a listing needs: the header and the first user message.
fn summarize(path: &Path) -> Option<SessionSummary> {
    let file = File::open(path).ok()?;
    let mut summary: Option<SessionSummary> = None;
    for line in BufReader::new(file).lines().take(64) {
        let Ok(line) = line else { break };
        match serde_json::from_str::<Record>(&line) {
            Ok(Record::Meta {
                id, cwd, started, ..
            }) => {
                summary = Some(SessionSummary {
                    id,
                    started,
                    cwd,
                    first_prompt: String::new(),
                });
            }
            Ok(Record::User { text, .. }) => {
                if let Some(s) = summary.as_mut() {
                    s.first_prompt = text
                        .lines()
                        .next()
                        .unwrap_or("")
                        .chars()
                        .take(120)
                        .collect();
                }
                break;
            }
            _ => {}
        }
    }
    summary
}

/// Usage of every model request in a log, each with the model that served it. Only the
/// lines that matter are parsed whole; a compaction's conversation is skipped over.
pub fn usage_by_model(path: &Path) -> Vec<(String, Usage)> {
    #[derive(Deserialize)]
    struct Line {
        #[serde(rename = "type")]
        kind: String,
        #[serde(default)]
        model: Option<String>,
        #[serde(default)]
        usage: Option<Usage>,
        #[serde(default)]
        prompt_tokens: Option<u64>,
        #[serde(default)]
        completion_tokens: Option<u64>,
        #[serde(default)]
        cached_tokens: Option<u64>,
    }
    let Ok(file) = File::open(path) else {
        return Vec::new();
    };
    let mut model = String::new();
    let mut out = Vec::new();
    for line in BufReader::new(file).lines() {
        let Ok(line) = line else { break };
        let wanted = ["meta", "model", "usage", "compacted"]
            .iter()
            .any(|kind| line.starts_with(&format!("{{\"type\":\"{kind}\"")));
        if !wanted {
            continue;
        }
        let Ok(parsed) = serde_json::from_str::<Line>(&line) else {
            continue;
        };
        match parsed.kind.as_str() {
            "meta" | "model" => model = parsed.model.unwrap_or_default(),
            "usage" => out.push((
                model.clone(),
                Usage {
                    prompt_tokens: parsed.prompt_tokens.unwrap_or(0),
                    completion_tokens: parsed.completion_tokens.unwrap_or(0),
                    cached_tokens: parsed.cached_tokens.unwrap_or(0),
                },
            )),
            "compacted" => out.extend(parsed.usage.map(|u| (model.clone(), u))),
            _ => {}
        }
    }
    out
}

/// Every session in `dir`, newest first.
pub fn list_sessions(dir: &Path) -> Vec<SessionSummary> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    // Ids start with the start time, so the name order is the time order.
    paths.sort();
    paths.reverse();
    // A session nobody typed into is not worth listing (or continuing).
    paths
        .iter()
        .filter_map(|p| summarize(p))
        .filter(|s| !s.first_prompt.is_empty())
        .collect()
}

/// The log file of a session id (or a unique prefix of one).
pub fn find_session(dir: &Path, id: &str) -> Result<PathBuf, LogError> {
    let exact = dir.join(format!("{id}.jsonl"));
    if exact.is_file() {
        return Ok(exact);
    }
    let matches: Vec<SessionSummary> = list_sessions(dir)
        .into_iter()
        .filter(|s| s.id.0.starts_with(id))
        .collect();
    match matches.as_slice() {
        [one] => Ok(dir.join(format!("{}.jsonl", one.id))),
        _ => Err(LogError::NotFound(id.to_string())),
    }
}

/// The newest session started in `cwd`.
pub fn latest_in(dir: &Path, cwd: &Path) -> Result<PathBuf, LogError> {
    let cwd = cwd.display().to_string();
    list_sessions(dir)
        .into_iter()
        .find(|s| s.cwd == cwd)
        .map(|s| dir.join(format!("{}.jsonl", s.id)))
        .ok_or(LogError::NoneHere)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn meta() -> Record {
        Record::Meta {
            id: SessionId("20260101-000000-0000".into()),
            cwd: "/w".into(),
            provider: "p".into(),
            model: "m".into(),
            version: "0".into(),
            started: "2026-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn truncated_last_line_is_skipped_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let id = SessionId("s".into());
        let mut log = SessionLog::create(dir.path(), &id).unwrap();
        log.append(&meta()).unwrap();
        log.append(&Record::user("hi")).unwrap();
        let path = log.path().to_path_buf();
        drop(log);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"type\":\"user\",\"te").unwrap();
        let loaded = read_log(&path).unwrap();
        assert_eq!(loaded.records.len(), 2);
        assert_eq!(loaded.warnings.len(), 1);
        assert!(loaded.warnings[0].contains("truncated last line 3"));
        // Appending after the crash starts a fresh line: the new record is not lost.
        let mut log = SessionLog::open_append(path.clone()).unwrap();
        log.append(&Record::user("again")).unwrap();
        let loaded = read_log(&path).unwrap();
        assert_eq!(loaded.records.len(), 3);
        assert!(
            matches!(&loaded.records[2], Record::User { text, time: Some(_), .. } if text == "again"),
            "{:?}",
            loaded.records[2]
        );
    }

    #[test]
    fn a_user_record_carries_its_time_and_old_ones_without_it_still_read() {
        let old: Record = serde_json::from_str(r#"{"type":"user","text":"hi"}"#).unwrap();
        assert_eq!(
            old,
            Record::User {
                text: "hi".into(),
                time: None,
                parts: Vec::new(),
            }
        );
        assert_eq!(
            serde_json::to_string(&old).unwrap(),
            r#"{"type":"user","text":"hi"}"#
        );
        let Record::User {
            time: Some(time), ..
        } = Record::user("hi")
        else {
            panic!("no time")
        };
        assert!(humantime::parse_rfc3339(&time).is_ok(), "{time}");
    }

    #[test]
    fn a_file_without_header_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        std::fs::write(&path, "garbage\n").unwrap();
        assert!(matches!(read_log(&path), Err(LogError::NoMeta { .. })));
    }

    #[test]
    fn sessions_are_listed_newest_first_with_their_first_prompt() {
        let dir = tempfile::tempdir().unwrap();
        for (id, prompt) in [
            ("20260101-000000-aaaa", "old"),
            ("20260102-000000-bbbb", "new"),
        ] {
            let mut log = SessionLog::create(dir.path(), &SessionId(id.into())).unwrap();
            let Record::Meta {
                cwd,
                provider,
                model,
                version,
                started,
                ..
            } = meta()
            else {
                unreachable!()
            };
            log.append(&Record::Meta {
                id: SessionId(id.into()),
                cwd,
                provider,
                model,
                version,
                started,
            })
            .unwrap();
            log.append(&Record::user(prompt)).unwrap();
        }
        let list = list_sessions(dir.path());
        assert_eq!(
            list.iter()
                .map(|s| s.first_prompt.as_str())
                .collect::<Vec<_>>(),
            ["new", "old"]
        );
        assert!(find_session(dir.path(), "20260101").is_ok());
        assert!(
            latest_in(dir.path(), Path::new("/w"))
                .unwrap()
                .ends_with("20260102-000000-bbbb.jsonl")
        );
    }
}
