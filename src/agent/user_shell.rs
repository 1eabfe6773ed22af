//! The user's own shell: `!cmd` and `!!cmd` typed in the input. The user typed the command, so
//! it runs with the user's authority: no gate, no sandbox, the user's whole environment (the
//! secrets cairn keeps from the model's commands included), no timeout (Esc stops it). It is
//! still run like every command: `bash -c` in the workspace, in its own session and process
//! group, stdin from /dev/null, and a stop ends its whole group and whatever it left behind.
//! What the model is given of it is capped head and tail like a `bash` result, and every known
//! secret is redacted from it (and from what the screen and the log get).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::process::{self, Grant, Input, Program, TailSink};
use crate::tool_output::CommandRun;
use crate::tools::{ToolEnv, ToolError};

/// A user's command runs until it ends or the user stops it; this only bounds a forgotten one.
const LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);

/// What the model reads before the command's output, so it does not take it for its own call.
pub const CONTEXT_PREAMBLE: &str =
    "[the user ran this command in their own shell (`!`), not one of your tool calls; its output:]";

/// Runs `command` as the user, streaming its output to `tail`. The run comes back redacted.
pub async fn run(
    command: &str,
    env: &ToolEnv,
    cancel: &CancellationToken,
    tail: Option<TailSink>,
) -> Result<CommandRun, ToolError> {
    let settings = as_the_user(&env.bash, std::env::vars_os().map(|(name, _)| name));
    // The user's own command: their shell's grammar, no sandbox, on the process service.
    let program = Program::new(
        ["bash", "-c", command],
        &env.workspace,
        &settings,
        Grant::Unsandboxed,
    );
    let finished = process::run_program(&program, Input::Null, LIFETIME, cancel, tail)
        .await
        .map_err(|err| ToolError::io("could not start bash", err))?;
    env.jobs.keep_spills(finished.capture.spill_paths());
    let run = crate::tools::bash::command_run(
        command.to_string(),
        &finished,
        LIFETIME.as_millis() as u64,
    );
    Ok(crate::secrets::redact_value(run))
}

/// What the model is given of a finished `!cmd`: the preamble, then the run as a `bash`
/// result shows it (head and tail within the same budget, markers, the spill file).
pub fn context_text(run: &CommandRun) -> String {
    let text = crate::tool_output::model_text::command_text(run);
    let text = crate::secrets::redact(&text);
    format!("{CONTEXT_PREAMBLE}\n{text}")
}

/// The bash settings of a user's command: no sandbox, and nothing of the environment held
/// back: every variable cairn has is let through, and the secrets it stashed at start-up are
/// handed back.
fn as_the_user(
    bash: &process::Settings,
    names: impl Iterator<Item = std::ffi::OsString>,
) -> process::Settings {
    let mut allowed: Vec<String> = names.filter_map(|name| name.into_string().ok()).collect();
    allowed.extend(crate::secrets::stashed().into_iter().map(|(name, _)| name));
    process::Settings {
        hidden_env: Vec::new(),
        allowed_env: allowed,
        sandbox: None,
        ..bash.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_settings_hide_nothing_and_have_no_sandbox() {
        let bash = process::Settings {
            hidden_env: vec!["DEEPSEEK_KEY".into()],
            ..process::Settings::default()
        };
        let settings = as_the_user(
            &bash,
            ["GITHUB_TOKEN", "SSH_AUTH_SOCK"]
                .into_iter()
                .map(Into::into),
        );
        assert!(settings.sandbox.is_none() && settings.hidden_env.is_empty());
        let vars = [("GITHUB_TOKEN", "ghp_x"), ("SSH_AUTH_SOCK", "/tmp/agent")];
        let hidden =
            process::hidden_vars(&settings, vars.iter().map(|(n, v)| (n.into(), v.into())));
        assert!(hidden.is_empty(), "{hidden:?}");
    }

    #[test]
    fn the_context_says_whose_command_it_was_and_keeps_the_bash_shape() {
        let run = CommandRun {
            command: "echo hi".into(),
            stdout: "hi\n".into(),
            exit_code: Some(0),
            ..CommandRun::default()
        };
        assert_eq!(
            context_text(&run),
            format!("{CONTEXT_PREAMBLE}\n$ echo hi\nhi\n")
        );
    }
}
