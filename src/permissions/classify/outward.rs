//! Effects outside this machine, which no sandbox can undo: publishing packages, deploying
//! and destroying infrastructure (terraform, kubectl, helm, cloud CLIs), privileged
//! containers, uploading local files (`curl -d @file`, `-T`, `nc`), all dangerous.

use crate::permissions::classify::commands::{CommandJudged, positionals};
use crate::permissions::classify::kubectl::kubectl_danger;
use crate::permissions::classify::{Class, Location, Walker, Word};

use CommandJudged::Own;

/// Cloud and hosting CLIs: a destructive verb anywhere among their words is dangerous.
const CLOUD_CLIS: &[&str] = &[
    "aws",
    "gcloud",
    "gsutil",
    "az",
    "doctl",
    "flyctl",
    "fly",
    "heroku",
    "vercel",
    "netlify",
    "firebase",
    "wrangler",
    "oci",
    "linode-cli",
    "hcloud",
    "scw",
    "ibmcloud",
    "eksctl",
    "s3cmd",
    "aliyun",
    "exo",
    "civo",
    "vultr-cli",
    "railway",
    "ovhcloud",
    "upctl",
    "supabase",
    "render",
];

/// Verbs (or verb prefixes, as in `delete-bucket`, `apps:destroy`) that change remote state.
const DESTRUCTIVE_VERBS: &[&str] = &[
    "delete",
    "destroy",
    "terminate",
    "remove",
    "rm",
    "rb",
    "purge",
    "deregister",
    "deploy",
    "apply",
    "kill",
    "drop",
    "uninstall",
    "wipe",
    "nuke",
    "scale",
    "shutdown",
    "stop",
    "reboot",
    "revoke",
    "detach",
    "disable",
    "put",
    "update",
    "create",
    "publish",
    "release",
    "upload",
    "mv",
    "sync",
    "cp",
    "restore",
    "reset",
    "rollback",
    "promote",
    "attach",
    "invoke",
];

/// Terraform's verbs that change real infrastructure or its state (OpenTofu shares them).
const TERRAFORM_VERBS: &[&str] = &[
    "apply",
    "destroy",
    "import",
    "taint",
    "untaint",
    "force-unlock",
    "state",
    "workspace",
];

/// Infrastructure-as-code tools and their verbs that change real infrastructure.
const DEPLOY_TOOLS: &[(&str, &[&str])] = &[
    ("terraform", TERRAFORM_VERBS),
    ("tofu", TERRAFORM_VERBS),
    (
        "terragrunt",
        &[
            "apply",
            "destroy",
            "import",
            "run-all",
            "state",
            "apply-all",
            "destroy-all",
        ],
    ),
    (
        "pulumi",
        &[
            "up", "update", "destroy", "import", "refresh", "stack", "state", "cancel",
        ],
    ),
    ("cdk", &["deploy", "destroy", "bootstrap"]),
    ("serverless", &["deploy", "remove", "rollback"]),
    ("sls", &["deploy", "remove", "rollback"]),
    (
        "helm",
        &[
            "install",
            "upgrade",
            "uninstall",
            "delete",
            "rollback",
            "push",
            "plugin",
        ],
    ),
    ("ansible-playbook", &[]),
];

impl Walker {
    pub(crate) fn judge_outward(&mut self, name: &str, args: &[Word]) -> Option<CommandJudged> {
        let words = positionals(args, &["-C", "--prefix", "--registry", "-w", "--workspace"]);
        let first = words.first().map(|w| w.text.as_str());
        let second = words.get(1).map(|w| w.text.as_str());
        let publish = |what: &str| {
            Some(Own(
                Class::Dangerous,
                format!("publishes to the outside world ({what})"),
            ))
        };
        let outward = match name {
            "npm" | "pnpm" | "yarn" | "bun" => match first {
                Some(
                    v @ ("publish" | "unpublish" | "deprecate" | "dist-tag" | "owner" | "access"
                    | "team"),
                ) => publish(&format!("{name} {v}")),
                Some("npm") if second == Some("publish") => publish("yarn npm publish"),
                _ => None,
            },
            // `cargo +nightly publish`: rustup's toolchain selector comes first.
            "cargo" => match words
                .iter()
                .map(|w| w.text.as_str())
                .find(|w| !w.starts_with('+'))
            {
                Some(v @ ("publish" | "yank" | "owner")) => publish(&format!("cargo {v}")),
                _ => None,
            },
            "mvn" | "mvnw" | "gradle" | "gradlew" | "sbt" | "lein" => words
                .iter()
                .map(|w| w.text.as_str())
                .find(|v| {
                    matches!(
                        *v,
                        "deploy" | "release:perform" | "publish" | "publishSigned"
                    ) || v.starts_with("publish")
                        || v.ends_with(":publish")
                })
                .and_then(|v| publish(&format!("{name} {v}"))),
            "dotnet" if first == Some("nuget") && second == Some("push") => {
                publish("dotnet nuget push")
            }
            "dart" | "flutter" if first == Some("pub") && second == Some("publish") => {
                publish(&format!("{name} pub publish"))
            }
            "vsce" | "ovsx" if first == Some("publish") => publish(&format!("{name} publish")),
            "mix" if first == Some("hex.publish") => publish("mix hex.publish"),
            "helm" if first == Some("push") => publish("helm push"),
            "twine" if first == Some("upload") || first == Some("register") => {
                publish("twine upload")
            }
            "poetry" | "flit" | "hatch" | "uv" | "pdm" if first == Some("publish") => {
                publish(&format!("{name} publish"))
            }
            "gem" if matches!(first, Some("push" | "yank" | "owner")) => publish("gem push"),
            _ if name.starts_with("python") => {
                let module = args
                    .windows(2)
                    .find(|w| w[0].text == "-m")
                    .map(|w| w[1].text.as_str());
                let verb = args
                    .iter()
                    .skip_while(|a| a.text != "-m")
                    .nth(2)
                    .map(|a| a.text.as_str());
                match (module, verb) {
                    (Some("twine"), Some("upload" | "register")) => publish("twine upload"),
                    (Some("poetry" | "flit" | "hatch"), Some("publish")) => publish("publish"),
                    _ => None,
                }
            }
            "gh" => gh(first, second, args),
            "docker" | "podman" | "nerdctl" => self.container(name, first, args),
            "kubectl" | "oc" | "k" => kubectl_danger(name, args),
            _ if CLOUD_CLIS.contains(&name) => cloud(name, &words, args),
            _ => DEPLOY_TOOLS
                .iter()
                .find(|(tool, _)| *tool == name)
                .and_then(|(_, verbs)| match first {
                    _ if verbs.is_empty() => Some(Own(
                        Class::Dangerous,
                        format!("deploys to real machines ({name})"),
                    )),
                    Some("state" | "stack" | "workspace" | "plugin")
                        if matches!(
                            second,
                            Some("list" | "ls" | "show" | "select" | "output" | "pull")
                        ) =>
                    {
                        None
                    }
                    Some(v) if verbs.contains(&v) => Some(Own(
                        Class::Dangerous,
                        format!("deploys, changes or destroys real infrastructure ({name} {v})"),
                    )),
                    _ => None,
                }),
        };
        outward.or_else(|| self.upload(name, args))
    }

    /// Uploads of local data: curl, wget, httpie, netcat.
    fn upload(&mut self, name: &str, args: &[Word]) -> Option<CommandJudged> {
        let uploads = |what: String| {
            Some(Own(
                Class::Dangerous,
                format!("uploads local data to another machine ({what})"),
            ))
        };
        match name {
            "curl" => {
                let mut i = 0;
                while i < args.len() {
                    let a = args[i].text.as_str();
                    let next = args.get(i + 1).map(|w| w.text.as_str()).unwrap_or("");
                    i += 1;
                    if let Some(long) = a.strip_prefix("--") {
                        let (name, attached) = match long.split_once('=') {
                            Some((n, v)) => (n, Some(v)),
                            None => (long, None),
                        };
                        let value = attached.unwrap_or(next);
                        match name {
                            "data" | "data-binary" | "data-ascii" | "json"
                                if value.starts_with('@') =>
                            {
                                return uploads(format!("curl --{name} {value}"));
                            }
                            "data-urlencode" if names_a_file(value) => {
                                return uploads(format!("curl --{name} {value}"));
                            }
                            "form" if form_file(value) => {
                                return uploads(format!("curl --form {value}"));
                            }
                            "upload-file" => return uploads(format!("curl --upload-file {value}")),
                            "config" => {
                                return Some(Own(
                                    Class::Mutating,
                                    format!(
                                        "reads curl options from a file (curl --config {value})"
                                    ),
                                ));
                            }
                            _ => {}
                        }
                        continue;
                    }
                    let Some(cluster) = a.strip_prefix('-') else {
                        continue;
                    };
                    for (k, c) in cluster.char_indices() {
                        if !"dFTKHuXAebcmrwxEDCYyztUQPo".contains(c) {
                            continue;
                        }
                        let rest = &cluster[k + 1..];
                        let value = if rest.is_empty() { next } else { rest };
                        match c {
                            'd' if value.starts_with('@') => {
                                return uploads(format!("curl -d {value}"));
                            }
                            'F' if form_file(value) => return uploads(format!("curl -F {value}")),
                            'T' => return uploads(format!("curl -T {value}")),
                            'K' => {
                                return Some(Own(
                                    Class::Mutating,
                                    format!("reads curl options from a file (curl -K {value})"),
                                ));
                            }
                            _ => {}
                        }
                        break;
                    }
                }
                None
            }
            "wget" => args
                .iter()
                .find(|a| a.text.starts_with("--post-file") || a.text.starts_with("--body-file"))
                .and_then(|a| uploads(format!("wget {}", a.text))),
            "http" | "https" | "xh" | "xhs" => args
                .iter()
                .find(|a| {
                    a.text.starts_with('@')
                        || a.text.contains("=@")
                        || a.text.contains(":=@")
                        || a.text.contains("@/") && a.text.contains('=')
                })
                .and_then(|a| uploads(format!("{name} {}", a.text))),
            "nc" | "ncat" | "netcat" | "socat" | "telnet" => {
                if name != "socat"
                    && args.iter().any(|a| {
                        a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('z')
                    })
                {
                    return Some(Own(
                        Class::Mutating,
                        format!("probes network ports ({name} -z)"),
                    ));
                }
                Some(Own(
                    Class::Dangerous,
                    format!(
                        "opens a raw network connection ({name}), which can send local data or serve a shell"
                    ),
                ))
            }
            _ => None,
        }
    }

    /// docker and podman: pushing images, and containers that can reach the host.
    fn container(
        &mut self,
        name: &str,
        first: Option<&str>,
        args: &[Word],
    ) -> Option<CommandJudged> {
        match first {
            Some("push") => {
                return Some(Own(
                    Class::Dangerous,
                    format!("publishes an image to a registry ({name} push)"),
                ));
            }
            Some(
                "system" | "image" | "volume" | "container" | "builder" | "network" | "buildx",
            ) if args.iter().any(|a| a.text == "prune") => {
                return Some(Own(
                    Class::Dangerous,
                    format!("deletes containers, images or volumes in bulk ({name} prune)"),
                ));
            }
            Some("run" | "create" | "exec" | "container") => {}
            _ => return None,
        }
        let host_ns = [
            "--pid",
            "--net",
            "--network",
            "--ipc",
            "--uts",
            "--userns",
            "--cgroupns",
        ];
        for (i, arg) in args.iter().enumerate() {
            let a = arg.text.as_str();
            let next = args.get(i + 1);
            let (opt, value) = match a.split_once('=') {
                Some((o, v)) => (
                    o,
                    Some(Word {
                        text: v.to_string(),
                        literal: arg.literal,
                    }),
                ),
                None => (a, next.cloned()),
            };
            let why = match opt {
                "--privileged" => Some("runs a privileged container".to_string()),
                "--cap-add" => Some(format!(
                    "gives a container extra privileges (--cap-add {})",
                    value.map(|v| v.text).unwrap_or_default()
                )),
                "--device" => Some("gives a container a host device (--device)".to_string()),
                "--security-opt"
                    if value.as_ref().is_some_and(|v| {
                        v.text.contains("unconfined") || v.text.contains("disable")
                    }) =>
                {
                    Some("turns off a container's confinement (--security-opt)".to_string())
                }
                _ if host_ns.contains(&opt) && value.as_ref().is_some_and(|v| v.text == "host") => {
                    Some(format!(
                        "shares the host's namespace with a container ({opt}=host)"
                    ))
                }
                "-v" | "--volume" | "--mount" => value
                    .as_ref()
                    .and_then(|v| self.host_mount(&v.text, opt == "--mount", v.literal)),
                _ => None,
            };
            if let Some(why) = why {
                return Some(Own(Class::Dangerous, format!("{why} ({name})")));
            }
        }
        None
    }

    /// Why mounting `spec` into a container exposes the host, or `None` for the workspace.
    fn host_mount(&self, spec: &str, mount: bool, literal: bool) -> Option<String> {
        let source = if mount {
            spec.split(',').find_map(|kv| {
                kv.strip_prefix("source=")
                    .or_else(|| kv.strip_prefix("src="))
            })?
        } else {
            spec.split(':').next()?
        };
        if !source.starts_with('/')
            && !source.starts_with('.')
            && !source.starts_with('~')
            && !source.starts_with('$')
        {
            // A named volume.
            return None;
        }
        let source_word = match source {
            "$PWD" | "${PWD}" | "$(pwd)" | "\"$PWD\"" | "\"$(pwd)\"" => Word::literal("."),
            s => Word {
                text: s.trim_matches('"').to_string(),
                literal,
            },
        };
        match self.locate(&source_word) {
            Location::Inside | Location::Temp => None,
            _ => Some(format!(
                "mounts a host directory into a container ({source})"
            )),
        }
    }
}

fn names_a_file(value: &str) -> bool {
    match value.find('@') {
        Some(at) => !value[..at].contains('='),
        None => false,
    }
}

fn form_file(value: &str) -> bool {
    value
        .split_once('=')
        .is_some_and(|(_, v)| v.starts_with('@') || v.starts_with('<'))
}

fn gh(first: Option<&str>, second: Option<&str>, args: &[Word]) -> Option<CommandJudged> {
    let changes = match (first, second) {
        (Some("release"), Some(v)) if !matches!(v, "list" | "view" | "download") => true,
        (Some("repo"), Some("delete" | "archive" | "rename" | "edit" | "create" | "fork")) => true,
        (Some("secret" | "variable"), Some("set" | "delete" | "remove")) => true,
        // Workflows deploy and publish; merging and closing change the repository for everyone.
        (Some("workflow"), Some("run" | "enable" | "disable")) | (Some("run"), Some("rerun")) => {
            true
        }
        (Some("pr"), Some("merge" | "close")) => true,
        (Some("api"), _) => args.iter().any(|a| {
            let t = a.text.as_str();
            matches!(
                t,
                "-X" | "--method" | "-f" | "-F" | "--field" | "--raw-field" | "--input"
            ) || t.starts_with("--method=")
                || (t.starts_with("-X") && t.len() > 2)
        }),
        _ => false,
    };
    changes.then(|| {
        Own(
            Class::Dangerous,
            format!(
                "changes things on GitHub (gh {} {})",
                first.unwrap_or_default(),
                second.unwrap_or_default()
            ),
        )
    })
}

fn cloud(name: &str, words: &[&Word], args: &[Word]) -> Option<CommandJudged> {
    let destructive = words.iter().find(|w| {
        let t = w.text.to_ascii_lowercase();
        let verb = t.rsplit(':').next().unwrap_or(&t);
        DESTRUCTIVE_VERBS.iter().any(|v| {
            verb == *v || verb.starts_with(&format!("{v}-")) || verb.starts_with(&format!("{v}_"))
        })
    });
    let _ = args;
    destructive.map(|w| {
        Own(
            Class::Dangerous,
            format!("changes or deletes cloud resources ({name} {})", w.text),
        )
    })
}
