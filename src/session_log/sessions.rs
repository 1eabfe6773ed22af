//! The sessions in the sessions directory: listing them, finding one by id or by the
//! directory it ran in, and the usage recorded in a log.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::bus::{SessionSummary, Usage};

use super::{LogError, Record};

/// Reads only what a listing needs: the header and the first user message.
fn summarize(path: &Path) -> Option<SessionSummary> {
    let file = File::open(path).ok()?;
    let mut summary: Option<SessionSummary> = None;
    for line in BufReader::new(file).lines().take(64) {
        let Ok(line) = line else { break };
        match serde_json::from_str::<Record>(&line) {
            Ok(Record::Meta {
                id,
                cwd,
                started,
                parent,
                ..
            }) => {
                summary = Some(SessionSummary {
                    id,
                    started,
                    cwd,
                    first_prompt: String::new(),
                    parent: parent.map(|p| p.session),
                });
            }
            Ok(Record::User { text, typed, .. }) => {
                // A session is titled by what the user typed, not a command's expansion.
                let text = typed.unwrap_or(text);
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

/// Sessions of `workspace` read for the prompt history, at most (the newest).
const HISTORY_SESSIONS: usize = 30;

/// What the user sent in `workspace`'s earlier sessions, oldest first, at most `max` messages
/// (as typed: a command's words, not its expansion; a message repeated at once kept once).
pub fn prompt_history(dir: &Path, workspace: &Path, max: usize) -> Vec<String> {
    let here = workspace.display().to_string();
    let mut logs: Vec<(std::time::SystemTime, PathBuf)> = list_sessions(dir)
        .into_iter()
        .filter(|s| s.cwd == here)
        .take(HISTORY_SESSIONS)
        .map(|s| dir.join(format!("{}.jsonl", s.id)))
        .map(|path| {
            // Written last, read last: ids started in the same second do not order them.
            let written = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            (written, path)
        })
        .collect();
    logs.sort();
    let mut out: Vec<String> = Vec::new();
    for (_, path) in logs {
        let Ok(file) = File::open(&path) else {
            continue;
        };
        for line in BufReader::new(file).lines() {
            let Ok(line) = line else { break };
            if !line.starts_with("{\"type\":\"user\"") {
                continue;
            }
            if let Ok(Record::User { text, typed, .. }) = serde_json::from_str::<Record>(&line) {
                let text = typed.unwrap_or(text);
                if !text.trim().is_empty() && out.last() != Some(&text) {
                    out.push(text);
                }
            }
        }
    }
    let skip = out.len().saturating_sub(max);
    out.split_off(skip)
}

/// Every session in `dir`, those recorded in `workspace` first (each group newest first).
pub fn list_sessions_for(dir: &Path, workspace: &Path) -> Vec<SessionSummary> {
    let here = workspace.display().to_string();
    // A subagent's session is its parent's business: the picker resumes sessions the user
    // worked in.
    let (mut mine, others): (Vec<_>, Vec<_>) = list_sessions(dir)
        .into_iter()
        .filter(|s| s.parent.is_none())
        .partition(|s| s.cwd == here);
    mine.extend(others);
    mine
}

/// The log file of a session id (or a unique prefix) recorded in `workspace`. A session
/// recorded in another directory is refused with the command that resumes it there: its
/// system prompt names that directory, and its tools would run here.
pub fn find_session_in(dir: &Path, id: &str, workspace: &Path) -> Result<PathBuf, LogError> {
    let path = find_session(dir, id)?;
    let Some(summary) = summarize(&path) else {
        return Err(LogError::NoMeta { path });
    };
    if summary.cwd != workspace.display().to_string() {
        return Err(LogError::Elsewhere {
            id: summary.id.0,
            cwd: summary.cwd,
        });
    }
    Ok(path)
}

/// The newest session started in `cwd`.
pub fn latest_in(dir: &Path, cwd: &Path) -> Result<PathBuf, LogError> {
    let cwd = cwd.display().to_string();
    // Never a subagent's: `--continue` goes on with the conversation the user had.
    list_sessions(dir)
        .into_iter()
        .find(|s| s.cwd == cwd && s.parent.is_none())
        .map(|s| dir.join(format!("{}.jsonl", s.id)))
        .ok_or(LogError::NoneHere)
}
