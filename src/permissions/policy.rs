//! The policy gate: turns a call's `Access`, the mode, the rules and the classifier's verdict
//! into run / ask / deny. The agent runtime asks it before every call; `cairn policy check`
//! asks `explain` for the same answer with its reasons.

use crate::permissions::run_later::{default_run_later, runs_later};
use crate::sync::RwLockExt;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use serde::{Deserialize, Serialize};

use crate::bus::Mode;
use crate::permissions::classify::{Analysis, Class, Places, analyze_in};
use crate::permissions::prefixes::{exact_prefix, part_prefix};
use crate::permissions::rules::{Rule, RuleKind, RuleOutcome, RuleSet, RuleSource};
use crate::permissions::{Answer, Call, PermissionGate, Verdict};
use crate::permissions::{file_access, mcp_calls, plan, web_hosts};
use crate::process::sandbox::{Grant, SandboxPolicy};
use crate::tools::Access;

/// What the gate is built from. The mode is not here: it is given with every call, since the
/// user can switch it during a session.
#[derive(Debug, Clone)]
pub struct PolicySettings {
    /// Config and project rules; session rules are added through `allow_for_session`.
    pub rules: RuleSet,
    pub workspace: PathBuf,
    /// The sandbox `bash` commands run in, when enabled.
    pub sandbox: Option<SandboxPolicy>,
    /// The temp and home directories the classifier judges paths against
    /// (`Places::with_dirs` at launch; tests inject their own).
    pub places: Places,
}

/// Run, ask or deny: the gate's ruling on a command without its reasons (what `policy check`
/// prints as `decision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ruling {
    Run,
    Ask,
    Deny,
}

impl Ruling {
    pub fn as_str(self) -> &'static str {
        match self {
            Ruling::Run => "run",
            Ruling::Ask => "ask",
            Ruling::Deny => "deny",
        }
    }
}

/// The gate's answer for a command, with everything `policy check` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyDecision {
    pub class: Class,
    pub decision: Ruling,
    pub reason: String,
    /// The rule that decided, as `kind "prefix" (source)`; `None` when the mode decided.
    pub rule: Option<String>,
    /// What "approve for the session" would allow (only meaningful when asking).
    #[serde(skip)]
    pub prefix: String,
    /// Why the command writes a protected path (it then asks in every mode but `never`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protected: Option<String>,
}

/// The `PermissionGate` of a session: settings plus the session's own approvals.
pub struct PolicyGate {
    workspace: PathBuf,
    places: Places,
    sandbox: Option<SandboxPolicy>,
    rules: RwLock<RuleSet>,
    /// No sandbox on this system: commands that are not read-only ask even where the mode
    /// would run them.
    asking_unsandboxed: bool,
    /// Files the user's own tools run later (`run_later::DEFAULT_RUN_LATER`).
    run_later: Vec<String>,
    /// What the session's tools returned: a fetch whose URL carries it asks in `auto`.
    read: super::read_runs::ReadRuns,
}

impl PolicyGate {
    pub fn new(settings: PolicySettings) -> Self {
        Self {
            workspace: settings.workspace,
            places: settings.places,
            sandbox: settings.sandbox,
            rules: RwLock::new(settings.rules),
            asking_unsandboxed: false,
            run_later: default_run_later(),
            read: Default::default(),
        }
    }

    /// The workspace's real path (file-tool paths are real paths).
    fn root(&self) -> PathBuf {
        std::fs::canonicalize(&self.workspace).unwrap_or_else(|_| self.workspace.clone())
    }

    /// Replaces the list of files that run later (`[permissions] run_later`).
    pub fn with_run_later(mut self, patterns: Vec<String>) -> Self {
        self.run_later = patterns;
        self
    }

    /// With `missing`, commands that are not read-only ask (unless a rule allows them): the
    /// sandbox that would contain a misjudged command is not there.
    pub fn asking_unsandboxed(mut self, missing: bool) -> Self {
        self.asking_unsandboxed = missing;
        self
    }

    /// The prefixes approved for this session so far, for the session log.
    pub fn session_prefixes(&self) -> Vec<String> {
        let rules = self.rules.read_locked();
        rules
            .rules()
            .iter()
            .filter(|r| r.source == RuleSource::Session)
            .map(|r| r.prefix.clone())
            .collect()
    }

    /// Would `command` run, ask or be denied in `mode`, and why.
    pub fn explain(&self, command: &str, mode: Mode) -> PolicyDecision {
        self.explain_analysis(&self.analyze(command), mode)
    }

    /// The one reading of a command every answer about it comes from.
    fn analyze(&self, command: &str) -> Analysis {
        analyze_in(command, &self.workspace, &self.places)
    }

    fn explain_analysis(&self, analysis: &Analysis, mode: Mode) -> PolicyDecision {
        let rules = self.rules.read_locked();
        let mut decision = decide(analysis, &rules, mode);
        if self.asking_unsandboxed
            && decision.decision == Ruling::Run
            && decision.class != Class::ReadOnly
            && decision.rule.is_none()
            && mode != Mode::Never
        {
            decision.decision = Ruling::Ask;
            decision.reason = format!(
                "{} (no sandbox on this system: commands that change things ask)",
                decision.reason
            );
            decision.prefix = approval_prefix(analysis);
        }
        decision
    }

    /// The verdict on a read command.
    fn command_verdict(&self, analysis: &Analysis, mode: Mode) -> Verdict {
        let decision = self.explain_analysis(analysis, mode);
        match decision.decision {
            Ruling::Run => Verdict::Run,
            Ruling::Ask => Verdict::Ask {
                why: decision.reason,
                prefix: decision.prefix,
            },
            Ruling::Deny => Verdict::Deny {
                why: decision.reason,
            },
        }
    }

    fn check_write(
        &self,
        tool: &str,
        path: &Path,
        display: &str,
        inside: bool,
        mode: Mode,
    ) -> Verdict {
        let rules = self.rules.read_locked();
        match rules.evaluate_write(tool, path) {
            Some(rule) if rule.kind == RuleKind::Deny => {
                return Verdict::Deny {
                    why: format!("{display}: denied by the rule {rule}"),
                };
            }
            Some(rule) if rule.kind == RuleKind::Allow => return Verdict::Run,
            Some(rule) if mode != Mode::Never => {
                return Verdict::Ask {
                    why: format!("{display}: the rule {rule} asks"),
                    prefix: tool.to_string(),
                };
            }
            _ => {}
        }
        if inside
            && matches!(mode, Mode::Ask | Mode::AutoEdit)
            && let Some(why) = runs_later(path, &self.root(), &self.run_later)
        {
            return Verdict::Ask {
                why: format!("{why}; this asks in `ask` and `auto-edit`"),
                prefix: format!("{tool} {}", path.display()),
            };
        }
        match (inside, mode) {
            (_, Mode::Never) => Verdict::Run,
            (true, Mode::Ask) => Verdict::Ask {
                why: format!("changes {display} (mode `ask` asks before every change)"),
                prefix: tool.to_string(),
            },
            (true, _) => Verdict::Run,
            (false, _) => {
                let dir = path
                    .parent()
                    .unwrap_or(path)
                    .to_string_lossy()
                    .trim_end_matches('/')
                    .to_string();
                Verdict::Ask {
                    why: format!("writes outside the workspace ({})", path.display()),
                    prefix: format!("{tool} {dir}/"),
                }
            }
        }
    }
}

/// The decision for one analysed command line: deny rules, then `never`, then ask rules, then
/// allow rules (every part covered), then the class against the mode.
fn decide(analysis: &Analysis, rules: &RuleSet, mode: Mode) -> PolicyDecision {
    let verdict = analysis.classification();
    let class = verdict.class;
    let protected = verdict.protected.clone();
    let asking = |reason: String, rule: Option<String>| PolicyDecision {
        class,
        decision: Ruling::Ask,
        reason,
        rule,
        prefix: approval_prefix(analysis),
        protected: protected.clone(),
    };
    let run = |reason: String, rule: Option<String>| PolicyDecision {
        class,
        decision: Ruling::Run,
        reason,
        rule,
        prefix: String::new(),
        protected: protected.clone(),
    };
    match rules.evaluate(analysis, mode != Mode::Ask) {
        RuleOutcome::Deny { rule, part } => {
            return PolicyDecision {
                class,
                decision: Ruling::Deny,
                reason: format!(
                    "denied by a rule: {} matches `{}`",
                    rule_text(rule),
                    part.words.join(" ")
                ),
                rule: Some(rule.to_string()),
                prefix: String::new(),
                protected: protected.clone(),
            };
        }
        _ if mode == Mode::Never => return run(verdict.reason, None),
        RuleOutcome::Ask { rule, part } => {
            return asking(
                format!(
                    "{}; the rule {} asks for `{}`",
                    verdict.reason,
                    rule_text(rule),
                    part.words.join(" ")
                ),
                Some(rule.to_string()),
            );
        }
        RuleOutcome::Allow { rules } => {
            let names: Vec<String> = rules.iter().map(|r| r.to_string()).collect();
            return run(
                format!("{}; allowed by a rule", verdict.reason),
                Some(names.join(", ")),
            );
        }
        RuleOutcome::None => {}
    }
    if let Some(why) = &verdict.protected {
        let reason = if class == Class::Dangerous {
            verdict.reason.clone()
        } else {
            format!("{why}; asks in every mode but `never`")
        };
        return asking(reason, None);
    }
    match (class, mode) {
        (Class::ReadOnly, Mode::Ask) => asking(
            format!("{} (mode `ask` asks before every command)", verdict.reason),
            None,
        ),
        (Class::ReadOnly, _) | (Class::Mutating, Mode::Auto) => run(verdict.reason, None),
        (Class::Mutating, _) | (Class::Dangerous, _) => asking(verdict.reason, None),
    }
}

fn rule_text(rule: &Rule) -> String {
    format!("\"{}\" ({})", rule.prefix, rule.source.as_str())
}

/// What "approve for the session" offers: the exact command when it is dangerous (an allow
/// rule only covers a dangerous command it names whole), otherwise the suggested prefix.
fn approval_prefix(analysis: &Analysis) -> String {
    let dangerous = analysis
        .parts
        .iter()
        .find(|p| (p.class == Class::Dangerous || p.protected.is_some()) && !p.words.is_empty());
    match dangerous {
        Some(part) => exact_prefix(part),
        None => {
            let part = analysis
                .parts
                .iter()
                .find(|p| p.class != Class::ReadOnly && !p.words.is_empty());
            part.or(analysis.parts.iter().find(|p| !p.words.is_empty()))
                .map(part_prefix)
                .unwrap_or_default()
        }
    }
}

impl PermissionGate for PolicyGate {
    fn classify(&self, command: &str) -> Option<crate::permissions::classify::Classification> {
        Some(self.analyze(command).classification())
    }

    fn check(&self, tool: &str, access: &Access, mode: Mode) -> Verdict {
        match access {
            // A delegation touches nothing itself: the child's calls pass this gate one by one.
            Access::Read | Access::Session | Access::Delegate { .. } => Verdict::Run,
            Access::Network { host, url } => {
                web_hosts::check_fetch(&self.rules.read_locked(), host, url, mode, &self.read)
            }
            Access::Command { command, .. } => self.command_verdict(&self.analyze(command), mode),
            Access::Mcp {
                server,
                name,
                read_only,
                ..
            } => mcp_calls::check_call(&self.rules.read_locked(), server, name, *read_only, mode),
            Access::Write { path, display } => {
                self.check_write(tool, path.as_path(), display, path.inside_workspace(), mode)
            }
            Access::ReadGuarded {
                path,
                display,
                sensitive,
            } => file_access::check_read(
                &self.rules.read_locked(),
                tool,
                path.as_path(),
                display,
                sensitive.as_deref(),
                mode,
            ),
            Access::WriteProtected { path, display, why } => file_access::check_protected_write(
                &self.rules.read_locked(),
                tool,
                path.as_path(),
                display,
                why,
                mode,
            ),
        }
    }

    fn answer(&self, call: &Call<'_>) -> Answer {
        let Access::Command { command, .. } = call.access else {
            let mut verdict = self.check(call.tool, call.access, call.mode);
            if call.attachment {
                verdict = super::answer::for_attachment(verdict, call.access);
            }
            return Answer::plain(verdict, call.mode).refused_while_planning(call, || {
                plan::refusal(call.tool, call.access, |c| self.analyze(c).classification())
            });
        };
        let analysis = self.analyze(command);
        let verdict = self.command_verdict(&analysis, call.mode);
        let mut answer = Answer::for_command(verdict, &analysis, call, command)
            .refused_while_planning(call, || {
                plan::refusal(call.tool, call.access, |_| analysis.classification())
            });
        // A held command runs in workspace-write once approved: the prompt says what it
        // could reach there.
        if matches!(answer.verdict, Verdict::Ask { .. }) {
            answer.reach = self
                .sandbox
                .as_ref()
                .and_then(|policy| policy.socket_note(Grant::WorkspaceWrite));
        }
        answer
    }

    fn runs_later(&self, path: &Path) -> Option<String> {
        let root = self.root();
        runs_later(&root.join(path), &root, &self.run_later)
    }

    fn add_rules(&self, more: RuleSet) {
        self.rules.write_locked().extend(more);
    }

    fn allow_for_session(&self, prefix: &str) {
        if prefix.trim().is_empty() {
            return;
        }
        let mut rules = self.rules.write_locked();
        rules.add(Rule::new(RuleKind::Allow, prefix, RuleSource::Session));
    }

    fn clear_session_rules(&self) {
        let mut rules = self.rules.write_locked();
        rules.remove_source(RuleSource::Session);
        rules.remove_source(RuleSource::Skill);
    }

    fn grant_for_skill(&self, prefixes: &[String]) {
        let mut rules = self.rules.write_locked();
        for prefix in prefixes.iter().filter(|p| !p.trim().is_empty()) {
            rules.add(Rule::new(RuleKind::Allow, prefix, RuleSource::Skill));
        }
    }

    fn note_read(&self, tool: &str, text: &str) {
        // A page's and a search's text hold the links the model follows next.
        if !matches!(tool, "web_fetch" | "web_search") {
            self.read.note(text);
        }
    }

    fn end_skill_grants(&self) {
        self.rules.write_locked().remove_source(RuleSource::Skill);
    }

    fn sandboxed(&self) -> bool {
        self.sandbox.is_some()
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
