//! A held call as `session/request_permission`: the options mapped from the answers the
//! engine offers for it (`DecisionKind::offered`, carried by `AwaitingApproval`), and the
//! editor's choice mapped back to the `Decision` the gate takes, as the TUI's keys are.
//!
//! "Reject always" is a session rule of this front end: a later call held with the same
//! prefix is denied without asking the editor again (the engine's gate keeps only allow rules
//! for a session).

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome,
};

use crate::bus::{Decision, DecisionKind, Mode};

/// The option ids, stable so an editor (and the tests) can tell them apart.
pub mod ids {
    pub const ALLOW_ONCE: &str = "allow_once";
    pub const ALLOW_UNSANDBOXED: &str = "allow_once_unsandboxed";
    pub const ALLOW_SESSION: &str = "allow_always";
    pub const ALLOW_PROJECT: &str = "allow_always_project";
    pub const REJECT_ONCE: &str = "reject_once";
    pub const REJECT_ALWAYS: &str = "reject_always";
    pub const PLAN_AUTO_EDIT: &str = "plan_auto_edit";
    pub const PLAN_AUTO: &str = "plan_auto";
}

/// What a held call offers, as the prompt's options.
pub fn options(offered: &[DecisionKind], prefix: &str) -> Vec<PermissionOption> {
    use PermissionOptionKind::{AllowAlways, AllowOnce, RejectAlways, RejectOnce};
    let mut out = Vec::new();
    if offered.contains(&DecisionKind::ApprovePlan) {
        out.push(PermissionOption::new(
            ids::PLAN_AUTO_EDIT,
            "Yes, and auto-accept edits",
            AllowOnce,
        ));
        out.push(PermissionOption::new(
            ids::PLAN_AUTO,
            "Yes, and run without asking (auto)",
            AllowAlways,
        ));
        out.push(PermissionOption::new(
            ids::REJECT_ONCE,
            "No, keep planning",
            RejectOnce,
        ));
        return out;
    }
    if offered.contains(&DecisionKind::Approve) {
        out.push(PermissionOption::new(
            ids::ALLOW_ONCE,
            "Allow once",
            AllowOnce,
        ));
    }
    if offered.contains(&DecisionKind::ApproveForSession) {
        out.push(PermissionOption::new(
            ids::ALLOW_SESSION,
            format!("Always allow `{prefix}` (this session)"),
            AllowAlways,
        ));
    }
    if offered.contains(&DecisionKind::ApproveForProject) {
        out.push(PermissionOption::new(
            ids::ALLOW_PROJECT,
            format!("Always allow `{prefix}` in this project"),
            AllowAlways,
        ));
    }
    if offered.contains(&DecisionKind::ApproveUnsandboxed) {
        out.push(PermissionOption::new(
            ids::ALLOW_UNSANDBOXED,
            "Allow once, outside the sandbox",
            AllowOnce,
        ));
    }
    if offered.contains(&DecisionKind::Deny) {
        out.push(PermissionOption::new(
            ids::REJECT_ONCE,
            "Reject",
            RejectOnce,
        ));
        // An "always" is offered exactly where an allow rule would be: never for a
        // dangerous command, never without a prefix.
        if offered.contains(&DecisionKind::ApproveForSession) {
            out.push(PermissionOption::new(
                ids::REJECT_ALWAYS,
                format!("Always reject `{prefix}` (this session)"),
                RejectAlways,
            ));
        }
    }
    out
}

/// What the editor's answer means for the gate; `true` with it when it also asks for the
/// session's reject rule for `prefix`. A cancelled request (or an unknown option) denies.
pub fn decision(outcome: &RequestPermissionOutcome, prefix: &str) -> (Decision, bool) {
    let RequestPermissionOutcome::Selected(selected) = outcome else {
        return (Decision::Deny { message: None }, false);
    };
    let decision = match selected.option_id.0.as_ref() {
        ids::ALLOW_ONCE => Decision::Approve,
        ids::ALLOW_UNSANDBOXED => Decision::ApproveUnsandboxed,
        ids::ALLOW_SESSION => Decision::ApproveForSession {
            prefix: prefix.to_string(),
        },
        ids::ALLOW_PROJECT => Decision::ApproveForProject {
            prefix: prefix.to_string(),
        },
        ids::PLAN_AUTO_EDIT => Decision::ApprovePlan {
            mode: Mode::AutoEdit,
        },
        ids::PLAN_AUTO => Decision::ApprovePlan { mode: Mode::Auto },
        ids::REJECT_ALWAYS => return (rejected(), true),
        _ => rejected(),
    };
    (decision, false)
}

fn rejected() -> Decision {
    Decision::Deny {
        message: Some("the user rejected this call in the editor".into()),
    }
}

/// Whether a session reject rule covers a held call's prefix: the same prefix, or one that
/// starts with the rule's words.
pub fn rejected_by(rules: &[String], prefix: &str) -> bool {
    let prefix = prefix.trim();
    !prefix.is_empty()
        && rules.iter().any(|rule| {
            prefix == rule
                || prefix
                    .strip_prefix(rule.as_str())
                    .is_some_and(|rest| rest.starts_with(' '))
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use agent_client_protocol::v1::schema::SelectedPermissionOutcome;

    fn picked(id: &'static str) -> RequestPermissionOutcome {
        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id))
    }

    #[test]
    fn a_dangerous_command_offers_no_always() {
        let offered = DecisionKind::offered("bash", "rm", true, false);
        let kinds: Vec<_> = options(&offered, "rm").iter().map(|o| o.kind).collect();
        assert_eq!(
            kinds,
            vec![
                PermissionOptionKind::AllowOnce,
                PermissionOptionKind::RejectOnce
            ]
        );
        let offered = DecisionKind::offered("bash", "touch", false, false);
        let ids: Vec<String> = options(&offered, "touch")
            .iter()
            .map(|o| o.option_id.0.to_string())
            .collect();
        assert_eq!(
            ids,
            [
                ids::ALLOW_ONCE,
                ids::ALLOW_SESSION,
                ids::ALLOW_PROJECT,
                ids::REJECT_ONCE,
                ids::REJECT_ALWAYS
            ]
        );
    }

    #[test]
    fn answers_become_decisions_and_cancelled_denies() {
        assert_eq!(
            decision(&picked(ids::ALLOW_SESSION), "touch").0,
            Decision::ApproveForSession {
                prefix: "touch".into()
            }
        );
        assert!(decision(&picked(ids::REJECT_ALWAYS), "touch").1);
        assert!(matches!(
            decision(&RequestPermissionOutcome::Cancelled, "x").0,
            Decision::Deny { .. }
        ));
        assert!(rejected_by(&["git push".into()], "git push origin"));
        assert!(!rejected_by(&["git push".into()], "git pushx"));
        assert!(!rejected_by(&["git push".into()], "git"));
    }
}
