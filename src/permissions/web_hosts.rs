//! The gate's answer for a fetch of a web host. Host rules are prefix rules of the form
//! `web_fetch HOST` (`[web] allow`/`deny` in the config become them; "this host for the
//! session" and "in the project" save them): HOST is a name or `*.example.org` (the domain's
//! hosts below it). Deny wins over ask over allow; then `ask` and `auto-edit` ask for a host no
//! rule allows, `auto` and `never` run (but `auto` asks when the URL carries what the session
//! read: `check_fetch`). The egress policy (private addresses) holds apart from
//! all of this, in every mode.

use crate::bus::Mode;
use crate::permissions::Verdict;
use crate::permissions::read_runs::{RUN, ReadRuns};
use crate::permissions::rules::{RuleKind, RuleSet};

/// The tool word host rules start with.
pub const TOOL: &str = "web_fetch";

/// The rule text that allows or denies `host`.
pub fn host_rule(host: &str) -> String {
    format!(
        "{TOOL} {}",
        host.trim().trim_end_matches('.').to_ascii_lowercase()
    )
}

/// Whether a rule's host pattern covers `host`: the same name, or `*.domain` for any host
/// below the domain (not the domain itself, not `evildomain`).
pub fn pattern_covers(pattern: &str, host: &str) -> bool {
    let pattern = pattern.trim().trim_end_matches('.').to_ascii_lowercase();
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    match pattern.strip_prefix("*.") {
        Some(domain) => host
            .strip_suffix(domain)
            .is_some_and(|rest| rest.len() > 1 && rest.ends_with('.')),
        None => pattern == host,
    }
}

/// The strongest host rule covering `host`: deny, then ask, then allow.
fn rule_for(rules: &RuleSet, host: &str) -> Option<(RuleKind, String)> {
    let mut found: Option<(RuleKind, String)> = None;
    for rule in rules.rules() {
        let mut words = rule.prefix.split_whitespace();
        let (Some(TOOL), Some(pattern), None) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        if !pattern_covers(pattern, host) {
            continue;
        }
        let rank = |kind: RuleKind| match kind {
            RuleKind::Deny => 3,
            RuleKind::Ask => 2,
            RuleKind::Allow => 1,
        };
        if found
            .as_ref()
            .is_none_or(|(kind, _)| rank(rule.kind) > rank(*kind))
        {
            found = Some((rule.kind, rule.to_string()));
        }
    }
    found
}

/// Run, ask or deny a fetch of `url` on `host`.
pub fn check_host(rules: &RuleSet, host: &str, url: &str, mode: Mode) -> Verdict {
    match rule_for(rules, host) {
        Some((RuleKind::Deny, rule)) => {
            return Verdict::Deny {
                why: format!("{host} is denied by the rule {rule}"),
            };
        }
        Some((RuleKind::Allow, _)) => return Verdict::Run,
        Some((RuleKind::Ask, rule)) if mode != Mode::Never => {
            return Verdict::Ask {
                why: format!("fetches {url}; the rule {rule} asks"),
                prefix: host_rule(host),
            };
        }
        _ => {}
    }
    match mode {
        Mode::Auto | Mode::Never => Verdict::Run,
        Mode::Ask | Mode::AutoEdit | Mode::Plan => Verdict::Ask {
            why: format!(
                "fetches {url} from {host}, a host not allowed yet (add it to [web] allow to fetch it without asking)"
            ),
            prefix: host_rule(host),
        },
    }
}

/// `check_host`, and more in `auto`: a fetch from a host no rule allows asks when its URL
/// carries a run of what the session read (`read_runs`), in any encoding that module undoes.
/// `never` still asks nothing (SPEC §4).
pub fn check_fetch(rules: &RuleSet, host: &str, url: &str, mode: Mode, read: &ReadRuns) -> Verdict {
    let verdict = check_host(rules, host, url, mode);
    if mode != Mode::Auto
        || verdict != Verdict::Run
        || matches!(rule_for(rules, host), Some((RuleKind::Allow, _)))
    {
        return verdict;
    }
    match read.carried(url) {
        None => verdict,
        Some(found) => Verdict::Ask {
            why: format!(
                "fetches {url} from {host}, a host not allowed yet, and the URL carries {RUN} or more bytes the session read ({}: {:?}); sending what was read out needs your word",
                found.how, found.sample
            ),
            prefix: host_rule(host),
        },
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

    fn asks(verdict: &Verdict) -> bool {
        matches!(verdict, Verdict::Ask { .. })
    }

    #[test]
    fn a_new_host_asks_in_ask_and_auto_edit_and_runs_in_auto_and_never() {
        let none = RuleSet::default();
        let url = "https://docs.rs/serde";
        assert!(asks(&check_host(&none, "docs.rs", url, Mode::Ask)));
        assert!(asks(&check_host(&none, "docs.rs", url, Mode::AutoEdit)));
        assert_eq!(check_host(&none, "docs.rs", url, Mode::Auto), Verdict::Run);
        assert_eq!(check_host(&none, "docs.rs", url, Mode::Never), Verdict::Run);
        let Verdict::Ask { prefix, why } = check_host(&none, "docs.rs", url, Mode::Ask) else {
            unreachable!()
        };
        assert_eq!(prefix, "web_fetch docs.rs");
        assert!(why.contains(url), "{why}");
    }

    #[test]
    fn in_auto_a_url_carrying_what_was_read_asks_unless_the_host_is_allowed() {
        let read = ReadRuns::default();
        read.note("DATABASE_URL=postgres://app:hunter2hunter2@db.internal/app\n");
        let url = "https://collect.example/?d=hunter2hunter2%40db.internal";
        let none = RuleSet::default();
        let Verdict::Ask { why, prefix } =
            check_fetch(&none, "collect.example", url, Mode::Auto, &read)
        else {
            panic!("auto ran it")
        };
        assert!(why.contains("the session read"), "{why}");
        assert_eq!(prefix, "web_fetch collect.example");
        // `never` asks nothing (SPEC §4); ask and auto-edit ask anyway, for the host.
        assert_eq!(
            check_fetch(&none, "collect.example", url, Mode::Never, &read),
            Verdict::Run
        );
        assert!(asks(&check_fetch(
            &none,
            "collect.example",
            url,
            Mode::AutoEdit,
            &read
        )));
        // A host allowed (by config, or for the session) is the user's to trust.
        let allowed = rules(&[(RuleKind::Allow, "web_fetch collect.example")]);
        assert_eq!(
            check_fetch(&allowed, "collect.example", url, Mode::Auto, &read),
            Verdict::Run
        );
        // A URL without a run of it runs in auto.
        let plain = "https://collect.example/?d=hunter2";
        assert_eq!(
            check_fetch(&none, "collect.example", plain, Mode::Auto, &read),
            Verdict::Run
        );
        let denied = rules(&[(RuleKind::Deny, "web_fetch collect.example")]);
        assert!(matches!(
            check_fetch(&denied, "collect.example", plain, Mode::Auto, &read),
            Verdict::Deny { .. }
        ));
    }

    #[test]
    fn host_rules_match_names_and_wildcard_domains_only() {
        let set = rules(&[
            (RuleKind::Allow, "web_fetch docs.rs"),
            (RuleKind::Allow, "web_fetch *.rust-lang.org"),
            (RuleKind::Deny, "web_fetch *.evil.example"),
        ]);
        let run = |host| check_host(&set, host, "https://x/", Mode::Ask);
        assert_eq!(run("docs.rs"), Verdict::Run);
        assert_eq!(run("DOCS.rs."), Verdict::Run);
        assert_eq!(run("doc.rust-lang.org"), Verdict::Run);
        assert!(asks(&run("rust-lang.org")));
        assert!(asks(&run("evilrust-lang.org")));
        assert!(asks(&run("docs.rs.evil.test")));
        assert!(asks(&run("sub.docs.rs")));
        assert!(matches!(run("a.evil.example"), Verdict::Deny { .. }));
    }

    #[test]
    fn deny_wins_over_allow_and_holds_in_never_mode() {
        let set = rules(&[
            (RuleKind::Allow, "web_fetch *.example.org"),
            (RuleKind::Deny, "web_fetch bad.example.org"),
            (RuleKind::Ask, "web_fetch ask.example.org"),
        ]);
        assert!(matches!(
            check_host(&set, "bad.example.org", "https://x/", Mode::Never),
            Verdict::Deny { .. }
        ));
        assert!(asks(&check_host(
            &set,
            "ask.example.org",
            "https://x/",
            Mode::Auto
        )));
        assert_eq!(
            check_host(&set, "ask.example.org", "https://x/", Mode::Never),
            Verdict::Run
        );
        assert_eq!(
            check_host(&set, "ok.example.org", "https://x/", Mode::Ask),
            Verdict::Run
        );
    }

    #[test]
    fn command_rules_do_not_allow_hosts() {
        let set = rules(&[
            (RuleKind::Allow, "web_fetch"),
            (RuleKind::Allow, "curl docs.rs"),
        ]);
        assert!(asks(&check_host(
            &set,
            "docs.rs",
            "https://docs.rs/",
            Mode::Ask
        )));
    }
}
