//! The gate's answer for file-tool calls that the mode alone does not decide: reads outside
//! the workspace (and its readable roots) or of sensitive places, and writes to protected
//! files. Deny rules apply first; a sensitive read or protected write then asks in every mode
//! but `never`, unless an allow rule names the path itself (not just the tool).

use std::path::Path;

use crate::bus::Mode;
use crate::permissions::Verdict;
use crate::permissions::prefixes::shell_quote;
use crate::permissions::rules::{RuleKind, RuleSet, RuleSource};

/// A read outside the workspace and the readable roots, or of a sensitive place.
pub fn check_read(
    rules: &RuleSet,
    tool: &str,
    path: &Path,
    display: &str,
    sensitive: Option<&str>,
    mode: Mode,
) -> Verdict {
    if let Some(verdict) = by_rules(rules, tool, path, display, sensitive.is_some()) {
        return verdict;
    }
    match (sensitive, mode) {
        (_, Mode::Never) => Verdict::Run,
        (Some(why), _) => Verdict::Ask {
            why: format!("reads {display}: {why}; this asks in every mode but `never`"),
            prefix: exact(tool, path),
        },
        (None, Mode::Auto) => Verdict::Run,
        (None, _) => Verdict::Ask {
            why: format!(
                "reads outside the workspace ({}); add a directory to `permissions.readable` to read there without asking",
                path.display()
            ),
            prefix: format!("{tool} {}/", shell_quote(&dir_of(path))),
        },
    }
}

/// A write to a file that makes programs run code later.
pub fn check_protected_write(
    rules: &RuleSet,
    tool: &str,
    path: &Path,
    display: &str,
    why: &str,
    mode: Mode,
) -> Verdict {
    if let Some(verdict) = by_rules(rules, tool, path, display, true) {
        return verdict;
    }
    if mode == Mode::Never {
        return Verdict::Run;
    }
    Verdict::Ask {
        why: format!("{why}; this asks in every mode but `never`"),
        prefix: exact(tool, path),
    }
}

/// Deny rules deny; ask rules ask; allow rules run — for a guarded place only when the rule
/// names the file itself (approving `write_file`, or `write_file ~/` for notes in the home
/// directory, must not approve `.git/hooks` or `~/.bashrc`).
fn by_rules(
    rules: &RuleSet,
    tool: &str,
    path: &Path,
    display: &str,
    guarded: bool,
) -> Option<Verdict> {
    let rule = rules.evaluate_write(tool, path)?;
    if rule.kind == RuleKind::Allow && guarded {
        let words = [tool.to_string(), path.to_string_lossy().into_owned()];
        let named = rules.rules().iter().any(|r| {
            // A skill's grants never open a secret store or a protected file.
            r.kind == RuleKind::Allow
                && r.source != RuleSource::Skill
                && r.matches(&words, false)
                && names_a_file(&r.prefix)
        });
        return named.then_some(Verdict::Run);
    }
    match rule.kind {
        RuleKind::Deny => Some(Verdict::Deny {
            why: format!("{display}: denied by the rule {rule}"),
        }),
        RuleKind::Ask => Some(Verdict::Ask {
            why: format!("{display}: the rule {rule} asks"),
            prefix: exact(tool, path),
        }),
        RuleKind::Allow => Some(Verdict::Run),
    }
}

fn names_a_file(prefix: &str) -> bool {
    let words: Vec<&str> = prefix.split_whitespace().collect();
    words.len() >= 2 && words.last().is_some_and(|w| !w.ends_with('/'))
}

fn exact(tool: &str, path: &Path) -> String {
    format!("{tool} {}", shell_quote(&path.to_string_lossy()))
}

fn dir_of(path: &Path) -> String {
    path.parent()
        .unwrap_or(path)
        .to_string_lossy()
        .trim_end_matches('/')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::rules::{Rule, RuleSource};

    fn outcome(v: &Verdict) -> &'static str {
        match v {
            Verdict::Run => "run",
            Verdict::Ask { .. } => "ask",
            Verdict::Deny { .. } => "deny",
        }
    }

    #[test]
    fn reads_outside_ask_in_ask_and_auto_edit_and_sensitive_ones_in_every_mode_but_never() {
        let rules = RuleSet::default();
        let path = Path::new("/opt/lib/x.h");
        let modes = [Mode::Ask, Mode::AutoEdit, Mode::Auto, Mode::Never];
        let plain: Vec<_> = modes
            .iter()
            .map(|m| outcome(&check_read(&rules, "read_file", path, "x", None, *m)))
            .collect();
        assert_eq!(plain, ["ask", "ask", "run", "run"]);
        let key = Path::new("/home/u/.ssh/id_rsa");
        let secret: Vec<_> = modes
            .iter()
            .map(|m| outcome(&check_read(&rules, "read_file", key, "k", Some("keys"), *m)))
            .collect();
        assert_eq!(secret, ["ask", "ask", "ask", "run"]);
    }

    #[test]
    fn a_tool_wide_allow_rule_does_not_open_protected_files_but_a_path_rule_does() {
        let mut rules = RuleSet::default();
        rules.add(Rule::new(
            RuleKind::Allow,
            "write_file",
            RuleSource::Session,
        ));
        rules.add(Rule::new(
            RuleKind::Allow,
            "write_file /w/",
            RuleSource::Session,
        ));
        let hook = Path::new("/w/.git/hooks/pre-commit");
        let verdict = check_protected_write(&rules, "write_file", hook, "h", "hook", Mode::Auto);
        let Verdict::Ask { prefix, .. } = verdict else {
            panic!("{verdict:?}")
        };
        assert_eq!(prefix, "write_file /w/.git/hooks/pre-commit");
        rules.add(Rule::new(RuleKind::Allow, &prefix, RuleSource::Session));
        assert_eq!(
            check_protected_write(&rules, "write_file", hook, "h", "hook", Mode::Auto),
            Verdict::Run
        );
        rules.add(Rule::new(
            RuleKind::Deny,
            "write_file /w/.git/",
            RuleSource::Config,
        ));
        assert_eq!(
            outcome(&check_protected_write(
                &rules,
                "write_file",
                hook,
                "h",
                "hook",
                Mode::Never
            )),
            "deny"
        );
    }
}
