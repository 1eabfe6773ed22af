//! Plan mode (SPEC §11.8): while the model plans, nothing may change. Reads run as in any
//! mode (the gate still asks for guarded ones); a command runs only when the classifier judges
//! it read-only (and then in the read-only sandbox); every file write and every other command
//! is refused with an error the model can act on: it names `exit_plan_mode`.
//!
//! The refusal is part of the gate's answer (`Answer::refusal`), decided before its rules: no
//! allow rule, session approval or project rule lets a write through while planning. A
//! command is judged from the gate's own reading of it.

use crate::permissions::classify::{Class, Classification};
use crate::tools::Access;

pub use crate::tools::EXIT_PLAN_MODE;

/// Why `tool` may not run in plan mode, as the error the model gets; `None` when it may.
/// `judged` is the gate's classification of a command (asked only for a command).
pub fn refusal(
    tool: &str,
    access: &Access,
    judged: impl FnOnce(&str) -> Classification,
) -> Option<String> {
    let what = match access {
        // A fetch changes nothing here; the gate still asks per host.
        Access::Read
        | Access::ReadGuarded { .. }
        | Access::Session
        // The child plans too: it inherits the mode, and this refusal with it.
        | Access::Delegate { .. }
        | Access::Network { .. }
        | Access::Mcp {
            read_only: true, ..
        } => {
            return None;
        }
        Access::Mcp { server, tool, .. } => {
            format!("`{tool}` of the MCP server `{server}` is not known to be read-only")
        }
        Access::Command { command, .. } => {
            let verdict = judged(command);
            if verdict.class == Class::ReadOnly {
                return None;
            }
            format!(
                "the command `{}` is not judged read-only ({})",
                one_line(command),
                verdict.reason
            )
        }
        Access::Write { display, .. } | Access::WriteProtected { display, .. } => {
            format!("`{tool}` would change {display}")
        }
    };
    Some(format!(
        "plan mode: {what}, and nothing may change while planning, so it was not run. Read \
         files and run read-only commands (ls, cat, rg, git log, ...) to plan; when the plan is \
         ready, call {EXIT_PLAN_MODE} with it: the user approves it (and picks the mode to \
         carry it out in) or answers with feedback."
    ))
}

fn one_line(command: &str) -> String {
    let first = command.lines().next().unwrap_or("");
    let mut shown: String = first.chars().take(120).collect();
    if shown.len() < command.len() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::classify;

    fn command(text: &str) -> Access {
        Access::Command {
            command: text.into(),
            background: false,
        }
    }

    fn refused(text: &str) -> bool {
        // A workspace of its own: the temp directory itself may hold HOME (build farms), and
        // a walk over a directory holding a secret store is rightly not read-only.
        let dir = tempfile::tempdir().expect("temp dir");
        refusal("bash", &command(text), |c| {
            classify::classify(c, dir.path())
        })
        .is_some()
    }

    #[test]
    fn read_only_commands_run_and_every_other_command_is_refused() {
        for ok in [
            "rg foo",
            "ls -la",
            "cat README.md",
            "git log --oneline",
            "grep -rn x .",
        ] {
            assert!(!refused(ok), "{ok} should run while planning");
        }
        for changing in [
            "echo x > f",
            "touch f",
            "rm -rf build",
            "git commit -m x",
            "sed -i s/a/b/ f",
            "cat a | tee b",
            "python3 -c 'open(\"f\",\"w\")'",
            "bash -c 'echo x >> f'",
            "find . -delete",
            "cargo build",
            "$(printf rm) f",
            "ls; touch f",
        ] {
            assert!(
                refused(changing),
                "{changing} must be refused while planning"
            );
        }
    }

    #[test]
    fn the_refusal_names_exit_plan_mode_and_the_command() {
        let dir = std::env::temp_dir();
        let text = refusal("bash", &command("echo x > f"), |c| {
            classify::classify(c, &dir)
        })
        .unwrap_or_default();
        assert!(text.contains(EXIT_PLAN_MODE), "{text}");
        assert!(text.contains("echo x > f"), "{text}");
        assert!(text.starts_with("plan mode:"), "{text}");
    }
}
