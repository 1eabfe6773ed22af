//! The session log: append-only JSONL, one file per session, the single source of truth.
//! The agent appends a record before it publishes the matching event; resume and replay
//! rebuild the conversation, todos and session rules from the records alone.

pub mod images;
mod record;
mod sessions;

pub use record::{LoggedCall, ParentRef, Record, ToldState};
pub use sessions::{
    find_session, find_session_in, latest_in, list_sessions, list_sessions_for, prompt_history,
    usage_by_model,
};

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::bus::SessionId;

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
    #[error(
        "session {id} was recorded in {cwd}, and a session resumes only in its own directory (its system prompt and tools belong there); resume it there: cd {cwd} && cairn --resume {id}"
    )]
    Elsewhere { id: String, cwd: String },
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
            parent: None,
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
                typed: None,
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
                parent: None,
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
