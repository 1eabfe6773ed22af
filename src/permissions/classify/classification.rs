//! What the classifier concludes about a command line: its `Class`, the parts it was split
//! into and the one `Classification` the most concerning part decides.

use serde::{Deserialize, Serialize};

/// How much a command can do, in increasing order of concern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Only reads: runs without asking in every mode but `ask`.
    ReadOnly,
    /// May change files or state: asks in `auto-edit`, runs in `auto`.
    Mutating,
    /// Could do serious harm: asks in every mode but `never`.
    Dangerous,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::ReadOnly => "read-only",
            Class::Mutating => "mutating",
            Class::Dangerous => "dangerous",
        }
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict on a whole command line, with a reason a person can read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classification {
    pub class: Class,
    pub reason: String,
    /// Why the command writes a protected path (`.git/config`, `.git/hooks/`, `.cairn/`, shell
    /// start-up files, `~/.ssh/`): such a command asks in every mode but `never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protected: Option<String>,
}

/// One simple command found in a command line, after unwrapping quoting, wrappers
/// (`timeout`, `env`, `xargs`, ...) and `bash -c` strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPart {
    /// Normalized words: unquoted, the program's absolute path reduced to its name. Empty for
    /// findings that belong to no single command (parse errors, a download piped into a shell);
    /// no rule can match those.
    pub words: Vec<String>,
    pub class: Class,
    pub reason: String,
    /// It writes a protected path; `reason` says which when it is the worst finding.
    pub protected: Option<String>,
    /// Its redirections write somewhere: no allow rule covers it (a rule names a command,
    /// not the files its output goes to).
    pub redirected: bool,
    /// What runs is only known at run time (`$CMD`, `eval "$x"`, `bash -c "$s"`): no rule
    /// can tell, so a deny rule in force holds it.
    pub opaque: bool,
}

/// Every simple command of a command line with its own class.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Analysis {
    pub parts: Vec<CommandPart>,
}

impl Analysis {
    /// The most concerning part decides; read-only lines name what they read.
    pub fn classification(&self) -> Classification {
        let protected = self.parts.iter().find_map(|p| p.protected.clone());
        Classification {
            protected,
            ..self.worst()
        }
    }

    fn worst(&self) -> Classification {
        let Some(worst) = self.parts.iter().max_by_key(|p| p.class) else {
            return Classification {
                class: Class::ReadOnly,
                reason: "does nothing".into(),
                protected: None,
            };
        };
        // `max_by_key` returns the last of equals; the first one found reads better.
        let first = self
            .parts
            .iter()
            .find(|p| p.class == worst.class)
            .unwrap_or(worst);
        if first.class != Class::ReadOnly {
            return Classification {
                class: first.class,
                reason: first.reason.clone(),
                protected: None,
            };
        }
        if let [only] = self.parts.as_slice() {
            return Classification {
                class: Class::ReadOnly,
                reason: only.reason.clone(),
                protected: None,
            };
        }
        let mut names: Vec<&str> = Vec::new();
        for part in &self.parts {
            let name = part
                .reason
                .strip_prefix("only reads (")
                .and_then(|r| r.strip_suffix(')'))
                .or(part.words.first().map(String::as_str));
            if let Some(name) = name.filter(|n| !names.contains(n)) {
                names.push(name);
            }
        }
        let reason = if names.is_empty() {
            "only reads".to_string()
        } else {
            format!("only reads ({})", names.join(", "))
        };
        Classification {
            class: Class::ReadOnly,
            reason,
            protected: None,
        }
    }
}
