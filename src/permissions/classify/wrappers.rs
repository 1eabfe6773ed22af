//! Wrappers and interpreters: `sudo`, `env`, `timeout`, `taskset`, `xargs`, `parallel`,
//! `watch`, `strace`, `bash -c`, `python -c`, `source`, `eval`. Their payload is judged as a
//! command of its own (or parsed as shell code), and an interpreter fed from a pipe or a
//! download is held. A wrapper's own options that write or run something count too.

use crate::permissions::classify::commands::{
    CommandJudged, PRIVILEGE, has_short, is_interpreter, is_shell, option_value, positionals,
    same_file, skip_options,
};
use crate::permissions::classify::redirects::is_network_device;
use crate::permissions::classify::{Class, Stdin, Walker, Word};

use CommandJudged::{Inner, Own};

impl Walker {
    /// The verdict of a wrapper or code runner named `name`; None when it is neither.
    pub(crate) fn judge_wrapper(&mut self, name: &str, words: &[Word]) -> Option<CommandJudged> {
        self.run_modifier(name, words)
            .or_else(|| self.run_elsewhere(name, words))
            .or_else(|| self.command_runner(name, words))
            .or_else(|| self.code_runner(name, words))
    }

    /// A wrapper that changes how its command runs (time limits, priority, CPUs, limits): the
    /// command inside, or the wrapper's own verdict when it changes a running process.
    fn run_modifier(&mut self, name: &str, words: &[Word]) -> Option<CommandJudged> {
        let args = &words[1..];
        Some(match name {
            "timeout" => {
                let i = skip_options(words, 1, &["-s", "-k", "--signal", "--kill-after"]);
                Inner(i + 1)
            }
            "nice" => Inner(skip_options(words, 1, &["-n", "--adjustment"])),
            "ionice" => Inner(skip_options(
                words,
                1,
                &["-c", "-n", "--class", "--classdata"],
            )),
            "nohup" | "builtin" | "unbuffer" | "caffeinate" | "setsid" | "nocache"
            | "catchsegv" | "rlwrap" | "dbus-run-session" => Inner(skip_options(words, 1, &[])),
            "stdbuf" => Inner(skip_options(words, 1, &["-i", "-o", "-e"])),
            "time" => {
                if let Some(out) = option_value(args, &["-o", "--output"]) {
                    self.wrapper_write(&out, "time -o");
                }
                Inner(skip_options(
                    words,
                    1,
                    &["-o", "--output", "-f", "--format"],
                ))
            }
            "taskset" => {
                if has_short(args, 'p') || args.iter().any(|a| a.text == "--pid") {
                    return Some(Own(
                        Class::Mutating,
                        "changes a process's CPUs (taskset -p)".into(),
                    ));
                }
                let i = skip_options(words, 1, &[]);
                // The CPU mask or list comes before the command.
                Inner(i + 1)
            }
            "chrt" => {
                if has_short(args, 'p') || args.iter().any(|a| a.text == "--pid") {
                    return Some(Own(
                        Class::Mutating,
                        "changes a process's scheduling (chrt -p)".into(),
                    ));
                }
                let i = skip_options(words, 1, &["-T", "-P", "-D"]);
                Inner(i + 1)
            }
            "prlimit" | "numactl" | "setpriv" | "cgexec" | "faketime" | "firejail" => {
                let i = skip_options(words, 1, &["-p", "--pid", "-g"]);
                if name == "faketime" || name == "cgexec" {
                    Inner(i + 1)
                } else {
                    Inner(i)
                }
            }
            _ => return None,
        })
    }

    /// A wrapper that runs its command under a lock, in other namespaces or another context,
    /// recorded or traced: what it does besides running the command.
    fn run_elsewhere(&mut self, name: &str, words: &[Word]) -> Option<CommandJudged> {
        let args = &words[1..];
        Some(match name {
            "flock" => match option_value(args, &["-c", "--command"]) {
                Some(code) => {
                    self.shell_string(&code, code.literal);
                    Own(Class::Mutating, "takes a lock file (flock)".into())
                }
                None => {
                    let i =
                        skip_options(words, 1, &["-w", "--timeout", "-E", "--conflict-exit-code"]);
                    // The lock file, then the command.
                    Inner(i + 1)
                }
            },
            "unshare" => {
                let i = skip_options(words, 1, &["-S", "-G", "-R", "-w", "--setuid", "--setgid"]);
                if i < words.len() {
                    self.judge_and_push(&words[i..], Vec::new());
                }
                Own(
                    Class::Mutating,
                    "runs a command in new namespaces (unshare)".into(),
                )
            }
            "nsenter" | "systemd-run" | "run0" => Own(
                Class::Dangerous,
                format!("runs a command in another context ({name})"),
            ),
            "script" => {
                let clustered = args
                    .iter()
                    .position(|a| {
                        a.text.len() > 2
                            && !a.text.starts_with("--")
                            && a.text.starts_with('-')
                            && a.text.ends_with('c')
                    })
                    .and_then(|i| args.get(i + 1).cloned());
                if let Some(code) = option_value(args, &["-c", "--command"]).or(clustered) {
                    self.shell_string(&code, code.literal);
                }
                Own(
                    Class::Mutating,
                    "records a session into a file (script)".into(),
                )
            }
            "strace" | "ltrace" => {
                if has_short(args, 'p') || args.iter().any(|a| a.text.starts_with("--attach")) {
                    return Some(Own(
                        Class::Dangerous,
                        format!("attaches to a running process and reads its memory ({name} -p)"),
                    ));
                }
                if let Some(out) = option_value(args, &["-o", "--output"]) {
                    self.wrapper_write(&out, name);
                }
                let with_value = [
                    "-o", "-e", "-s", "-E", "-u", "-a", "-P", "-S", "-I", "-b", "-X", "-n", "-U",
                    "-l", "-L", "-x",
                ];
                Inner(skip_options(words, 1, &with_value))
            }
            _ => return None,
        })
    }

    /// A wrapper that runs commands it is given as words (`env`, `xargs`, `parallel`, `watch`,
    /// `command`, `exec`).
    fn command_runner(&mut self, name: &str, words: &[Word]) -> Option<CommandJudged> {
        let args = &words[1..];
        Some(match name {
            "parallel" => self.parallel(words),
            "command" if has_short(args, 'v') || has_short(args, 'V') => {
                Own(Class::ReadOnly, "looks up a command".into())
            }
            "command" => Inner(skip_options(words, 1, &[])),
            "exec" if words.len() == 1 => Own(Class::ReadOnly, "only redirects (exec)".into()),
            "exec" => Inner(skip_options(words, 1, &["-a"])),
            "busybox" | "coproc" => Inner(1),
            "env" => self.env(words),
            "xargs" => self.xargs(words),
            "watch" => {
                let i = skip_options(words, 1, &["-n", "--interval", "-d"]);
                let script: Vec<&str> = words[i.min(words.len())..]
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect();
                self.shell_string(
                    &Word::literal(script.join(" ")),
                    words[i.min(words.len())..].iter().all(|w| w.literal),
                );
                Own(Class::ReadOnly, "repeats a command (watch)".into())
            }
            _ => return None,
        })
    }

    /// A command that runs code: a string (`eval`, `trap`, `alias`), a file (`source`), as another
    /// user, or in a shell or an interpreter.
    fn code_runner(&mut self, name: &str, words: &[Word]) -> Option<CommandJudged> {
        let args = &words[1..];
        Some(match name {
            "eval" if !args.is_empty() && args.iter().all(|a| a.literal) => {
                // Literal words are the code: judge it, so rules on its commands apply.
                let code: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
                self.source(&code.join(" "));
                Own(
                    Class::Dangerous,
                    "evaluates a string as a command (eval)".into(),
                )
            }
            "eval" => {
                self.push(
                    Vec::new(),
                    Class::Dangerous,
                    format!(
                        "evaluates code only known at run time ({})",
                        args.iter()
                            .map(|a| a.text.as_str())
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                );
                Own(
                    Class::Dangerous,
                    "evaluates a string as a command (eval)".into(),
                )
            }
            "source" | "." => self.source_file(args),
            "trap" => {
                if let Some(code) = args.first().filter(|a| !a.text.starts_with('-')) {
                    self.shell_string(code, code.literal);
                }
                Own(Class::Mutating, "sets a signal handler (trap)".into())
            }
            "alias" if args.iter().any(|a| a.text.contains('=') || !a.literal) => {
                for a in args {
                    if let Some((_, body)) = a.text.split_once('=') {
                        self.shell_string(&Word::literal(body), a.literal);
                    }
                }
                Own(Class::Mutating, "defines an alias".into())
            }
            _ if PRIVILEGE.contains(&name) => self.privileged(name, words),
            _ if is_shell(name) => self.shell(name, args),
            _ if is_interpreter(name) => self.interpreter(name, args),
            _ => return None,
        })
    }

    /// `env [-i0v] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... [COMMAND]`, in every spelling
    /// getopt accepts: `-S'rm x'`, `-iS 'rm x'`, `--split-string=rm x`, `--unset=NAME`.
    fn env(&mut self, words: &[Word]) -> CommandJudged {
        let mut i = 1;
        while i < words.len() {
            let w = &words[i];
            let a = w.text.as_str();
            if a == "--" {
                i += 1;
                break;
            }
            if let Some(long) = a.strip_prefix("--") {
                let (name, value) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (long, None),
                };
                let full = [
                    "split-string",
                    "unset",
                    "chdir",
                    "ignore-environment",
                    "null",
                    "debug",
                    "block-signal",
                    "default-signal",
                    "ignore-signal",
                    "list-signal-handling",
                ]
                .into_iter()
                .find(|f| !name.is_empty() && f.starts_with(name));
                let takes = matches!(full, Some("split-string" | "unset" | "chdir"));
                let value = match value {
                    Some(v) => Some(v),
                    None if takes => {
                        i += 1;
                        words.get(i).map(|v| v.text.clone())
                    }
                    None => None,
                };
                match full {
                    Some("split-string") => return self.env_split(value.as_deref(), w.literal),
                    Some("chdir") => self.cwd = None,
                    Some(_) => {}
                    None => {
                        return Own(
                            Class::Mutating,
                            format!("runs env with an unknown option ({a})"),
                        );
                    }
                }
                i += 1;
                continue;
            }
            if a.starts_with('-') && a.len() > 1 {
                let cluster: Vec<char> = a[1..].chars().collect();
                for (k, c) in cluster.iter().enumerate() {
                    match c {
                        'i' | '0' | 'v' => {}
                        'u' | 'C' | 'S' => {
                            let rest: String = cluster[k + 1..].iter().collect();
                            let value = if rest.is_empty() {
                                i += 1;
                                words.get(i).map(|v| v.text.clone())
                            } else {
                                Some(rest)
                            };
                            match c {
                                'S' => return self.env_split(value.as_deref(), w.literal),
                                'C' => self.cwd = None,
                                _ => {}
                            }
                            break;
                        }
                        _ => {
                            return Own(
                                Class::Mutating,
                                format!("runs env with an unknown option ({a})"),
                            );
                        }
                    }
                }
                i += 1;
                continue;
            }
            if let Some((var, value)) = a.split_once('=')
                && !var.is_empty()
                && !var.contains('/')
            {
                self.variable(
                    var,
                    &Word {
                        text: value.to_string(),
                        literal: w.literal,
                    },
                );
                i += 1;
                continue;
            }
            return Inner(i);
        }
        if i < words.len() {
            return Inner(i);
        }
        Own(Class::ReadOnly, "prints the environment".into())
    }

    /// `env -S STRING`: the string is split into words and run; judge it as shell code.
    fn env_split(&mut self, script: Option<&str>, literal: bool) -> CommandJudged {
        match script {
            Some(script) => self.shell_string(&Word::literal(script), literal),
            None => self.push(Vec::new(), Class::Dangerous, "could not parse the command"),
        }
        Own(
            Class::ReadOnly,
            "runs a command with a changed environment".into(),
        )
    }

    /// A file a wrapper writes on its own (`time -o`, `strace -o`).
    fn wrapper_write(&mut self, target: &Word, name: &str) {
        if let Some((class, why)) = self.write_target(target) {
            self.push(Vec::new(), class, format!("{why} ({name})"));
        }
    }

    fn privileged(&mut self, name: &str, words: &[Word]) -> CommandJudged {
        let reason = format!("runs as another user ({name})");
        match name {
            "su" => {
                if let Some(code) = option_value(&words[1..], &["-c", "--command"]) {
                    self.shell_string(&code, code.literal);
                }
            }
            "chroot" => {
                return Own(
                    Class::Dangerous,
                    "changes the root directory (chroot)".into(),
                );
            }
            _ => {
                let with_value = [
                    "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group",
                ];
                let i = skip_options(words, 1, &with_value);
                if i < words.len() {
                    self.judge_and_push(&words[i..], Vec::new());
                }
            }
        }
        Own(Class::Dangerous, reason)
    }

    /// Follows a string that will run as shell code; one only known at run time is dangerous.
    pub(crate) fn shell_string(&mut self, code: &Word, literal: bool) {
        if literal {
            self.source(&code.text);
        } else {
            self.push(
                Vec::new(),
                Class::Dangerous,
                format!("runs shell code only known at run time ({})", code.text),
            );
        }
    }

    fn shell(&mut self, name: &str, args: &[Word]) -> CommandJudged {
        let mut i = 0;
        while i < args.len() {
            let a = &args[i].text;
            if a == "-c" || (a.starts_with('-') && !a.starts_with("--") && a.contains('c')) {
                let Some(code) = args.get(i + 1) else {
                    return Own(Class::Dangerous, "could not parse the command".into());
                };
                self.shell_string(code, code.literal);
                return Own(Class::ReadOnly, format!("runs a {name} string"));
            }
            if a == "-o" || a == "+o" || a == "-O" {
                i += 2;
            } else if a.starts_with('-') || a.starts_with('+') {
                i += 1;
            } else {
                break;
            }
        }
        match args.get(i) {
            Some(script) if self.was_downloaded(script) => Own(
                Class::Dangerous,
                format!("runs a downloaded script ({})", script.text),
            ),
            Some(script) if !script.literal => Own(
                Class::Dangerous,
                format!("runs a script produced at run time ({})", script.text),
            ),
            Some(script) => Own(Class::Mutating, format!("runs the script {}", script.text)),
            None => self.reads_code(name, true),
        }
    }

    fn interpreter(&mut self, name: &str, args: &[Word]) -> CommandJudged {
        // `-c`, `-e`, and clusters like perl's `-pe` or `-ne` carry the program inline.
        // Only options before the script count: later ones are the script's own.
        let inline = args
            .iter()
            .take_while(|a| a.text.starts_with('-'))
            .any(|a| {
                matches!(a.text.as_str(), "--eval" | "-r" | "-p")
                    || (!a.text.starts_with("--") && a.text[1..].contains(['c', 'e']))
            });
        if inline {
            return Own(Class::Mutating, format!("runs inline {name} code"));
        }
        match positionals(args, &["-m", "-W", "-X", "-I"]).first() {
            Some(script) if self.was_downloaded(script) => Own(
                Class::Dangerous,
                format!("runs a downloaded script ({})", script.text),
            ),
            Some(script) if !script.literal => Own(
                Class::Dangerous,
                format!("runs a script produced at run time ({})", script.text),
            ),
            Some(script) => Own(
                Class::Mutating,
                format!("runs the {name} script {}", script.text),
            ),
            None if args.iter().any(|a| a.text == "-m") => {
                Own(Class::Mutating, format!("runs a {name} module"))
            }
            None => self.reads_code(name, false),
        }
    }

    /// An interpreter that reads its program from standard input.
    fn reads_code(&mut self, name: &str, shell: bool) -> CommandJudged {
        let held = match self.stdin.clone() {
            Stdin::Pipe { download: true } => format!("pipes a download into a shell ({name})"),
            Stdin::Pipe { download: false } if shell => {
                format!("pipes text into a shell ({name}), which runs it as commands")
            }
            Stdin::Pipe { .. } => {
                return Own(Class::Mutating, format!("runs {name} code from its input"));
            }
            Stdin::Code(code) if shell => {
                self.source(&code);
                return Own(Class::ReadOnly, format!("runs a {name} here-document"));
            }
            Stdin::Code(_) => return Own(Class::Mutating, format!("runs inline {name} code")),
            Stdin::File => {
                return Own(Class::Mutating, format!("runs a {name} script from a file"));
            }
            Stdin::Inherited => {
                return Own(Class::Mutating, format!("starts an interactive {name}"));
            }
        };
        // A finding of the pipeline, not of `sh` alone: no rule may approve it.
        self.push(Vec::new(), Class::Dangerous, held);
        Own(
            Class::Mutating,
            format!("runs commands from its input ({name})"),
        )
    }

    fn source_file(&mut self, args: &[Word]) -> CommandJudged {
        let Some(file) = args.first() else {
            return Own(Class::ReadOnly, "sources nothing".into());
        };
        let text = file.text.as_str();
        if self.was_downloaded(file) {
            return Own(
                Class::Dangerous,
                format!("sources a downloaded script ({text})"),
            );
        }
        if is_network_device(text) {
            return Own(
                Class::Dangerous,
                format!("sources commands from the network ({text})"),
            );
        }
        if !file.literal || text.starts_with("/dev/fd/") || text.starts_with("/proc/") {
            return Own(
                Class::Dangerous,
                format!("sources a script produced at run time, maybe a download ({text})"),
            );
        }
        Own(Class::Mutating, format!("runs the commands in {text}"))
    }

    fn was_downloaded(&self, file: &Word) -> bool {
        self.downloaded.iter().any(|d| same_file(d, &file.text))
    }
}
