//! `cairn hooks list|test|trust`: the hooks of the current directory as a session would load
//! them (the user's, the project's trusted ones, and those waiting for trust); running the
//! hooks of one event on a sample input, exactly as a session runs them, and printing what
//! they decided; trusting the project's hooks as they are now.

use std::io::IsTerminal;
use std::sync::Arc;

use color_eyre::eyre::{Result, WrapErr, eyre};
use tokio_util::sync::CancellationToken;

use crate::cli::{HooksCommand, UsageError};
use crate::dirs::Dirs;
use crate::exec::status;
use crate::hooks::{Context, Event, Hooks, Outcome, Subject};
use crate::trust::{Judged, ProcessTrust};

/// Runs one `cairn hooks` command; its output and exit status.
pub async fn hooks(dirs: &Dirs, command: HooksCommand) -> Result<(String, i32)> {
    let workspace = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .wrap_err("finding the current directory")?;
    let config = super::tools_config(dirs, None)?;
    let network = crate::launch::network::network_stack(&config.network)?;
    let mut notices = Vec::new();
    let confined =
        crate::launch::confined_tools(dirs, &config, &workspace, &network, &mut notices)?;
    let run = crate::hooks::RunSettings {
        workspace: workspace.clone(),
        process: confined.env.bash.clone(),
    };
    let trust = ProcessTrust::new(dirs.data(), &workspace);
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let loaded = crate::hooks::load(
        &config.hooks,
        &config.config_path,
        home.as_deref(),
        run,
        trust,
    )
    .map_err(|err| UsageError(err.to_string()))?;
    match command {
        HooksCommand::List => Ok((list(&loaded.hooks, &loaded.untrusted), status::OK)),
        HooksCommand::Test { event, tool, args } => {
            let event = Event::parse(&event).ok_or_else(|| {
                UsageError(format!(
                    "unknown hook event `{event}`; the events are: {}",
                    Event::ALL.map(Event::as_str).join(", ")
                ))
            })?;
            let subject = sample(event, tool, args.as_deref())?;
            let cx = Context {
                session_id: "hooks-test".into(),
                workspace,
                mode: config.mode,
                log_path: std::path::PathBuf::new(),
            };
            let hooks = Arc::new(loaded.hooks);
            let outcome = hooks
                .run(event, &cx, &subject, &CancellationToken::new())
                .await;
            Ok((report(event, &outcome, &loaded.untrusted), status::OK))
        }
        HooksCommand::Trust { yes } => trust_all(dirs, &workspace, &loaded.untrusted, yes),
    }
}

fn list(hooks: &Hooks, untrusted: &[Judged]) -> String {
    let mut out = String::new();
    if hooks.hooks.is_empty() {
        return "no hooks are configured (see `[[hooks.pre_tool]]` in the README)\n".into();
    }
    for hook in hooks.hooks.iter().filter(|h| !h.awaiting_trust) {
        let trust = if hook.origin.project {
            " [trusted]"
        } else {
            ""
        };
        out.push_str(&format!("{}{trust}\n", hook.describe()));
    }
    for judged in untrusted {
        out.push_str(&format!("{} (does not run)\n", judged.listing()));
    }
    out.push_str(&format!("max_stop_blocks = {}\n", hooks.max_stop_blocks));
    out
}

/// The sample input of `hooks test`.
fn sample(event: Event, tool: Option<String>, args: Option<&str>) -> Result<Subject> {
    Ok(match event {
        Event::PreTool | Event::PostTool => {
            let arguments = match args {
                Some(text) => serde_json::from_str(text)
                    .map_err(|err| UsageError(format!("--args is not valid JSON: {err}")))?,
                None => serde_json::json!({"command": "ls"}),
            };
            Subject::Tool {
                name: tool.unwrap_or_else(|| "bash".into()),
                call_id: "hooks-test".into(),
                arguments,
                result: (event == Event::PostTool).then(|| "(a sample result)".to_string()),
                is_error: false,
            }
        }
        Event::UserPrompt => Subject::Prompt {
            text: args.unwrap_or("a sample prompt").to_string(),
        },
        Event::Stop => Subject::Stop { blocks: 0 },
        Event::SessionStart => Subject::SessionStart {
            source: "startup".into(),
        },
        Event::PreCompact => Subject::PreCompact {
            trigger: "manual".into(),
        },
        Event::Notification => Subject::Notification {
            message: args.unwrap_or("a sample notification").to_string(),
        },
    })
}

fn report(event: Event, outcome: &Outcome, untrusted: &[Judged]) -> String {
    let mut out = String::new();
    if outcome.runs.is_empty() {
        out.push_str(&format!("no hook runs for {event} on this input\n"));
    }
    for run in &outcome.runs {
        let why = run
            .failure
            .as_deref()
            .or(run.reason.as_deref())
            .map(|w| format!(": {w}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "{}: {}{why} ({} ms)\n",
            run.hook, run.decision, run.millis
        ));
    }
    let notes = outcome.notes.iter().map(crate::bus::HookNote::text);
    for notice in notes.chain(outcome.notices.iter().cloned()) {
        out.push_str(&format!("notice: {notice}\n"));
    }
    let decision = match (&outcome.blocked, &outcome.ask) {
        (Some(blocked), _) => format!("deny ({})", blocked.model_text()),
        (None, Some((hook, why))) => format!("ask (hook {hook}: {why})"),
        (None, None) if outcome.allowed() => "allow".into(),
        (None, None) => "no opinion".into(),
    };
    out.push_str(&format!("decision: {decision}\n"));
    if let Some((hook, input)) = &outcome.updated_input {
        out.push_str(&format!("updated input (hook {hook}): {input}\n"));
    }
    let context = outcome.context_text();
    if !context.is_empty() {
        out.push_str(&format!("additional context:\n{context}\n"));
    }
    if !untrusted.is_empty() {
        out.push_str(&format!(
            "{} project hook(s) are not trusted and did not run (`cairn hooks trust`)\n",
            untrusted.len()
        ));
    }
    out
}

fn trust_all(
    dirs: &Dirs,
    workspace: &std::path::Path,
    untrusted: &[Judged],
    yes: bool,
) -> Result<(String, i32)> {
    if untrusted.is_empty() {
        return Ok((
            "every project hook is trusted as it is (or there are none)\n".into(),
            status::OK,
        ));
    }
    let listing: Vec<String> = untrusted.iter().map(Judged::listing).collect();
    let mut out = format!("the project's hooks:\n  {}\n", listing.join("\n  "));
    if !yes {
        if !std::io::stdin().is_terminal() {
            return Err(UsageError(format!(
                "{out}pass --yes to trust them (standard input is not a terminal)"
            ))
            .into());
        }
        #[allow(clippy::print_stdout)]
        {
            print!("{out}trust them to run in this workspace? [y/N] ");
        }
        std::io::Write::flush(&mut std::io::stdout()).ok();
        let mut answer = String::new();
        std::io::stdin()
            .read_line(&mut answer)
            .wrap_err("reading the answer")?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            return Ok(("not trusted\n".into(), status::OK));
        }
        out.clear();
    }
    let trust = ProcessTrust::new(dirs.data(), workspace);
    for judged in untrusted {
        trust.trust(judged).map_err(|err| eyre!("{err}"))?;
    }
    out.push_str(&format!(
        "trusted {} hook(s); a change to their config or scripts asks again\n",
        untrusted.len()
    ));
    Ok((out, status::OK))
}
