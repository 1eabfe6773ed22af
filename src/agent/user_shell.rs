//! The user's own shell: `!cmd` and `!!cmd` typed in the input. The user typed the command, so
//! it runs with the user's authority: no gate, no sandbox, the user's whole environment (the
//! secrets cairn keeps from the model's commands included), no timeout (Esc stops it). It is
//! still run like every command: `bash -c` in the workspace, in its own session and process
//! group, stdin from /dev/null, and a stop ends its whole group and whatever it left behind.
//! What the model is given of it is capped head and tail like a `bash` result, and every known
//! secret is redacted from it (and from what the screen and the log get).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::executor::{self, CommandSpec, ForegroundEnd, Grant, OnTimeout};
use super::{BashSettings, CommandRun, TailSink, ToolEnv, ToolError};

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
    let spec = CommandSpec {
        command,
        cwd: &env.workspace,
        settings: &settings,
        grant: Grant::Unsandboxed,
    };
    let outcome = executor::run(&spec, LIFETIME, cancel, tail, OnTimeout::Kill)
        .await
        .map_err(|err| ToolError::io("could not start bash", err))?;
    let run = match outcome {
        ForegroundEnd::Finished(finished) => {
            env.jobs.keep_spills(finished.capture.spill_paths());
            super::bash::command_run(command.to_string(), &finished, LIFETIME.as_millis() as u64)
        }
        // `OnTimeout::Kill` never hands a command back; were it to, it is ended here.
        ForegroundEnd::Promoted { spawned, .. } => {
            spawned.group.end(settings.kill_grace).await;
            CommandRun {
                command: command.to_string(),
                cancelled: true,
                ..CommandRun::default()
            }
        }
    };
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
    bash: &BashSettings,
    names: impl Iterator<Item = std::ffi::OsString>,
) -> BashSettings {
    let mut allowed: Vec<String> = names.filter_map(|name| name.into_string().ok()).collect();
    allowed.extend(crate::secrets::stashed().into_iter().map(|(name, _)| name));
    BashSettings {
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
        let bash = BashSettings {
            hidden_env: vec!["DEEPSEEK_KEY".into()],
            ..BashSettings::default()
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
            executor::hidden_vars(&settings, vars.iter().map(|(n, v)| (n.into(), v.into())));
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
