//! What a server said about each document: its diagnostics reports, each with the document
//! version it was for (none when the server did not say: typescript-language-server), in the
//! order they arrived. A waiter watches the arrival counter. Which report is current for a
//! version is decided here (`current_for`), so an older version's diagnostics are never taken
//! for the current ones.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::watch;

use crate::sync::MutexExt;

/// Reports kept per document (the newest; older ones only serve as "before").
const KEPT: usize = 8;

/// How long unversioned diagnostics must stay unchanged before they count as the answer to a
/// change: the late ones from opening a file can come first.
pub const SETTLE: Duration = Duration::from_millis(300);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Info,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Hint => "hint",
        }
    }
}

/// One diagnostic, as cairn keeps it (0-based position, as the protocol has it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    pub line: u32,
    pub character: u32,
    pub severity: Severity,
    pub code: Option<String>,
    pub message: String,
}

impl Diag {
    /// Reads a protocol `Diagnostic` (a missing severity is an error, as editors show it).
    pub fn from_json(value: &Value) -> Option<Diag> {
        let start = value.get("range")?.get("start")?;
        let severity = match value.get("severity").and_then(Value::as_u64) {
            Some(2) => Severity::Warning,
            Some(3) => Severity::Info,
            Some(4) => Severity::Hint,
            _ => Severity::Error,
        };
        let code = match value.get("code") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        Some(Diag {
            line: u32::try_from(start.get("line")?.as_u64()?).ok()?,
            character: u32::try_from(start.get("character")?.as_u64()?).unwrap_or(u32::MAX),
            severity,
            code,
            message: value.get("message")?.as_str()?.to_string(),
        })
    }

    /// What makes two diagnostics the same one across an edit (lines move).
    pub fn key(&self) -> (Severity, Option<String>, String) {
        (self.severity, self.code.clone(), self.message.clone())
    }
}

/// One set of diagnostics for a document.
#[derive(Debug, Clone)]
pub struct Report {
    pub version: Option<i32>,
    pub items: Vec<Diag>,
    /// Its place in the order of arrival (over all documents).
    pub seq: u64,
    pub at: Instant,
}

/// The reports of every document of one server.
#[derive(Debug)]
pub struct DiagStore {
    docs: std::sync::Mutex<HashMap<String, VecDeque<Report>>>,
    arrivals: watch::Sender<u64>,
}

impl Default for DiagStore {
    fn default() -> Self {
        Self {
            docs: Default::default(),
            arrivals: watch::channel(0).0,
        }
    }
}

/// What a waiter finds for a version.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// The diagnostics of that version.
    Current(Report),
    /// Unversioned diagnostics that arrived after the change but may still be replaced; the
    /// instant they count as settled.
    Settling(Report, Instant),
    Nothing,
}

impl DiagStore {
    /// Adds a report for `uri`.
    pub fn add(&self, uri: &str, version: Option<i32>, items: Vec<Diag>) {
        let seq = *self.arrivals.borrow() + 1;
        {
            let mut docs = self.docs.locked();
            let reports = docs.entry(uri.to_string()).or_default();
            reports.push_back(Report {
                version,
                items,
                seq,
                at: Instant::now(),
            });
            while reports.len() > KEPT {
                reports.pop_front();
            }
        }
        self.arrivals.send_replace(seq);
    }

    /// Wakes the waiters without a report (the server changed how it reports).
    pub fn poke(&self) {
        self.arrivals.send_modify(|_| {});
    }

    /// The arrival counter now (a change remembers it: unversioned reports after it count).
    pub fn seq(&self) -> u64 {
        *self.arrivals.borrow()
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.arrivals.subscribe()
    }

    /// The newest report of `uri`, whatever its version.
    pub fn latest(&self, uri: &str) -> Option<Report> {
        self.docs.locked().get(uri)?.back().cloned()
    }

    /// Every document's newest report.
    pub fn all_latest(&self) -> Vec<(String, Report)> {
        self.docs
            .locked()
            .iter()
            .filter_map(|(uri, reports)| Some((uri.clone(), reports.back()?.clone())))
            .collect()
    }

    /// The diagnostics of `version` of `uri`, changed when the arrival counter was `since`: a
    /// report that names that version, or (for a server that names none) the newest report
    /// that arrived after the change once nothing newer came for `SETTLE`. A report naming an
    /// older version is never the answer.
    pub fn current_for(&self, uri: &str, version: i32, since: u64) -> Lookup {
        let docs = self.docs.locked();
        let Some(reports) = docs.get(uri) else {
            return Lookup::Nothing;
        };
        if let Some(report) = reports.iter().rev().find(|r| r.version == Some(version)) {
            return Lookup::Current(report.clone());
        }
        match reports.back() {
            Some(report) if report.version.is_none() && report.seq > since => {
                let settled = report.at + SETTLE;
                if Instant::now() >= settled {
                    Lookup::Current(report.clone())
                } else {
                    Lookup::Settling(report.clone(), settled)
                }
            }
            _ => Lookup::Nothing,
        }
    }

    /// What `uri` had before the change to `version` (made at arrival counter `since`): the
    /// report of the version before, else the newest that arrived before the change.
    pub fn before(&self, uri: &str, version: i32, since: u64) -> Option<Report> {
        let docs = self.docs.locked();
        let reports = docs.get(uri)?;
        if let Some(report) = reports
            .iter()
            .rev()
            .find(|r| r.version == Some(version - 1))
        {
            return Some(report.clone());
        }
        reports
            .iter()
            .rev()
            .find(|r| r.seq <= since && r.version.is_none_or(|v| v < version))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn diag(message: &str) -> Diag {
        Diag {
            line: 0,
            character: 0,
            severity: Severity::Error,
            code: None,
            message: message.into(),
        }
    }

    #[test]
    fn an_older_version_is_never_current_and_serves_as_before() {
        let store = DiagStore::default();
        store.add("f", Some(1), vec![diag("old")]);
        let since = store.seq();
        assert!(matches!(store.current_for("f", 2, since), Lookup::Nothing));
        store.add("f", Some(2), vec![diag("new")]);
        // A late report for version 1 after version 2's.
        store.add("f", Some(1), vec![diag("stale")]);
        let Lookup::Current(report) = store.current_for("f", 2, since) else {
            panic!("version 2 has a report");
        };
        assert_eq!(report.items, vec![diag("new")]);
        assert_eq!(
            store.before("f", 2, since).unwrap().items,
            vec![diag("stale")]
        );
    }

    #[test]
    fn unversioned_reports_count_only_after_the_change_and_once_settled() {
        let store = DiagStore::default();
        store.add("f", None, vec![diag("open")]);
        let since = store.seq();
        assert!(matches!(store.current_for("f", 2, since), Lookup::Nothing));
        store.add("f", None, vec![diag("after")]);
        assert!(matches!(
            store.current_for("f", 2, since),
            Lookup::Settling(..)
        ));
        assert_eq!(
            store.before("f", 2, since).unwrap().items,
            vec![diag("open")]
        );
    }
}
