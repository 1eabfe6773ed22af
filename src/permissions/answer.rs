//! The gate's whole answer for one call (`Answer`): the verdict, the sandbox a command runs in
//! and the dangerous parts of a command, decided once from one reading of the command, so
//! nothing downstream (the agent, the approval prompt) classifies it again. Also the rule that
//! a command the sandbox refused before asks this time.

use crate::bus::Mode;
use crate::permissions::Verdict;
use crate::permissions::classify::{Analysis, Class};
use crate::process::{Grant, SandboxRefusals};
use crate::tools::Access;

/// What the gate is asked about one call.
pub struct Call<'a> {
    pub tool: &'a str,
    pub access: &'a Access,
    pub mode: Mode,
    /// Someone can answer a question (not a headless run).
    pub interactive: bool,
    /// The commands the sandbox refused earlier in this session.
    pub refused: &'a SandboxRefusals,
    /// The user's prompt attaches what the call reads (an `@` mention, a pasted image), not
    /// a tool call of the model's: a secret store it names asks in every mode, `never` too
    /// (the user may not know the mention names one, and it would go to the provider).
    pub attachment: bool,
}

/// Everything the gate says about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub verdict: Verdict,
    /// The sandbox a command runs in when it runs unasked or once approved (the user's `u`
    /// answer lets it out).
    pub grant: Grant,
    /// Every dangerous part of a command, as `words — reason`: the approval prompt lists them
    /// all (none may hide in a long command's elided middle), and a dangerous command is
    /// approved once, never by a rule.
    pub dangers: Vec<String>,
    /// The error the model gets when the call may not run at all in this mode (a change
    /// while planning): no rule, approval or question lets it through.
    pub refusal: Option<String>,
    /// For a held command: what its sandbox would let it reach beyond the workspace and temp
    /// dirs (the network, Unix sockets), when anything.
    pub reach: Option<String>,
}

/// The verdict for an attachment: as for a read by a tool, except that a secret store asks
/// in every mode.
pub(crate) fn for_attachment(verdict: Verdict, access: &Access) -> Verdict {
    match (verdict, access) {
        (
            Verdict::Run,
            Access::ReadGuarded {
                display,
                sensitive: Some(why),
                ..
            },
        ) => Verdict::Ask {
            why: format!("reads {display}: {why}; an attachment of it asks in every mode"),
            prefix: String::new(),
        },
        (verdict, _) => verdict,
    }
}

impl Answer {
    /// The answer for a call that is not a command: no dangers, and the grant only matters to
    /// a command.
    pub(crate) fn plain(verdict: Verdict, mode: Mode) -> Self {
        Self {
            grant: grant(&verdict, false, mode),
            verdict,
            dangers: Vec::new(),
            refusal: None,
            reach: None,
        }
    }

    /// The answer for a command, from the verdict of the rules and the reading that verdict
    /// came from.
    pub(crate) fn for_command(
        verdict: Verdict,
        analysis: &Analysis,
        call: &Call<'_>,
        command: &str,
    ) -> Self {
        let refused_before =
            call.interactive && call.mode != Mode::Never && call.refused.contains(command);
        let verdict = if refused_before {
            ask_again(verdict)
        } else {
            verdict
        };
        let read_only = analysis.classification().class == Class::ReadOnly;
        Self {
            grant: grant(&verdict, read_only, call.mode),
            verdict,
            dangers: dangerous_parts(analysis),
            refusal: None,
            reach: None,
        }
    }

    /// While planning, a call that would change something is refused (see `plan::refusal`).
    pub(crate) fn refused_while_planning(
        mut self,
        call: &Call<'_>,
        why: impl FnOnce() -> Option<String>,
    ) -> Self {
        if call.mode == Mode::Plan {
            self.refusal = why();
        }
        self
    }

    /// The command has a dangerous part: no "always" rule is made for it.
    pub fn is_dangerous(&self) -> bool {
        !self.dangers.is_empty()
    }
}

/// Why a command the sandbox refused before asks this time.
const REFUSED_BEFORE: &str = "the sandbox refused this command (or cairn put back what it changed in git config, hooks or the agent settings .cairn/, .agents/, .claude/) when it ran before; `u` runs it without the sandbox";

/// A command the sandbox refused before asks this time, so the user can let it out (`u`).
fn ask_again(verdict: Verdict) -> Verdict {
    match verdict {
        Verdict::Run => Verdict::Ask {
            why: REFUSED_BEFORE.into(),
            prefix: String::new(),
        },
        Verdict::Ask { why, prefix } => Verdict::Ask {
            why: format!("{why}; {REFUSED_BEFORE}"),
            prefix,
        },
        deny => deny,
    }
}

/// A command judged read-only that runs unasked gets the read-only sandbox; anything else the
/// workspace-write one. While planning everything runs read-only.
fn grant(verdict: &Verdict, read_only: bool, mode: Mode) -> Grant {
    if mode == Mode::Plan || (read_only && *verdict == Verdict::Run) {
        Grant::ReadOnly
    } else {
        Grant::WorkspaceWrite
    }
}

/// Every dangerous part of a command, as `words — reason` (each once).
fn dangerous_parts(analysis: &Analysis) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for part in analysis
        .parts
        .iter()
        .filter(|p| p.class == Class::Dangerous)
    {
        let text = if part.words.is_empty() {
            crate::visible::name(&part.reason)
        } else {
            crate::visible::name(&format!("{} — {}", part.words.join(" "), part.reason))
        };
        if !found.contains(&text) {
            found.push(text);
        }
    }
    found
}

/// The dangerous parts the gate lists for `command` in a workspace of its own, for tests that
/// build approval events by hand.
#[cfg(test)]
pub(crate) fn dangers_for_tests(command: &str) -> Vec<String> {
    use crate::permissions::classify::{Places, analyze_in};
    let workspace = std::env::temp_dir().join("cairn-no-workspace");
    dangerous_parts(&analyze_in(command, &workspace, &Places::from_env()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::classify::{Places, analyze_in};

    fn answer(command: &str, mode: Mode, interactive: bool, refused: &SandboxRefusals) -> Answer {
        let access = Access::Command {
            command: command.into(),
            background: false,
        };
        let call = Call {
            tool: "bash",
            access: &access,
            mode,
            interactive,
            refused,
            attachment: false,
        };
        let analysis = analyze_in(command, std::path::Path::new("/"), &Places::default());
        Answer::for_command(Verdict::Run, &analysis, &call, command)
    }

    #[test]
    fn a_command_refused_before_asks_again_only_when_someone_can_answer() {
        let refused = SandboxRefusals::default();
        refused.add("ls");
        let asked = answer("ls", Mode::Auto, true, &refused);
        let Verdict::Ask { why, prefix } = &asked.verdict else {
            panic!("{asked:?}");
        };
        assert!(why.contains("`u` runs it without the sandbox"), "{why}");
        assert_eq!(prefix, "");
        assert_eq!(asked.grant, Grant::WorkspaceWrite, "asked: not read-only");
        for (mode, interactive) in [(Mode::Auto, false), (Mode::Never, true)] {
            let ran = answer("ls", mode, interactive, &refused);
            assert_eq!(
                ran.verdict,
                Verdict::Run,
                "{mode} interactive={interactive}"
            );
            assert_eq!(ran.grant, Grant::ReadOnly);
        }
        assert_eq!(
            answer("ls", Mode::Auto, true, &SandboxRefusals::default()).verdict,
            Verdict::Run
        );
    }

    #[test]
    fn plan_mode_grants_read_only_and_dangers_are_listed_once() {
        let none = SandboxRefusals::default();
        assert_eq!(
            answer("touch a", Mode::Plan, true, &none).grant,
            Grant::ReadOnly
        );
        assert_eq!(
            answer("touch a", Mode::Auto, true, &none).grant,
            Grant::WorkspaceWrite
        );
        let dangerous = answer("rm -rf /etc/x; rm -rf /etc/x", Mode::Auto, true, &none);
        assert_eq!(dangerous.dangers.len(), 1, "{:?}", dangerous.dangers);
        assert!(dangerous.dangers[0].starts_with("rm -rf /etc/x — "));
        assert!(dangerous.is_dangerous());
        assert!(!answer("touch a", Mode::Auto, true, &none).is_dangerous());
    }
}
