//! Allow / ask / deny rules by command prefix, from the user config, the project's
//! `.cairn/config.toml` and "approve this prefix for the session". Rules match the normalized
//! words of each simple command (so quoting cannot dodge them); deny wins over ask over allow.
//! The policy gate feeds them the classifier's `Analysis`.

use std::path::{Path, PathBuf};

use crate::permissions::classify::{Analysis, Class, CommandPart, command_words};
use crate::permissions::prefixes::without_git_globals;

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleKind {
    Allow,
    Ask,
    Deny,
}

impl RuleKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::Ask => "ask",
            RuleKind::Deny => "deny",
        }
    }
}

/// Where a rule came from, so `policy check` can say which file to edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleSource {
    /// The user's config file (or `--config`).
    Config,
    /// The project's `.cairn/config.toml`.
    Project,
    /// Approved from the prompt for this session.
    Session,
    /// `allowed-tools` of the skill active in this user turn (the user's own or a trusted
    /// project skill). Never covers a protected write; gone when the turn ends.
    Skill,
}

impl RuleSource {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleSource::Config => "config",
            RuleSource::Project => "project .cairn/config.toml",
            RuleSource::Session => "this session",
            RuleSource::Skill => "the active skill's allowed-tools",
        }
    }
}

/// One prefix rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub kind: RuleKind,
    /// The prefix as the user wrote it.
    pub prefix: String,
    pub source: RuleSource,
    /// The prefix's normalized words.
    words: Vec<String>,
}

impl Rule {
    pub fn new(kind: RuleKind, prefix: &str, source: RuleSource) -> Self {
        // `sudo rm x` is judged as `rm x` and `sudo rm x`: the rule means the whole of it.
        let words = command_words(prefix)
            .into_iter()
            .max_by_key(Vec::len)
            .unwrap_or_else(|| prefix.split_whitespace().map(str::to_string).collect());
        Self {
            kind,
            prefix: prefix.trim().to_string(),
            source,
            words,
        }
    }

    /// Whether the rule's words start `words`, whole word by whole word. A rule word ending
    /// in `/` matches any path under that directory, but not one that climbs out of it again
    /// (`target/../..`). With `exact`, the rule must cover every word.
    pub fn matches(&self, words: &[String], exact: bool) -> bool {
        if self.words.is_empty()
            || self.words.len() > words.len()
            || (exact && self.words.len() != words.len())
        {
            return false;
        }
        self.words.iter().zip(words).all(|(rule, word)| {
            rule == word
                || canonical_flags(rule).is_some_and(|r| Some(r) == canonical_flags(word))
                || (rule.ends_with('/')
                    && rule.len() > 1
                    && word
                        .strip_prefix(rule.as_str())
                        .is_some_and(|rest| !climbs(rest)))
        })
    }

    /// Whether the rule covers this part of a command. Allow rules cover a dangerous command
    /// or a protected write only when they name it whole (approving `rm` must not approve
    /// `rm -rf /`), and never a command whose redirections write somewhere (`allow "cat"`
    /// is not `cat > ~/.bashrc`). Deny and ask rules look past git's global options
    /// (`deny "git push"` holds `git -C sub push`); allow rules do not
    /// (`allow "git status"` is not `git -c core.fsmonitor=… status`).
    fn covers(&self, part: &CommandPart) -> bool {
        if self.kind != RuleKind::Allow {
            return self.matches(&part.words, false)
                || self.matches(&without_git_globals(&part.words), false);
        }
        if self.source == RuleSource::Skill && part.protected.is_some() {
            return false;
        }
        let exact = part.class == Class::Dangerous || part.protected.is_some();
        !part.redirected && self.matches(&part.words, exact)
    }
}

/// Wrappers whose last words are the command they run (`sudo rm x` runs `rm x`).
const RUNS_ITS_ARGUMENTS: &[&str] = &[
    "sudo", "doas", "pkexec", "runuser", "run0", "env", "xargs", "nice", "ionice", "timeout",
    "nohup", "setsid", "stdbuf", "taskset", "chrt", "flock", "unshare", "strace", "ltrace",
    "watch", "time", "command", "builtin", "exec", "busybox", "parallel", "prlimit", "numactl",
];

/// Whether a path suffix leaves the directory it is under (`..` as a component).
fn climbs(rest: &str) -> bool {
    let mut depth = 0i32;
    for component in rest.split('/') {
        match component {
            ".." => depth -= 1,
            "" | "." => {}
            _ => depth += 1,
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

/// A cluster of short flags with its letters sorted, so `-rf` and `-fr` compare equal.
fn canonical_flags(word: &str) -> Option<String> {
    let letters = word.strip_prefix('-')?;
    if letters.len() < 2 || !letters.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let mut sorted: Vec<char> = letters.chars().collect();
    sorted.sort_unstable();
    Some(sorted.into_iter().collect())
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} \"{}\" ({})",
            self.kind.as_str(),
            self.prefix,
            self.source.as_str()
        )
    }
}

/// What the rules say about a whole command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleOutcome<'r> {
    /// A deny rule matched some part.
    Deny { rule: &'r Rule, part: CommandPart },
    /// An ask rule matched some part (and no deny rule did).
    Ask { rule: &'r Rule, part: CommandPart },
    /// Every part is covered by an allow rule or is read-only where read-only runs.
    Allow { rules: Vec<&'r Rule> },
    /// No rule decides.
    None,
}

/// Errors reading or writing a project's rules.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    #[error("reading {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("writing {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// All rules in force: config, project and session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl RuleSet {
    /// Rules from the `[permissions]` table of the user's config.
    pub fn from_config(allow: &[String], ask: &[String], deny: &[String]) -> Self {
        Self::from_lists(allow, ask, deny, RuleSource::Config)
    }

    fn from_lists(allow: &[String], ask: &[String], deny: &[String], source: RuleSource) -> Self {
        let mut set = Self::default();
        for (kind, list) in [
            (RuleKind::Allow, allow),
            (RuleKind::Ask, ask),
            (RuleKind::Deny, deny),
        ] {
            for prefix in list.iter().filter(|p| !p.trim().is_empty()) {
                set.add(Rule::new(kind, prefix, source));
            }
        }
        set
    }

    /// The rules of `workspace/.cairn/config.toml` (`[permissions] allow/ask/deny`); no file
    /// means no rules. A malformed file is an error naming the file.
    pub fn load_project(workspace: &Path) -> Result<Self, RulesError> {
        let path = project_config(workspace);
        match read_table(&path)? {
            Some(table) => Self::project_table(&table, &path),
            None => Ok(Self::default()),
        }
    }

    /// The rules of a project config's text (`path` names it in errors). Whether they apply
    /// is `trust`'s decision.
    pub fn parse_project(text: &str, path: &Path) -> Result<Self, RulesError> {
        let table = text
            .parse::<toml::Table>()
            .map_err(|err| RulesError::Invalid {
                path: path.to_path_buf(),
                message: err.to_string(),
            })?;
        Self::project_table(&table, path)
    }

    fn project_table(table: &toml::Table, path: &Path) -> Result<Self, RulesError> {
        let path = path.to_path_buf();
        let Some(permissions) = table.get("permissions") else {
            return Ok(Self::default());
        };
        let invalid = |message: String| RulesError::Invalid {
            path: path.clone(),
            message,
        };
        let permissions = permissions
            .as_table()
            .ok_or_else(|| invalid("`permissions` must be a table".into()))?;
        let list = |key: &str| -> Result<Vec<String>, RulesError> {
            let Some(value) = permissions.get(key) else {
                return Ok(Vec::new());
            };
            let items = value
                .as_array()
                .ok_or_else(|| invalid(format!("`permissions.{key}` must be a list of strings")))?;
            items
                .iter()
                .map(|v| {
                    v.as_str().map(str::to_string).ok_or_else(|| {
                        invalid(format!("`permissions.{key}` must be a list of strings"))
                    })
                })
                .collect()
        };
        Ok(Self::from_lists(
            &list("allow")?,
            &list("ask")?,
            &list("deny")?,
            RuleSource::Project,
        ))
    }

    /// Drops every rule from `source` (the session's, when the session changes).
    pub fn remove_source(&mut self, source: RuleSource) {
        self.rules.retain(|rule| rule.source != source);
    }

    pub fn add(&mut self, rule: Rule) {
        if !self.rules.contains(&rule) {
            self.rules.push(rule);
        }
    }

    /// Adds every rule of `other` (e.g. the project's rules to the config's).
    pub fn extend(&mut self, other: RuleSet) {
        for rule in other.rules {
            self.add(rule);
        }
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    fn first(&self, kind: RuleKind, part: &CommandPart) -> Option<&Rule> {
        self.rules.iter().find(|r| r.kind == kind && r.covers(part))
    }

    /// What the rules say about `analysis`: deny on any part denies, ask on any part asks, and
    /// allow needs every part covered (a read-only part counts as covered when
    /// `read_only_runs`), with at least one allow rule actually used.
    pub fn evaluate(&self, analysis: &Analysis, read_only_runs: bool) -> RuleOutcome<'_> {
        // What runs is unknown: it may be what a deny rule forbids.
        if let Some(rule) = self.rules.iter().find(|r| r.kind == RuleKind::Deny)
            && let Some(part) = analysis.parts.iter().find(|p| p.opaque)
        {
            return RuleOutcome::Deny {
                rule,
                part: part.clone(),
            };
        }
        for kind in [RuleKind::Deny, RuleKind::Ask] {
            for part in &analysis.parts {
                if let Some(rule) = self.first(kind, part) {
                    let part = part.clone();
                    return if kind == RuleKind::Deny {
                        RuleOutcome::Deny { rule, part }
                    } else {
                        RuleOutcome::Ask { rule, part }
                    };
                }
            }
        }
        let mut used: Vec<&Rule> = Vec::new();
        let allowed: Vec<Option<&Rule>> = analysis
            .parts
            .iter()
            .map(|part| self.first(RuleKind::Allow, part))
            .collect();
        for (i, part) in analysis.parts.iter().enumerate() {
            // The payload of an allowed wrapper (`rm x` of `sudo rm x`) is allowed with it.
            let wrapped = || {
                analysis
                    .parts
                    .iter()
                    .zip(&allowed)
                    .find_map(|(outer, rule)| {
                        let rule = (*rule)?;
                        let wrapper = outer.words.first()?;
                        (outer.words.len() > part.words.len()
                            && !part.words.is_empty()
                            && RUNS_ITS_ARGUMENTS.contains(&wrapper.as_str())
                            && outer.words.ends_with(&part.words))
                        .then_some(rule)
                    })
            };
            match allowed[i].or_else(wrapped) {
                Some(rule) => {
                    if !used.contains(&rule) {
                        used.push(rule);
                    }
                }
                None if part.class == Class::ReadOnly && read_only_runs => {}
                None => return RuleOutcome::None,
            }
        }
        if used.is_empty() {
            RuleOutcome::None
        } else {
            RuleOutcome::Allow { rules: used }
        }
    }

    /// The rules that match a write by `tool` to `path` (words `[tool, path]`).
    pub fn evaluate_write(&self, tool: &str, path: &Path) -> Option<&Rule> {
        let words = vec![tool.to_string(), path.to_string_lossy().into_owned()];
        [RuleKind::Deny, RuleKind::Ask, RuleKind::Allow]
            .into_iter()
            .find_map(|kind| {
                self.rules
                    .iter()
                    .find(|r| r.kind == kind && r.matches(&words, false))
            })
    }
}

/// The project config file rules are loaded from and saved to.
pub fn project_config(workspace: &Path) -> PathBuf {
    workspace.join(".cairn").join("config.toml")
}

fn read_table(path: &Path) -> Result<Option<toml::Table>, RulesError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(RulesError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    text.parse::<toml::Table>()
        .map(Some)
        .map_err(|err| RulesError::Invalid {
            path: path.to_path_buf(),
            message: err.to_string(),
        })
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
