//! Project rules are not trusted silently. A repository can ship `.cairn/config.toml` with
//! `allow = ["rm -rf"]`; its rules apply only once the user trusted that exact content. The
//! decision is remembered by content hash (SHA-256 of the file) per workspace, in the
//! `trusted-projects` file of cairn's data directory; any change to the file asks again.
//! The TUI asks (with the project's untrusted hooks beside the rules) and the agent applies
//! the answer (`PendingTrust`); headless runs ignore untrusted rules with a warning unless
//! `--trust-project`.

use crate::bus::ReportEvent;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::bus::{AgentEvent, UntrustedRules};
use crate::content::content_hash;
use crate::permissions::PermissionGate;
use crate::permissions::project_file;
use crate::permissions::rules::{RuleSet, RulesError, project_config};
use crate::trust::{Judged, ProcessTrust};

/// The file in the data directory that remembers trusted project configs.
pub const TRUST_FILE: &str = "trusted-projects";

/// A project's rules as found on disk, with the hash of the file they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRules {
    pub rules: RuleSet,
    /// SHA-256 of the file's bytes, hex.
    pub hash: String,
    pub path: PathBuf,
}

impl ProjectRules {
    /// The rules of `workspace/.cairn/config.toml`; `None` when there is no file or it holds
    /// no rules (nothing to trust).
    pub fn load(workspace: &Path) -> Result<Option<Self>, RulesError> {
        let path = project_config(workspace);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(RulesError::Read { path, source }),
        };
        let text = String::from_utf8_lossy(&bytes);
        let rules = RuleSet::parse_project(&text, &path)?;
        if rules.rules().is_empty() {
            return Ok(None);
        }
        Ok(Some(Self {
            rules,
            hash: content_hash(&bytes),
            path,
        }))
    }

    /// The rules one per line, as the trust prompt and the warning list them.
    pub fn listing(&self) -> Vec<String> {
        self.rules
            .rules()
            .iter()
            .map(|r| format!("{:<5} {}", r.kind.as_str(), r.prefix))
            .collect()
    }
}

/// The remembered trust decisions: one `HASH WORKSPACE` line per trusted project config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store in `data_dir` (cairn's data directory: `$CAIRN_DATA_DIR` or the platform's).
    pub fn in_data_dir(data_dir: &Path) -> Self {
        Self {
            path: data_dir.join(TRUST_FILE),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn entries(&self) -> Vec<(String, String)> {
        std::fs::read_to_string(&self.path)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.split_once(' '))
            .map(|(hash, ws)| (hash.to_string(), ws.to_string()))
            .collect()
    }

    pub fn is_trusted(&self, workspace: &Path, hash: &str) -> bool {
        let ws = workspace.to_string_lossy();
        self.entries()
            .iter()
            .any(|(h, w)| h == hash && w.as_str() == ws)
    }

    /// Remembers `hash` as the trusted content for `workspace` (replacing an older one).
    pub fn trust(&self, workspace: &Path, hash: &str) -> std::io::Result<()> {
        let ws = workspace.to_string_lossy().into_owned();
        let mut lines: Vec<String> = self
            .entries()
            .into_iter()
            .filter(|(_, w)| *w != ws)
            .map(|(h, w)| format!("{h} {w}"))
            .collect();
        lines.push(format!("{hash} {ws}"));
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let temp = self
            .path
            .with_extension(format!("tmp-{}", std::process::id()));
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(format!("{}\n", lines.join("\n")).as_bytes())?;
        drop(file);
        std::fs::rename(&temp, &self.path)
    }

    /// Whether the project's current rules are trusted (true when it has none).
    pub fn current_trusted(&self, workspace: &Path) -> bool {
        match ProjectRules::load(workspace) {
            Ok(Some(project)) => self.is_trusted(workspace, &project.hash),
            Ok(None) => true,
            Err(_) => false,
        }
    }

    /// Adds an allow rule the user chose ("always, in this project") to the project's config
    /// and keeps the file trusted if — and only if — what it held before was (or held no
    /// rules). The hash trusted is that of the bytes written, decided from the bytes read:
    /// rules another process (a background command) puts in the file around the save are never
    /// trusted along with it, and the next start asks about them. Returns the file written.
    pub fn save_rule(&self, workspace: &Path, prefix: &str) -> Result<PathBuf, RulesError> {
        let path = project_config(workspace);
        let before = project_file::read(workspace)?;
        let text = before
            .as_deref()
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned());
        let was_trusted = match (&before, &text) {
            (Some(bytes), Some(text)) => {
                self.is_trusted(workspace, &content_hash(bytes))
                    || RuleSet::parse_project(text, &path).is_ok_and(|r| r.rules().is_empty())
            }
            _ => true,
        };
        let after = project_file::with_allow_rule(text.as_deref(), &path, prefix)?;
        let written = project_file::write(workspace, &after)?;
        if was_trusted && let Err(err) = self.trust(workspace, &content_hash(after.as_bytes())) {
            tracing::warn!("remembering the project config as trusted: {err}");
        }
        Ok(written)
    }
}

/// What a project asks the user to trust at start-up: its rules (when it has untrusted
/// ones) and the processes its files define that are not trusted in their current content
/// (hooks, `trust::ProcessTrust`). The TUI shows them (`shown`) and the agent carries out the
/// user's trust (`accept`, on `UserCommand::TrustProjectRules`). Declined, the rules do not
/// apply and the processes do not run; the next start asks again.
#[derive(Debug, Clone)]
pub struct PendingTrust {
    pub project: Option<ProjectRules>,
    pub workspace: PathBuf,
    pub store: TrustStore,
    /// The project's processes as the user is shown them (what runs: the command and the
    /// scripts it names), each trusted by the content hash it was judged in.
    pub processes: Vec<Judged>,
    pub process_trust: Option<ProcessTrust>,
}

impl PendingTrust {
    /// Whether there is anything to ask about.
    pub fn is_empty(&self) -> bool {
        self.project.is_none() && self.processes.is_empty()
    }

    /// What the trust prompt lists.
    pub fn shown(&self) -> UntrustedRules {
        UntrustedRules {
            path: self
                .project
                .as_ref()
                .map_or_else(|| project_config(&self.workspace), |p| p.path.clone()),
            listing: self
                .project
                .as_ref()
                .map(ProjectRules::listing)
                .unwrap_or_default(),
            processes: self.processes.iter().map(Judged::listing).collect(),
        }
    }

    /// Puts its rules in force in `gate` and remembers the content as trusted, rules and
    /// processes (a hook trusted here runs from its next call on: hooks are judged before
    /// each run); the answer says what happened (the rules apply even when remembering
    /// failed; a process whose trust could not be remembered does not run).
    pub fn accept(&self, gate: &dyn PermissionGate) -> AgentEvent {
        let mut failures = Vec::new();
        if let Some(project) = &self.project {
            gate.add_rules(project.rules.clone());
            if let Err(err) = self.store.trust(&self.workspace, &project.hash) {
                failures.push(err.to_string());
            }
        }
        let mut processes = 0;
        for judged in &self.processes {
            let remembered = match &self.process_trust {
                Some(trust) => trust.trust(judged).map_err(|err| err.to_string()),
                None => Err("no trust store".to_string()),
            };
            match remembered {
                Ok(()) => processes += 1,
                Err(err) => failures.push(format!(
                    "{} {} does not run: {err}",
                    judged.process.kind.as_str(),
                    judged.process.name
                )),
            }
        }
        AgentEvent::Report(ReportEvent::ProjectRulesTrusted {
            path: self.shown().path,
            rules: self.project.as_ref().map_or(0, |p| p.rules.rules().len()),
            processes,
            unremembered: (!failures.is_empty()).then(|| failures.join("; ")),
        })
    }
}

/// The warning for a headless run that leaves untrusted rules out.
pub fn ignored_warning(project: &ProjectRules) -> String {
    format!(
        "ignoring the rules of {} ({}): they are not trusted yet. Run cairn in this directory to review and trust them, or pass --trust-project",
        project.path.display(),
        project.listing().join("; ")
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn trust_is_remembered_by_content_and_workspace() {
        let data = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let store = TrustStore::in_data_dir(data.path());
        let config = ws.path().join(".cairn/config.toml");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::write(&config, "[permissions]\nallow = [\"make\"]\n").unwrap();
        let project = ProjectRules::load(ws.path()).unwrap().unwrap();
        assert_eq!(project.listing(), ["allow make"]);
        assert!(!store.is_trusted(ws.path(), &project.hash));
        assert!(!store.current_trusted(ws.path()));
        store.trust(ws.path(), &project.hash).unwrap();
        assert!(store.current_trusted(ws.path()));
        assert!(
            !store.is_trusted(data.path(), &project.hash),
            "another workspace"
        );
        std::fs::write(&config, "[permissions]\nallow = [\"make\", \"rm -rf\"]\n").unwrap();
        assert!(
            !store.current_trusted(ws.path()),
            "changed content asks again"
        );
        let hash = content_hash(&std::fs::read(&config).unwrap());
        store.trust(ws.path(), &hash).unwrap();
        assert!(store.current_trusted(ws.path()));
        let lines = std::fs::read_to_string(store.path()).unwrap();
        assert_eq!(
            lines.lines().count(),
            1,
            "the old hash is replaced: {lines}"
        );
    }

    #[test]
    fn a_config_without_rules_needs_no_trust() {
        let ws = tempfile::tempdir().unwrap();
        assert_eq!(ProjectRules::load(ws.path()).unwrap(), None);
        let config = ws.path().join(".cairn/config.toml");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::write(&config, "[permissions]\nallow = []\n").unwrap();
        assert_eq!(ProjectRules::load(ws.path()).unwrap(), None);
    }

    #[test]
    fn a_saved_rule_keeps_trust_exact_while_another_process_rewrites_the_file() {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let data = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let ws = ws.path().canonicalize().unwrap();
        let store = TrustStore::in_data_dir(data.path());
        let config = ws.join(".cairn/config.toml");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        let trusted = "[permissions]\nallow = [\"make\"]\n";
        std::fs::write(&config, trusted).unwrap();
        store.trust(&ws, &content_hash(trusted.as_bytes())).unwrap();
        // Saving into a trusted file keeps it trusted: the user wrote it.
        store.save_rule(&ws, "cargo test").unwrap();
        assert!(store.current_trusted(&ws));
        // A background command flips the file between planted rules and the last content it
        // saw that was not its own (trusted, so a save going on meanwhile keeps trust).
        let hostile = "[permissions]\nallow = [\"make\", \"rm -rf\"]\n";
        let (stop, writes) = (AtomicBool::new(false), AtomicUsize::new(0));
        let put = |bytes: &[u8]| {
            let temp = ws.join(".cairn/planted.tmp");
            std::fs::write(&temp, bytes).unwrap();
            std::fs::rename(&temp, &config).unwrap();
        };
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut good = std::fs::read(&config).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    let now = std::fs::read(&config).unwrap_or_default();
                    if now != hostile.as_bytes() {
                        good = now;
                    }
                    put(hostile.as_bytes());
                    put(&good);
                    writes.fetch_add(1, Ordering::Relaxed);
                }
            });
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            let mut saves = 0;
            while (saves < 200 || writes.load(Ordering::Relaxed) < 100)
                && std::time::Instant::now() < deadline
            {
                saves += 1;
                let _ = store.save_rule(&ws, &format!("echo {saves}"));
                let planted = content_hash(hostile.as_bytes());
                assert!(!store.is_trusted(&ws, &planted), "planted rules trusted");
            }
            stop.store(true, Ordering::Relaxed);
        });
        assert!(writes.into_inner() >= 100, "the other writer barely ran");
    }
}
