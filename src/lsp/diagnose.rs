//! One write's diagnostics: send the new content as the next version, wait for that
//! version's diagnostics (pulled, versioned, or unversioned and settled; never an older
//! version's), and tell what the edit introduced: new against the file's diagnostics before
//! it (matched by severity, code and message, since lines move), at most `LISTED`, with a
//! count of those that were there before and of the new errors in other open files.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::store::{Diag, Lookup, Severity, Since};
use super::{LATE_LIMIT, Lsp, ServerSpec, file_uri, servers};

/// Diagnostics listed in one result at most.
pub const LISTED: usize = 20;
/// Characters of one diagnostic's message kept.
const MESSAGE_CHARS: usize = 300;

/// What one write's diagnostics came to.
#[derive(Debug, Clone)]
pub enum DiagOutcome {
    Report {
        server: String,
        display: String,
        version: i32,
        /// Every diagnostic of the new version, and those of the version before (none: the
        /// file had no report before, so everything is new).
        now: Vec<Diag>,
        before: Option<Vec<Diag>>,
        /// New diagnostics in other open files, by severity.
        others: Vec<Diag>,
        other_files: usize,
    },
    /// A newer write of the file came first: its own result tells.
    Superseded,
    /// No diagnostics: why (the server failed, crashed, never answered).
    Unavailable(String),
}

pub(super) struct DiagnoseJob {
    pub lsp: Lsp,
    pub spec: Arc<ServerSpec>,
    pub path: PathBuf,
    pub display: String,
    pub before: Option<String>,
    pub after: String,
    pub edit: u64,
}

impl DiagnoseJob {
    pub async fn run(self) -> DiagOutcome {
        let started = Instant::now();
        let inner = &self.lsp.inner;
        let crashes = inner.crashes(&self.spec.name);
        let server = match self
            .lsp
            .server(&self.spec, &self.path, started + LATE_LIMIT)
            .await
        {
            Ok(server) => server,
            Err(why) => return DiagOutcome::Unavailable(why),
        };
        if inner.latest_edit(&self.path) != self.edit {
            return DiagOutcome::Superseded;
        }
        let uri = file_uri(&self.path);
        let language = servers::language_id(&self.path);
        let store = &server.shared.store;
        // A file the server does not have yet is opened as it was, so that what was there
        // before the edit is known and not reported as new.
        if server.version(&uri).await.is_none()
            && let Some(before) = &self.before
            && *before != self.after
        {
            let (version, since, _) = server.sync(&uri, &language, before).await;
            let budget = inner.settings.wait / 2;
            wait_for(&server, &uri, version, since, Instant::now() + budget).await;
        }
        let others_before = other_errors(&server, &uri);
        let (version, since, _) = server.sync(&uri, &language, &self.after).await;
        let mut arrivals = store.subscribe();
        let deadline = started + LATE_LIMIT;
        let mut pulled = false;
        let now = loop {
            // A server may register pull diagnostics only after the document went out.
            if !pulled && server.pulls() {
                pulled = true;
                pull_in_background(&server, &uri, version, LATE_LIMIT);
            }
            if inner.latest_edit(&self.path) != self.edit {
                return DiagOutcome::Superseded;
            }
            let now_crashes = inner.crashes(&self.spec.name);
            if now_crashes != crashes {
                let name = &self.spec.name;
                return DiagOutcome::Unavailable(if now_crashes > super::MAX_RESTARTS {
                    format!("{name} crashed {now_crashes} times and is left off for this session")
                } else {
                    format!(
                        "{name} exited before it reported; restarted ({now_crashes} of {} restarts used)",
                        super::MAX_RESTARTS
                    )
                });
            }
            let wake = match store.current_for(&uri, version, since) {
                Lookup::Current(report) => break report,
                Lookup::Settling(_, at) => at.min(deadline),
                Lookup::Nothing => deadline,
            };
            if Instant::now() >= deadline {
                return DiagOutcome::Unavailable(format!(
                    "{} sent none within {}s",
                    self.spec.name,
                    LATE_LIMIT.as_secs()
                ));
            }
            // A crash is seen through the slot, so wake now and then to look.
            let wake = wake.min(Instant::now() + std::time::Duration::from_millis(250));
            let _ = tokio::time::timeout_at(wake.into(), arrivals.changed()).await;
        };
        let before = store.before(&uri, version, since).map(|r| r.items);
        let (others, other_files) = new_in_others(others_before, other_errors(&server, &uri));
        DiagOutcome::Report {
            server: self.spec.name.clone(),
            display: self.display,
            version,
            now: now.items,
            before,
            others,
            other_files,
        }
    }
}

impl DiagOutcome {
    /// The text appended to the write's result (starting with a blank line); none when there
    /// is nothing to say.
    pub fn block(&self, warnings: bool) -> Option<String> {
        let counts = |d: &Diag| {
            d.severity == Severity::Error || (warnings && d.severity == Severity::Warning)
        };
        match self {
            DiagOutcome::Superseded => None,
            DiagOutcome::Unavailable(why) => Some(format!("\n\n[diagnostics unavailable: {why}]")),
            DiagOutcome::Report {
                server,
                display,
                version,
                now,
                before,
                others,
                other_files,
            } => {
                let now: Vec<&Diag> = now.iter().filter(|d| counts(d)).collect();
                let mut left: HashMap<_, usize> = HashMap::new();
                for d in before.iter().flatten().filter(|d| counts(d)) {
                    *left.entry(d.key()).or_default() += 1;
                }
                let mut new = Vec::new();
                let mut old = 0;
                for d in &now {
                    match left.get_mut(&d.key()) {
                        Some(n) if *n > 0 => {
                            *n -= 1;
                            old += 1;
                        }
                        _ => new.push(*d),
                    }
                }
                let kind = if warnings {
                    "errors or warnings"
                } else {
                    "errors"
                };
                let mut text = if new.is_empty() {
                    format!("\n\n[{server}, version {version}: no new {kind}")
                } else {
                    format!(
                        "\n\n[{server}, version {version}: {} new {}]",
                        new.len(),
                        if new.len() == 1 {
                            if warnings {
                                "error or warning"
                            } else {
                                "error"
                            }
                        } else {
                            kind
                        }
                    )
                };
                for d in new.iter().take(LISTED) {
                    text.push('\n');
                    text.push_str(&line(display, d));
                }
                if new.len() > LISTED {
                    text.push_str(&format!("\n… and {} more", new.len() - LISTED));
                }
                let mut tail = Vec::new();
                if old > 0 {
                    tail.push(format!(
                        "{old} {} there before the edit",
                        if old == 1 { "was" } else { "were" }
                    ));
                }
                let others: Vec<&Diag> = others.iter().filter(|d| counts(d)).collect();
                if !others.is_empty() {
                    tail.push(format!(
                        "{} new in {other_files} other open {} (lsp diagnostics lists them)",
                        others.len(),
                        if *other_files == 1 { "file" } else { "files" }
                    ));
                }
                if new.is_empty() {
                    if !tail.is_empty() {
                        text.push_str(&format!("; {}", tail.join("; ")));
                    }
                    text.push(']');
                } else if !tail.is_empty() {
                    text.push_str(&format!("\n({})", tail.join("; ")));
                }
                Some(text)
            }
        }
    }
}

/// `path:line:col severity code message`, 1-based.
pub fn line(display: &str, d: &Diag) -> String {
    let mut message: String = d.message.lines().next().unwrap_or("").to_string();
    if message.chars().count() > MESSAGE_CHARS {
        message = message.chars().take(MESSAGE_CHARS).collect::<String>() + "…";
    }
    let code = d
        .code
        .as_deref()
        .map(|c| format!(" {c}"))
        .unwrap_or_default();
    format!(
        "{display}:{}:{} {}{code} {message}",
        d.line + 1,
        d.character.saturating_add(1),
        d.severity.as_str()
    )
}

/// Waits (at most until `deadline`) for `version`'s diagnostics of `uri`.
async fn wait_for(
    server: &std::sync::Arc<super::LanguageServer>,
    uri: &str,
    version: i32,
    since: Since,
    deadline: Instant,
) {
    let store = &server.shared.store;
    let mut arrivals = store.subscribe();
    let mut pulled = false;
    loop {
        if !pulled && server.pulls() {
            pulled = true;
            pull_in_background(
                server,
                uri,
                version,
                deadline.saturating_duration_since(Instant::now()),
            );
        }
        let wake = match store.current_for(uri, version, since) {
            Lookup::Current(_) => return,
            Lookup::Settling(_, at) => at.min(deadline),
            Lookup::Nothing => deadline,
        };
        if Instant::now() >= deadline {
            return;
        }
        let _ = tokio::time::timeout_at(wake.into(), arrivals.changed()).await;
    }
}

/// Pulls `uri`'s diagnostics for `version` into the store, on its own task.
fn pull_in_background(
    server: &std::sync::Arc<super::LanguageServer>,
    uri: &str,
    version: i32,
    limit: std::time::Duration,
) {
    let server = server.clone();
    let uri = uri.to_string();
    tokio::spawn(async move {
        let _ = server.pull(&uri, version, limit).await;
    });
}

/// The newest diagnostics of every other document of the server.
fn other_errors(server: &super::LanguageServer, uri: &str) -> HashMap<String, Vec<Diag>> {
    server
        .shared
        .store
        .all_latest()
        .into_iter()
        .filter(|(other, _)| other != uri)
        .map(|(other, report)| (other, report.items))
        .collect()
}

/// What is new in other files between two snapshots, and in how many files.
fn new_in_others(
    before: HashMap<String, Vec<Diag>>,
    after: HashMap<String, Vec<Diag>>,
) -> (Vec<Diag>, usize) {
    let mut new = Vec::new();
    let mut files = 0;
    for (uri, items) in after {
        let mut left: HashMap<_, usize> = HashMap::new();
        for d in before.get(&uri).into_iter().flatten() {
            *left.entry(d.key()).or_default() += 1;
        }
        let mut any = false;
        for d in items {
            match left.get_mut(&d.key()) {
                Some(n) if *n > 0 => *n -= 1,
                _ => {
                    any = true;
                    new.push(d);
                }
            }
        }
        files += usize::from(any);
    }
    (new, files)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn d(line: u32, severity: Severity, message: &str) -> Diag {
        Diag {
            line,
            character: 4,
            severity,
            code: Some("E1".into()),
            message: message.into(),
        }
    }

    fn report(now: Vec<Diag>, before: Option<Vec<Diag>>) -> DiagOutcome {
        DiagOutcome::Report {
            server: "mock".into(),
            display: "src/a.rs".into(),
            version: 3,
            now,
            before,
            others: vec![d(0, Severity::Error, "x")],
            other_files: 1,
        }
    }

    #[test]
    fn only_what_the_edit_introduced_is_listed_and_the_rest_counted() {
        let before = vec![d(1, Severity::Error, "old")];
        let now = vec![
            d(2, Severity::Error, "old"),
            d(5, Severity::Error, "new one"),
            d(6, Severity::Warning, "a warning"),
        ];
        let text = report(now.clone(), Some(before.clone()))
            .block(false)
            .unwrap();
        assert_eq!(
            text,
            "\n\n[mock, version 3: 1 new error]\nsrc/a.rs:6:5 error E1 new one\n(1 was there before the edit; 1 new in 1 other open file (lsp diagnostics lists them))"
        );
        let text = report(now, Some(before)).block(true).unwrap();
        assert!(text.contains("2 new errors or warnings"), "{text}");
        let text = report(
            vec![d(1, Severity::Error, "old")],
            Some(vec![d(0, Severity::Error, "old")]),
        )
        .block(false)
        .unwrap();
        assert!(
            text.starts_with("\n\n[mock, version 3: no new errors; 1 was there before"),
            "{text}"
        );
    }

    #[test]
    fn at_most_twenty_are_listed() {
        let now: Vec<Diag> = (0..25)
            .map(|i| d(i, Severity::Error, &format!("e{i}")))
            .collect();
        let text = report(now, None).block(false).unwrap();
        assert_eq!(
            text.lines().filter(|l| l.starts_with("src/a.rs:")).count(),
            20
        );
        assert!(text.contains("… and 5 more"), "{text}");
    }
}
