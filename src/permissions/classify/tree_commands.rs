//! The commands that walk or pack a tree: `find` and `fd` (their actions that delete, write
//! or run a command on every file) and `tar` (listing, creating or extracting, and its
//! options that run commands). `file_commands.rs` sends them here.

use crate::permissions::classify::commands::{CommandJudged, has_long, option_value};
use crate::permissions::classify::opts::long_is;
use crate::permissions::classify::{Class, Location, Walker, Word};

use CommandJudged::Own;

impl Walker {
    pub(crate) fn find(&mut self, args: &[Word]) -> CommandJudged {
        let roots: Vec<&Word> = args
            .iter()
            .take_while(|a| !a.text.starts_with('-') && a.text != "(" && a.text != "!")
            .collect();
        let root = roots
            .iter()
            .find(|r| self.locate(r) != Location::Inside)
            .or(roots.first())
            .map(|r| r.text.clone())
            .unwrap_or_else(|| ".".into());
        let mut class = Class::ReadOnly;
        let mut reason = "only reads (find)".to_string();
        if let Some(arg) = run_time_find_argument(args) {
            class = Class::Mutating;
            reason = format!(
                "runs find with an argument only known at run time ({}), which could be -exec \
                 or -delete",
                arg.text
            );
        }
        let mut i = 0;
        while i < args.len() {
            match args[i].text.as_str() {
                "-exec" | "-execdir" | "-ok" | "-okdir" => {
                    let end = args[i + 1..]
                        .iter()
                        .position(|a| a.text == ";" || a.text == "+")
                        .map_or(args.len(), |p| i + 1 + p);
                    let payload: Vec<Word> = args[i + 1..end]
                        .iter()
                        .map(|w| {
                            if w.text == "{}" {
                                Word::literal(format!("{root}/{{}}"))
                            } else {
                                w.clone()
                            }
                        })
                        .collect();
                    if !payload.is_empty() {
                        let mass = self.mass.replace("find -exec");
                        // `-execdir` runs the command in each found file's directory.
                        let cwd = if args[i].text.ends_with("dir") {
                            self.cwd.take()
                        } else {
                            self.cwd.clone()
                        };
                        self.judge_and_push(&payload, Vec::new());
                        self.cwd = cwd;
                        self.mass = mass;
                    }
                    reason = "runs a command on every file it finds (find -exec)".into();
                    i = end;
                }
                "-delete" => {
                    class = Class::Dangerous;
                    reason = "deletes every file it matches (find -delete)".into();
                }
                "-fprint" | "-fprint0" | "-fprintf" | "-fls" | "-fprintf0" => {
                    if let Some(Own(c, why)) =
                        args.get(i + 1).map(|t| self.write_verdict(t, "find"))
                        && c > class
                    {
                        class = c;
                        reason = why;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Own(class, reason)
    }

    pub(crate) fn fd(&mut self, args: &[Word]) -> CommandJudged {
        let Some(at) = args
            .iter()
            .position(|a| matches!(a.text.as_str(), "-x" | "--exec" | "-X" | "--exec-batch"))
        else {
            return Own(Class::ReadOnly, "only reads (fd)".into());
        };
        let end = args[at + 1..]
            .iter()
            .position(|a| a.text == ";")
            .map_or(args.len(), |p| at + 1 + p);
        if at + 1 < end {
            // `{}`, `{/}`, `{.}`... become the found path: `sh -c {}` runs the file it found.
            let payload: Vec<Word> = args[at + 1..end]
                .iter()
                .map(|w| match w.text.as_str() {
                    "{}" | "{/}" | "{//}" | "{.}" | "{/.}" => {
                        Word::literal(format!("./{}", w.text))
                    }
                    _ => w.clone(),
                })
                .collect();
            let mass = self.mass.replace("fd -x");
            self.judge_and_push(&payload, Vec::new());
            self.mass = mass;
        }
        Own(
            Class::ReadOnly,
            "runs a command on every file it finds (fd -x)".into(),
        )
    }

    pub(crate) fn tar(&mut self, args: &[Word]) -> CommandJudged {
        if let Some(judged) = self.tar_commands(args) {
            return judged;
        }
        let listing = args
            .first()
            .is_some_and(|a| !a.text.starts_with("--") && a.text.contains('t'))
            || has_long(args, "--list");
        if listing {
            return Own(Class::ReadOnly, "lists an archive (tar)".into());
        }
        if let Some(dir) = option_value(args, &["-C", "--directory"])
            && let Own(Class::Dangerous, why) = self.path_verdict(&dir, "tar", "extracts")
        {
            return Own(Class::Dangerous, why);
        }
        Own(
            Class::Mutating,
            "creates or extracts an archive (tar)".into(),
        )
    }

    /// tar options that run commands (`--to-command`, `--checkpoint-action=exec=`, `-I`,
    /// `--use-compress-program`, `--rsh-command`, `-F`/`--info-script`): their command is
    /// judged as shell code, and tar itself is not read-only then.
    fn tar_commands(&mut self, args: &[Word]) -> Option<CommandJudged> {
        let runs = [
            "--to-command",
            "--use-compress-program",
            "--rsh-command",
            "--info-script",
            "--new-volume-script",
            "--rmt-command",
            "--checkpoint-action",
        ];
        for (i, arg) in args.iter().enumerate() {
            let t = arg.text.as_str();
            if t == "--" {
                break;
            }
            let found = if t.starts_with("--") {
                runs.iter().find(|f| long_is(t, f)).map(|full| {
                    let value = match t.split_once('=') {
                        Some((_, v)) => Some(v.to_string()),
                        None => args.get(i + 1).map(|w| w.text.clone()),
                    };
                    (full.to_string(), value)
                })
            } else if let Some(cluster) = t.strip_prefix('-') {
                let mut found = None;
                for (k, c) in cluster.char_indices() {
                    if c == 'I' || c == 'F' {
                        let rest = &cluster[k + 1..];
                        let value = if rest.is_empty() {
                            args.get(i + 1).map(|w| w.text.clone())
                        } else {
                            Some(rest.to_string())
                        };
                        found = Some((format!("-{c}"), value));
                        break;
                    }
                    if "fCbgHKLNTVX".contains(c) {
                        break;
                    }
                }
                found
            } else {
                None
            };
            let Some((option, value)) = found else {
                continue;
            };
            let code = if option == "--checkpoint-action" {
                match value.as_deref().and_then(|v| v.strip_prefix("exec=")) {
                    Some(code) => Some(code.to_string()),
                    None => continue,
                }
            } else {
                value
            };
            match code {
                Some(code) => self.shell_string(&Word::literal(code), arg.literal),
                None => self.push(Vec::new(), Class::Dangerous, "could not parse the command"),
            }
            return Some(Own(
                Class::Mutating,
                format!("runs a command from its options (tar {option})"),
            ));
        }
        None
    }
}

/// A find argument only known at run time where find would take it as an expression
/// (`find $x`, `find . "$test"`), or unquoted anywhere (it splits into several words).
fn run_time_find_argument(args: &[Word]) -> Option<&Word> {
    args.iter().enumerate().find_map(|(i, arg)| {
        if arg.literal {
            return None;
        }
        let quoted = arg.text.starts_with('"') && arg.text.ends_with('"');
        let value_of_test = i > 0
            && args[i - 1].literal
            && args[i - 1].text.starts_with('-')
            && !matches!(
                args[i - 1].text.as_str(),
                "-o" | "-a" | "-not" | "-or" | "-and"
            );
        (!(quoted && value_of_test)).then_some(arg)
    })
}
