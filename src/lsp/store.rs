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

/// How long after the change unversioned diagnostics that came within `SETTLE` of it must
/// wait before they count: such early ones are the version before's (typescript-language-
/// server asks tsserver only after 300 ms without a change, so what it publishes sooner is
/// what it was computing before; measured: the opening's errors 2 to 44 ms after the change,
/// the change's own about 360 ms after it, more than `SETTLE` later). A server that answers
/// quickly and once still gets its answer taken, a little later.
pub const EARLY: Duration = Duration::from_secs(1);

/// When a document's content went to the server: the arrival counter just before, and the
/// instant (none: any report after `seq` counts, as soon as it settled).
#[derive(Debug, Clone, Copy)]
pub struct Since {
    pub seq: u64,
    pub at: Option<Instant>,
}

impl Since {
    /// Every report counts (what the `lsp diagnostics` op asks for).
    pub const ANY: Since = Since { seq: 0, at: None };
}

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

    /// The mark of a change sent now.
    pub fn mark(&self) -> Since {
        Since {
            seq: self.seq(),
            at: Some(Instant::now()),
        }
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.arrivals.subscribe()
    }

    /// The newest report of `uri`, whatever its version.
    pub fn latest(&self, uri: &str) -> Option<Report> {
        self.docs.locked().get(uri)?.back().cloned()
    }

    /// Every report kept for `uri`, oldest first (what a test shows of the order of arrival).
    pub fn history(&self, uri: &str) -> Vec<Report> {
        self.docs
            .locked()
            .get(uri)
            .map(|reports| reports.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Every document's newest report.
    pub fn all_latest(&self) -> Vec<(String, Report)> {
        self.docs
            .locked()
            .iter()
            .filter_map(|(uri, reports)| Some((uri.clone(), reports.back()?.clone())))
            .collect()
    }

    /// The diagnostics of `version` of `uri`, changed at `since`: a report that names that
    /// version, or (for a server that names none) the newest report that arrived after the
    /// change once nothing newer came for `SETTLE` (and, when it came within `SETTLE` of the
    /// change, until `EARLY` after the change). A report naming an older version is never
    /// the answer.
    pub fn current_for(&self, uri: &str, version: i32, since: Since) -> Lookup {
        let docs = self.docs.locked();
        let Some(reports) = docs.get(uri) else {
            return Lookup::Nothing;
        };
        if let Some(report) = reports.iter().rev().find(|r| r.version == Some(version)) {
            return Lookup::Current(report.clone());
        }
        match reports.back() {
            Some(report) if report.version.is_none() && report.seq > since.seq => {
                let settled = match since.at {
                    Some(sent) if report.at < sent + SETTLE => sent + EARLY,
                    _ => report.at + SETTLE,
                };
                if Instant::now() >= settled {
                    Lookup::Current(report.clone())
                } else {
                    Lookup::Settling(report.clone(), settled)
                }
            }
            _ => Lookup::Nothing,
        }
    }

    /// What `uri` had before the change to `version` (made at `since`): the report of the
    /// version before, else the newest that arrived before the change.
    pub fn before(&self, uri: &str, version: i32, since: Since) -> Option<Report> {
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
            .find(|r| r.seq <= since.seq && r.version.is_none_or(|v| v < version))
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
        let since = store.mark();
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
        let now = store.mark();
        // The change as if sent a while ago: a report now is not early.
        let since = Since {
            seq: now.seq,
            at: now.at.and_then(|at| at.checked_sub(EARLY)),
        };
        assert!(matches!(store.current_for("f", 2, since), Lookup::Nothing));
        store.add("f", None, vec![diag("after")]);
        let Lookup::Settling(report, settled) = store.current_for("f", 2, since) else {
            panic!("a report after the change settles");
        };
        assert_eq!(settled, report.at + SETTLE);
        assert_eq!(
            store.before("f", 2, since).unwrap().items,
            vec![diag("open")]
        );
    }

    #[test]
    fn an_unversioned_report_right_after_the_change_waits_until_early_passed() {
        let store = DiagStore::default();
        let since = store.mark();
        // Published within SETTLE of the change: likely the version before's.
        store.add("f", None, vec![diag("late from opening")]);
        let Lookup::Settling(_, settled) = store.current_for("f", 2, since) else {
            panic!("it settles");
        };
        assert_eq!(Some(settled), since.at.map(|at| at + EARLY));
        // What comes later replaces it (and settles SETTLE after its own arrival, when that
        // is more than SETTLE after the change).
        store.add("f", None, vec![diag("the change's")]);
        let Lookup::Settling(report, _) = store.current_for("f", 2, since) else {
            panic!("it settles");
        };
        assert_eq!(report.items, vec![diag("the change's")]);
        // Any report counts for `ANY`, once settled.
        assert!(matches!(
            store.current_for("f", 2, Since::ANY),
            Lookup::Settling(..)
        ));
    }
}
