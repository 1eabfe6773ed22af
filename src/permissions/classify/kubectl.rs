//! kubectl: which of its verbs only read (the cluster and the local files), and the danger
//! of the rest, which change a cluster no sandbox can put back.

use crate::permissions::classify::Class;
use crate::permissions::classify::Word;
use crate::permissions::classify::commands::{CommandJudged, positionals};

/// kubectl verbs that only read.
const KUBECTL_READS: &[&str] = &[
    "get",
    "describe",
    "logs",
    "version",
    "explain",
    "api-resources",
    "api-versions",
    "cluster-info",
    "top",
    "auth",
    "config",
    "diff",
    "events",
    "wait",
    "completion",
    "plugin",
    "options",
    "kustomize",
];

/// kubectl's options that take a value, so that the verb is the first positional.
const KUBECTL_WITH_VALUE: &[&str] = &[
    "-n",
    "--namespace",
    "--context",
    "--cluster",
    "--user",
    "-s",
    "--server",
    "--token",
    "--kubeconfig",
    "-l",
    "--selector",
    "-o",
    "--output",
    "-f",
    "--filename",
    "-c",
    "--container",
    "--as",
    "--as-group",
    "--request-timeout",
];

/// The verb of a kubectl command that only reads (the cluster and the local files), or None.
/// The one list of kubectl's reads: the classifier's read-only verdict and the danger check
/// both ask it. A verb with sub-verbs that write (`config set-context`, `auth reconcile`,
/// `cluster-info dump`, `rollout restart`) reads only with a reading sub-verb.
pub(crate) fn kubectl_read_verb(args: &[Word]) -> Option<&str> {
    let words = positionals(args, KUBECTL_WITH_VALUE);
    let verb = words.first()?.text.as_str();
    let sub = words.get(1).map(|w| w.text.as_str());
    let reads = match verb {
        "config" => matches!(
            sub,
            Some("view" | "current-context" | "get-contexts" | "get-clusters" | "get-users")
        ),
        "auth" => matches!(sub, Some("can-i" | "whoami")),
        "cluster-info" => sub != Some("dump"),
        "plugin" => sub == Some("list"),
        "rollout" => matches!(sub, Some("status" | "history")),
        // Exec and function plugins run only when enabled by a flag.
        "kustomize" => !args.iter().any(|a| a.text.starts_with("--enable")),
        verb => KUBECTL_READS.contains(&verb),
    };
    reads.then_some(verb)
}

pub(super) fn kubectl_danger(name: &str, args: &[Word]) -> Option<CommandJudged> {
    let words = positionals(args, KUBECTL_WITH_VALUE);
    let verb = words.first()?.text.as_str();
    // `kubectl config …` changes the local kubeconfig, not a cluster: not a danger.
    if verb == "config" || kubectl_read_verb(args).is_some() {
        return None;
    }
    Some(CommandJudged::Own(
        Class::Dangerous,
        format!("changes a Kubernetes cluster ({name} {verb})"),
    ))
}
