//! Developer tools judged by subcommand: cargo, npm and friends, go, pip, docker, kubectl
//! (git has its own module). Publishing and deploying live in `outward`.

use crate::permissions::classify::commands::{CommandJudged, has_short, positionals};
use crate::permissions::classify::{Class, Walker, Word};

use CommandJudged::Own;

impl Walker {
    pub(crate) fn judge_dev(&mut self, name: &str, args: &[Word]) -> Option<CommandJudged> {
        Some(match name {
            "git" => self.git(args),
            "cargo" => subcommand(
                name,
                args,
                &[
                    "metadata",
                    "tree",
                    "search",
                    "locate-project",
                    "pkgid",
                    "verify-project",
                    "read-manifest",
                    "version",
                    "help",
                ],
            ),
            "npm" | "pnpm" | "yarn" => subcommand(
                name,
                args,
                &[
                    "ls", "list", "view", "info", "outdated", "help", "why", "explain", "root",
                    "prefix", "bin", "audit", "search",
                ],
            ),
            "go" => match args.first().map(|a| a.text.as_str()) {
                Some("env") if has_short(args, 'w') || has_short(args, 'u') => {
                    Own(Class::Mutating, "changes go settings (go env -w)".into())
                }
                _ => subcommand(name, args, &["version", "env", "list", "doc", "help"]),
            },
            "pip" | "pip3" | "uv" if args.first().is_some_and(|a| a.text == "pip") => subcommand(
                name,
                &args[1..],
                &["list", "show", "freeze", "check", "help"],
            ),
            "pip" | "pip3" => subcommand(
                name,
                args,
                &["list", "show", "freeze", "check", "help", "index"],
            ),
            "rustup" => subcommand(name, args, &["show", "which", "help"]),
            "docker" | "podman" => subcommand(
                name,
                args,
                &["ps", "images", "version", "info", "inspect", "logs", "help"],
            ),
            "kubectl" | "oc" if args.iter().any(|a| a.text.starts_with("--kubeconfig")) => Own(
                Class::Mutating,
                format!("loads a kubeconfig, whose exec plugins run commands ({name})"),
            ),
            "kubectl" => match crate::permissions::classify::kubectl::kubectl_read_verb(args) {
                Some(verb) => Own(Class::ReadOnly, format!("only reads ({name} {verb})")),
                None => subcommand(name, args, &[]),
            },
            _ => return None,
        })
    }
}

/// Read-only when the first positional argument is one of `read_only`.
fn subcommand(name: &str, args: &[Word], read_only: &[&str]) -> CommandJudged {
    let sub = positionals(
        args,
        &["-C", "--manifest-path", "--prefix", "-w", "--workspace"],
    )
    .first()
    .map(|w| w.text.clone());
    match sub {
        Some(sub) if read_only.contains(&sub.as_str()) => {
            Own(Class::ReadOnly, format!("only reads ({name} {sub})"))
        }
        Some(sub) => Own(
            Class::Mutating,
            format!("runs {name} {sub}, which can change files"),
        ),
        None => Own(
            Class::Mutating,
            format!("runs {name}, which is not known to be read-only"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use crate::permissions::classify::{Class, analyze};

    fn class(command: &str) -> Class {
        analyze(command, std::path::Path::new("/nonexistent-workspace"))
            .classification()
            .class
    }

    /// kubectl's reads are one list: a verb the classifier always knew (`describe`) and one
    /// only the danger check knew (`top`) both read; what changes a cluster or the kubeconfig
    /// does not.
    #[test]
    fn kubectl_reads_come_from_one_list() {
        for reads in [
            "kubectl describe pod x",
            "kubectl top pods",
            "kubectl -n prod get pods",
            "kubectl --context prod events",
            "kubectl config view",
            "kubectl auth can-i get pods",
            "kubectl rollout status deploy/x",
            "kubectl --namespace=prod get pods",
            "kubectl --as admin get pods",
            "kubectl -o yaml get pods",
        ] {
            assert_eq!(class(reads), Class::ReadOnly, "{reads}");
        }
        for writes in [
            "kubectl delete pod x",
            "kubectl -n get delete pod x",
            "kubectl config set-context prod",
            "kubectl auth reconcile -f rbac.yaml",
            "kubectl cluster-info dump --output-directory out",
            "kubectl rollout restart deploy/x",
            "kubectl kustomize --enable-exec .",
        ] {
            assert_ne!(class(writes), Class::ReadOnly, "{writes}");
        }
        // The verb is found past global flags in every spelling, and oc and k are kubectl.
        for delete in [
            "kubectl delete pod x",
            "kubectl -nprod delete pod x",
            "kubectl --namespace prod delete pod x",
            "kubectl --as admin delete pod x",
            "kubectl -s https://x delete pod x",
            "kubectl -v=9 delete pod x",
            "oc -n p delete pod x",
            "k -n p delete pod x",
        ] {
            assert_eq!(class(delete), Class::Dangerous, "{delete}");
        }
        assert_eq!(
            class("kubectl auth reconcile -f rbac.yaml"),
            Class::Dangerous
        );
    }
}
