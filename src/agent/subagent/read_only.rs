//! The gate of a read-only agent (`explore`): the session's gate, and before it a refusal of
//! anything that could change something: a file write, an MCP tool not known to be
//! read-only, a command the classifier does not judge read-only. The refusal is the gate's
//! answer (`Answer::refusal`), which no rule or approval overrides, and says what to do
//! instead, so the model can correct its call.

use std::sync::Arc;

use crate::bus::Mode;
use crate::permissions::classify::Class;
use crate::permissions::{Answer, Call, PermissionGate, Verdict, rules};
use crate::tools::Access;

pub struct ReadOnlyGate {
    inner: Arc<dyn PermissionGate>,
    agent: String,
}

impl ReadOnlyGate {
    pub fn new(inner: Arc<dyn PermissionGate>, agent: &str) -> Self {
        Self {
            inner,
            agent: agent.to_string(),
        }
    }

    /// Why the call may not run in a read-only agent; None when it may.
    fn refusal(&self, tool: &str, access: &Access) -> Option<String> {
        let what = match access {
            Access::Read
            | Access::ReadGuarded { .. }
            | Access::Session
            | Access::Network { .. }
            | Access::Mcp {
                read_only: true, ..
            } => return None,
            Access::Command { command, .. } => {
                let first: String = command
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(120)
                    .collect();
                match self.inner.classify(command) {
                    Some(judged) if judged.class == Class::ReadOnly => return None,
                    Some(judged) => format!(
                        "the command `{first}` is not judged read-only ({})",
                        judged.reason
                    ),
                    None => format!("the command `{first}` cannot be judged read-only here"),
                }
            }
            Access::Write { display, .. } | Access::WriteProtected { display, .. } => {
                format!("`{tool}` would change {display}")
            }
            Access::Mcp { server, tool, .. } => {
                format!("`{tool}` of the MCP server `{server}` is not known to be read-only")
            }
            Access::Delegate { .. } => "it would start another agent".to_string(),
        };
        Some(format!(
            "agent {} is read-only: {what}, so it was not run. Read files (read_file, list_dir, \
             glob, grep) and run read-only commands (ls, cat, rg, git log, ...) instead; say in \
             your answer what should change, and the agent that asked will do it.",
            self.agent
        ))
    }
}

impl PermissionGate for ReadOnlyGate {
    fn check(&self, tool: &str, access: &Access, mode: Mode) -> Verdict {
        match self.refusal(tool, access) {
            Some(why) => Verdict::Deny { why },
            None => self.inner.check(tool, access, mode),
        }
    }
    fn answer(&self, call: &Call<'_>) -> Answer {
        let answer = self.inner.answer(call);
        match self.refusal(call.tool, call.access) {
            Some(refusal) => Answer {
                refusal: Some(refusal),
                ..answer
            },
            None => answer,
        }
    }
    fn add_rules(&self, more: rules::RuleSet) {
        self.inner.add_rules(more);
    }
    fn allow_for_session(&self, prefix: &str) {
        self.inner.allow_for_session(prefix);
    }
    fn clear_session_rules(&self) {
        // The parent's session rules are the parent's: a child never clears them.
    }
    fn grant_for_skill(&self, prefixes: &[String]) {
        self.inner.grant_for_skill(prefixes);
    }
    fn end_skill_grants(&self) {
        self.inner.end_skill_grants();
    }
    fn sandboxed(&self) -> bool {
        self.inner.sandboxed()
    }
    fn runs_later(&self, path: &std::path::Path) -> Option<String> {
        self.inner.runs_later(path)
    }
    fn classify(&self, command: &str) -> Option<crate::permissions::classify::Classification> {
        self.inner.classify(command)
    }
    fn note_read(&self, tool: &str, text: &str) {
        self.inner.note_read(tool, text);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::permissions::policy::{PolicyGate, PolicySettings};

    #[test]
    fn reads_and_read_only_commands_pass_and_changes_are_refused_with_a_way_on() {
        let dir = tempfile::tempdir().unwrap();
        let inner = Arc::new(PolicyGate::new(PolicySettings {
            rules: rules::RuleSet::default(),
            workspace: dir.path().to_path_buf(),
            sandbox: None,
            places: crate::permissions::classify::Places::from_env(),
        }));
        let gate = ReadOnlyGate::new(inner, "explore");
        let command = |c: &str| Access::Command {
            command: c.into(),
            background: false,
        };
        assert!(gate.refusal("bash", &command("ls -la")).is_none());
        assert!(gate.refusal("read_file", &Access::Read).is_none());
        let why = gate.refusal("bash", &command("rm -rf build")).unwrap();
        assert!(
            why.contains("not judged read-only") && why.contains("read_file"),
            "{why}"
        );
        assert!(
            gate.refusal("bash", &command("echo hi > out.txt"))
                .is_some()
        );
    }
}
