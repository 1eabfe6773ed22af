//! Trust for the processes a project's files define: hooks, MCP stdio servers, language
//! servers (SPEC §11.3, one rule for all of them). A cloned repository's config can name any
//! program, so such a process runs only once the user trusted it *as it is now*: the trust is
//! remembered by a content hash over the config file that defines it and every workspace file
//! its command names (`scripts`), and any change to either asks again (a branch switch that
//! changes a script included). Headless runs skip untrusted processes with a warning
//! (`skipped_warning`). The user's own processes (their own config) need no trust.
//!
//! How a subsystem uses it: build a `ProjectProcess` for each process a project config
//! defines, `ProcessTrust::judge` it right before starting it (a fresh reading of the files,
//! so an edited script is caught), start it only when `Judged::trusted()`, otherwise list it
//! for the user (`Judged::listing`) and, once they agree, `ProcessTrust::trust` the very
//! `Judged` they were shown. The project's processes then run in the workspace-write sandbox.

pub mod scripts;
mod store;
pub mod written;

use crate::sync::MutexExt as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use store::Store;

/// The file in cairn's data directory that remembers trusted project processes.
pub const TRUST_FILE: &str = "trusted-processes";

/// What kind of project-defined process this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessKind {
    Hook,
    McpServer,
    LanguageServer,
}

impl ProcessKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProcessKind::Hook => "hook",
            ProcessKind::McpServer => "MCP server",
            ProcessKind::LanguageServer => "language server",
        }
    }
}

/// One process a project's config defines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectProcess {
    pub kind: ProcessKind,
    /// Its name, unique within its kind and config (a hook: `pre_tool #2`; a server: its
    /// table's name). With the workspace and the config it is what the trust is kept under.
    pub name: String,
    /// The file that defines it (`.cairn/config.toml`, `.claude/settings.json`, ...).
    pub config: PathBuf,
    /// What runs: a hook's `sh -c` text as one element, or a server's command and arguments.
    /// Every element is also read as shell words, so `bash -c "./x.sh"` names `x.sh`.
    pub command: Vec<String>,
}

/// The content a process is trusted in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// SHA-256 (hex) over the process's identity and command, its config's bytes and the
    /// bytes of every script.
    pub hash: String,
    /// The workspace files its command names, relative to the workspace, sorted.
    pub scripts: Vec<PathBuf>,
}

/// Where a process stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Trusted in exactly this content (or the run trusts the project: `--trust-project`).
    Trusted,
    /// Never trusted in this workspace.
    New,
    /// Trusted before, in other content: its config or a script changed since.
    Changed,
}

/// A process with its fingerprint as the files are now, and where it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judged {
    pub process: ProjectProcess,
    pub fingerprint: Fingerprint,
    pub standing: Standing,
}

impl Judged {
    pub fn trusted(&self) -> bool {
        self.standing == Standing::Trusted
    }

    /// One line for the trust prompt, `cairn hooks list` and the warnings: kind, name, the
    /// command, the scripts it names and why it asks.
    pub fn listing(&self) -> String {
        let p = &self.process;
        let mut line = format!("{} {}: {}", p.kind.as_str(), p.name, p.command.join(" "));
        if !self.fingerprint.scripts.is_empty() {
            let scripts: Vec<String> = self
                .fingerprint
                .scripts
                .iter()
                .map(|s| s.display().to_string())
                .collect();
            line.push_str(&format!(" (runs {})", scripts.join(", ")));
        }
        match self.standing {
            Standing::Trusted => {}
            Standing::New => line.push_str(" [not trusted yet]"),
            Standing::Changed => line.push_str(" [changed since you trusted it]"),
        }
        line
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("reading {path} to check its trust: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("remembering the trust in {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The trust decisions for the project processes of one workspace.
#[derive(Debug, Clone)]
pub struct ProcessTrust {
    store: Store,
    workspace: PathBuf,
    trust_all: bool,
    /// With `trust_all`: each process's fingerprint when this run first judged it (at its
    /// start), shared by the clones. `--trust-project` trusts that content, not what a
    /// script becomes later in the run.
    first_seen: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
}

impl ProcessTrust {
    /// The decisions remembered in `data_dir` (cairn's data directory) for `workspace` (its
    /// canonical path: the same project reached through a link is the same project).
    pub fn new(data_dir: &Path, workspace: &Path) -> Self {
        Self {
            store: Store::new(data_dir.join(TRUST_FILE)),
            workspace: workspace.to_path_buf(),
            trust_all: false,
            first_seen: Default::default(),
        }
    }

    /// `--trust-project`: every process of this run counts as trusted in the content it had
    /// when the run first judged it (at the start); one changed later is `Changed`.
    pub fn trusting_all(mut self, yes: bool) -> Self {
        self.trust_all = yes;
        self
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Reads the config and the scripts as they are now and says whether this content was
    /// trusted. A config that cannot be read is an error (nothing unread runs).
    pub fn judge(&self, process: &ProjectProcess) -> Result<Judged, TrustError> {
        let fingerprint = fingerprint(&self.workspace, process)?;
        let standing = if self.trust_all {
            let mut seen = self.first_seen.locked();
            match seen.get(&self.key(process)) {
                Some(hash) if *hash == fingerprint.hash => Standing::Trusted,
                Some(_) => Standing::Changed,
                None => {
                    seen.insert(self.key(process), fingerprint.hash.clone());
                    Standing::Trusted
                }
            }
        } else {
            match self.store.hash_for(&self.key(process)) {
                Some(hash) if hash == fingerprint.hash => Standing::Trusted,
                Some(_) => Standing::Changed,
                None => Standing::New,
            }
        };
        Ok(Judged {
            process: process.clone(),
            fingerprint,
            standing,
        })
    }

    /// Remembers the content the user was shown (`judged`) as trusted, replacing what was
    /// trusted for that process before. Content that changed after it was shown is not
    /// trusted by this: the next `judge` sees the difference and asks again.
    pub fn trust(&self, judged: &Judged) -> Result<(), TrustError> {
        self.store
            .remember(&self.key(&judged.process), &judged.fingerprint.hash)
            .map_err(|source| TrustError::Write {
                path: self.store.path().to_path_buf(),
                source,
            })
    }

    /// Where the decisions are kept.
    pub fn path(&self) -> &Path {
        self.store.path()
    }

    fn key(&self, process: &ProjectProcess) -> String {
        // One line of JSON: no path or name can break the file's line format.
        serde_json::json!([process.kind, self.workspace, process.config, process.name]).to_string()
    }
}

/// The warning a headless run gives for the untrusted processes it leaves out.
pub fn skipped_warning(untrusted: &[Judged]) -> String {
    let lines: Vec<String> = untrusted.iter().map(Judged::listing).collect();
    format!(
        "not running {} project-defined process(es) that are not trusted in their current content: {}. Run cairn in this directory to review and trust them, or pass --trust-project",
        untrusted.len(),
        lines.join("; ")
    )
}

/// The fingerprint of `process` as the files in `workspace` are now.
pub fn fingerprint(workspace: &Path, process: &ProjectProcess) -> Result<Fingerprint, TrustError> {
    let read_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| TrustError::Read { path, source }
    };
    let config = std::fs::read(&process.config).map_err(read_err(&process.config))?;
    let mut hasher = sha2::Sha256::new();
    field(&mut hasher, b"cairn project process v1");
    field(&mut hasher, process.kind.as_str().as_bytes());
    field(&mut hasher, process.name.as_bytes());
    for element in &process.command {
        field(&mut hasher, element.as_bytes());
    }
    field(&mut hasher, &config);
    let scripts = scripts::named(workspace, &process.command);
    for script in &scripts {
        let path = workspace.join(script);
        field(&mut hasher, script.as_os_str().as_encoded_bytes());
        let file = std::fs::File::open(&path).map_err(read_err(&path))?;
        hash_stream(&mut hasher, file).map_err(read_err(&path))?;
    }
    Ok(Fingerprint {
        hash: format!("{:x}", hasher.finalize()),
        scripts,
    })
}

/// One length-prefixed field: no two different sequences of fields hash alike.
fn field(hasher: &mut sha2::Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

/// Hashes a file in chunks (a named script may be a large binary), with its length last.
fn hash_stream(hasher: &mut sha2::Sha256, mut file: std::fs::File) -> std::io::Result<()> {
    let mut buf = vec![0; 64 * 1024];
    let mut total: u64 = 0;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    hasher.update(total.to_le_bytes());
    Ok(())
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
