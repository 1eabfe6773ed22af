//! Wrappers and interpreters: `sudo`, `env`, `timeout`, `xargs`, `watch`, `bash -c`,
//! `python -c`, `source`, `eval`. Their payload is judged as a command of its own (or parsed
//! as shell code), and an interpreter fed from a pipe or a download is held.

use crate::permissions::classify::{Class, Stdin, Walker, Word};
use crate::permissions::commands::{
    Judged, PRIVILEGE, SENSITIVE_VARIABLES, has_short, is_interpreter, is_shell, option_value,
    positionals, same_file, skip_options,
};

use Judged::{Inner, Own};

impl Walker {
    pub(crate) fn judge_wrapper(&mut self, name: &str, words: &[Word]) -> Option<Judged> {
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
            "nohup" | "builtin" | "setsid" | "unbuffer" | "time" | "caffeinate" => {
                Inner(skip_options(words, 1, &[]))
            }
            "stdbuf" => Inner(skip_options(words, 1, &["-i", "-o", "-e"])),
            "command" if has_short(args, 'v') || has_short(args, 'V') => {
                Own(Class::ReadOnly, "looks up a command".into())
            }
            "command" => Inner(skip_options(words, 1, &[])),
            "exec" => Inner(skip_options(words, 1, &["-a"])),
            "busybox" => Inner(1),
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
            "eval" => Own(
                Class::Dangerous,
                "evaluates a string as a command (eval)".into(),
            ),
            "source" | "." => self.source_file(args),
            "trap" => {
                if let Some(code) = args.first().filter(|a| !a.text.starts_with('-')) {
                    self.shell_string(code, code.literal);
                }
                Own(Class::Mutating, "sets a signal handler (trap)".into())
            }
            "alias" if !args.is_empty() => Own(Class::Mutating, "defines an alias".into()),
            _ if PRIVILEGE.contains(&name) => self.privileged(name, words),
            _ if is_shell(name) => self.shell(name, args),
            _ if is_interpreter(name) => self.interpreter(name, args),
            _ => return None,
        })
    }

    fn env(&mut self, words: &[Word]) -> Judged {
        let mut i = 1;
        while i < words.len() {
            let a = words[i].text.as_str();
            match a {
                "-u" | "--unset" => i += 2,
                "-C" | "--chdir" => {
                    self.cwd = None;
                    i += 2;
                }
                "-S" | "--split-string" => {
                    if let Some(script) = words.get(i + 1) {
                        self.shell_string(script, script.literal);
                    }
                    return Own(
                        Class::ReadOnly,
                        "runs a command with a changed environment".into(),
                    );
                }
                "--" => i += 1,
                _ if a.starts_with('-') => i += 1,
                _ if a.contains('=') => {
                    let var = a.split('=').next().unwrap_or_default();
                    if SENSITIVE_VARIABLES.contains(&var) {
                        self.push(
                            vec![format!("{var}=")],
                            Class::Mutating,
                            format!("changes {var}, which decides what runs"),
                        );
                    }
                    i += 1;
                }
                _ => return Inner(i),
            }
        }
        Own(Class::ReadOnly, "prints the environment".into())
    }

    fn xargs(&mut self, words: &[Word]) -> Judged {
        let with_value = [
            "-I",
            "-n",
            "-P",
            "-L",
            "-l",
            "-s",
            "-d",
            "-E",
            "-e",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--replace",
        ];
        let i = skip_options(words, 1, &with_value);
        if i >= words.len() {
            return Own(Class::ReadOnly, "prints its input (xargs)".into());
        }
        let saved = std::mem::replace(&mut self.stdin, Stdin::Inherited);
        self.judge_and_push(&words[i..], Vec::new());
        self.stdin = saved;
        Own(
            Class::ReadOnly,
            "runs a command on its input (xargs)".into(),
        )
    }

    fn privileged(&mut self, name: &str, words: &[Word]) -> Judged {
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

    fn shell(&mut self, name: &str, args: &[Word]) -> Judged {
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

    fn interpreter(&mut self, name: &str, args: &[Word]) -> Judged {
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
    fn reads_code(&mut self, name: &str, shell: bool) -> Judged {
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

    fn source_file(&mut self, args: &[Word]) -> Judged {
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
