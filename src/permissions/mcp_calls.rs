//! The gate's answer for a call of an MCP server's tool (SPEC §11.3). Rules name the tool as
//! the model sees it, `mcp__server__tool`, or every tool of a server, `mcp__server__*`; deny
//! wins over ask over allow. Without a rule, `ask` and `auto-edit` ask, except that
//! `auto-edit` runs a tool annotated read-only on a server of the user's own config (the
//! caller passes `read_only` only then); `auto` and `never` run. Headless runs deny what
//! would ask (the agent's rule for every held call).

use crate::bus::Mode;
use crate::permissions::Verdict;
use crate::permissions::rules::{RuleKind, RuleSet};

/// Whether a rule's text covers the tool `name` of `server`: the name itself, or the server's
/// wildcard `mcp__<server>__*` (server as in the tool names, sanitised).
pub fn rule_covers(rule: &str, name: &str) -> bool {
    let rule = rule.trim();
    if rule == name {
        return true;
    }
    match rule.strip_suffix('*') {
        Some(prefix) => {
            prefix.len() > "mcp____".len()
                && prefix.starts_with("mcp__")
                && prefix.ends_with("__")
                && name.starts_with(prefix)
        }
        None => false,
    }
}

/// Run, ask or deny the call of `name` (`mcp__server__tool`) on `server`.
pub fn check_call(
    rules: &RuleSet,
    server: &str,
    name: &str,
    read_only: bool,
    mode: Mode,
) -> Verdict {
    let mut strongest: Option<(RuleKind, String)> = None;
    let rank = |kind: RuleKind| match kind {
        RuleKind::Deny => 3,
        RuleKind::Ask => 2,
        RuleKind::Allow => 1,
    };
    for rule in rules.rules() {
        if !rule_covers(&rule.prefix, name) {
            continue;
        }
        if strongest
            .as_ref()
            .is_none_or(|(kind, _)| rank(rule.kind) > rank(*kind))
        {
            strongest = Some((rule.kind, rule.to_string()));
        }
    }
    match strongest {
        Some((RuleKind::Deny, rule)) => {
            return Verdict::Deny {
                why: format!("{name} is denied by the rule {rule}"),
            };
        }
        Some((RuleKind::Allow, _)) => return Verdict::Run,
        Some((RuleKind::Ask, rule)) if mode != Mode::Never => {
            return Verdict::Ask {
                why: format!("calls {name} of the MCP server {server}; the rule {rule} asks"),
                prefix: name.to_string(),
            };
        }
        _ => {}
    }
    match mode {
        Mode::Auto | Mode::Never => Verdict::Run,
        Mode::AutoEdit if read_only => Verdict::Run,
        Mode::Ask | Mode::AutoEdit | Mode::Plan => Verdict::Ask {
            why: format!(
                "calls {name} of the MCP server {server} (allow it with the rule \"{name}\", or every tool of the server with \"{}\")",
                crate::permissions::mcp_calls::wildcard_of(name, server)
            ),
            prefix: name.to_string(),
        },
    }
}

/// The wildcard rule for the server of `name`: `mcp__<server>__*` as the name spells it.
fn wildcard_of(name: &str, server: &str) -> String {
    let rest = name.strip_prefix("mcp__").unwrap_or(name);
    match rest.find("__") {
        Some(end) => format!("mcp__{}__*", &rest[..end]),
        None => format!("mcp__{server}__*"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::rules::{Rule, RuleSource};

    fn rules(list: &[(RuleKind, &str)]) -> RuleSet {
        let mut set = RuleSet::default();
        for (kind, prefix) in list {
            set.add(Rule::new(*kind, prefix, RuleSource::Config));
        }
        set
    }

    #[test]
    fn an_unannotated_tool_asks_in_ask_and_auto_edit_and_runs_in_auto_and_never() {
        let none = RuleSet::default();
        let name = "mcp__gh__create_issue";
        for mode in [Mode::Ask, Mode::AutoEdit] {
            let verdict = check_call(&none, "gh", name, false, mode);
            let Verdict::Ask { prefix, why } = verdict else {
                panic!("{mode:?} did not ask");
            };
            assert_eq!(prefix, name);
            assert!(why.contains("mcp__gh__*"), "{why}");
        }
        assert_eq!(
            check_call(&none, "gh", name, false, Mode::Auto),
            Verdict::Run
        );
        assert_eq!(
            check_call(&none, "gh", name, false, Mode::Never),
            Verdict::Run
        );
        // A trusted read-only hint runs in auto-edit, not in ask.
        assert_eq!(
            check_call(&none, "gh", name, true, Mode::AutoEdit),
            Verdict::Run
        );
        assert!(matches!(
            check_call(&none, "gh", name, true, Mode::Ask),
            Verdict::Ask { .. }
        ));
    }

    #[test]
    fn rules_name_the_tool_or_every_tool_of_the_server() {
        let name = "mcp__gh__create_issue";
        let exact = rules(&[(RuleKind::Allow, name)]);
        assert_eq!(
            check_call(&exact, "gh", name, false, Mode::Ask),
            Verdict::Run
        );
        let server = rules(&[(RuleKind::Allow, "mcp__gh__*")]);
        assert_eq!(
            check_call(&server, "gh", name, false, Mode::Ask),
            Verdict::Run
        );
        // Not another server whose name starts the same.
        assert!(matches!(
            check_call(&server, "ghx", "mcp__ghx__create_issue", false, Mode::Ask),
            Verdict::Ask { .. }
        ));
        let denied = rules(&[(RuleKind::Allow, "mcp__gh__*"), (RuleKind::Deny, name)]);
        assert!(matches!(
            check_call(&denied, "gh", name, false, Mode::Never),
            Verdict::Deny { .. }
        ));
        assert!(!rule_covers("mcp__*", name), "a wildcard names one server");
    }
}
