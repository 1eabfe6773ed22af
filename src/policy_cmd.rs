//! `cairn policy check [--mode MODE] [--json] -- COMMAND...`: would this command run, be
//! held or be denied, and why. `main` loads the rules and prints what `run` returns.

use std::path::Path;

use crate::bus::Mode;
use crate::permissions::classify::Places;
use crate::permissions::policy::{PolicyDecision, PolicyGate, PolicySettings};
use crate::permissions::prefixes::shell_quote;
use crate::permissions::rules::RuleSet;

/// The command line the words stand for: one word is a shell string as typed
/// (`cairn policy check -- 'git status; rm -rf /'`); several are an argument vector, quoted
/// where needed (`cairn policy check -- grep -r "rm -rf" .`).
pub fn command_line(command_words: &[String]) -> String {
    match command_words {
        [one] => one.clone(),
        many => many
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// The report and exit status (always 0: a held or denied command is an answer, not a
/// failure). With `json`, exactly one object:
/// `{"class": …, "decision": …, "reason": …, "rule": … or null}`, plus `"protected": …` when
/// the command writes a protected path.
pub fn run(
    command_words: &[String],
    mode: Mode,
    json: bool,
    rules: RuleSet,
    workspace: &Path,
    dirs: &crate::dirs::Dirs,
) -> (String, i32) {
    let gate = PolicyGate::new(PolicySettings {
        rules,
        workspace: workspace.to_path_buf(),
        sandbox: None,
        places: Places::with_dirs(dirs),
    });
    let command = command_line(command_words);
    let decision = gate.explain(&command, mode);
    let output = if json {
        to_json(&decision)
    } else {
        to_text(&command, mode, &decision)
    };
    (output, 0)
}

fn to_json(decision: &PolicyDecision) -> String {
    let mut value = serde_json::json!({
        "class": decision.class.as_str(),
        "decision": decision.decision.as_str(),
        "reason": decision.reason,
        "rule": decision.rule,
    });
    if let (Some(protected), Some(object)) = (&decision.protected, value.as_object_mut()) {
        object.insert("protected".into(), protected.clone().into());
    }
    format!("{value}\n")
}

fn to_text(command: &str, mode: Mode, decision: &PolicyDecision) -> String {
    let rule = decision
        .rule
        .as_deref()
        .unwrap_or("none (the mode decides)");
    let mut out = format!(
        "command:  {command}\ndecision: {}\nclass:    {}\nreason:   {}\nrule:     {rule}\nmode:     {mode}\n",
        decision.decision.as_str(),
        decision.class.as_str(),
        decision.reason,
    );
    if let Some(protected) = &decision.protected {
        out.push_str(&format!(
            "protected: {protected} (asks in every mode but `never`)\n"
        ));
    }
    if !decision.prefix.is_empty() {
        out.push_str(&format!(
            "approve for the session would allow: {}\n",
            decision.prefix
        ));
    }
    out
}
