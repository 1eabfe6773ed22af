//! Commands that delete, copy, write or edit files: where their targets land (inside the
//! workspace, the temp directory, or outside) decides between mutating and dangerous.
//! Also `cd` (later relative paths move with it) and `find`/`fd` payloads.

use std::path::PathBuf;

use crate::permissions::classify::{Class, Location, Walker, Word, is_harmless_device};
use crate::permissions::commands::{
    Judged, has_long, has_short, option_value, options, positionals,
};

use Judged::Own;

impl Walker {
    pub(crate) fn judge_files(&mut self, name: &str, args: &[Word]) -> Option<Judged> {
        Some(match name {
            "cd" | "pushd" => self.change_dir(args),
            "rm" => self.rm(args),
            "rmdir" | "unlink" => self.targets(name, &positionals(args, &[]), "deletes"),
            "cp" | "mv" | "ln" | "install" => self.copy(name, args),
            "rsync" | "scp" => self.copy(name, args),
            "tee" => self.targets(name, &positionals(args, &["--output-error"]), "writes"),
            "touch" | "mkdir" => self.targets(
                name,
                &positionals(args, &["-m", "-d", "-t", "-r", "--mode"]),
                "writes",
            ),
            "truncate" => self.targets(
                name,
                &positionals(args, &["-s", "-r", "--size", "--reference"]),
                "truncates",
            ),
            "chmod" | "chown" | "chgrp" => self.permissions(name, args),
            "sed" => self.sed(args),
            "awk" | "gawk" | "mawk" | "nawk" => awk(name, args),
            "find" => self.find(args),
            "fd" | "fdfind" => self.fd(args),
            "sort" => match option_value(args, &["-o", "--output"]) {
                Some(out) => self.write_verdict(&out, "sort -o"),
                None => Own(Class::ReadOnly, "only reads (sort)".into()),
            },
            "uniq" | "xxd" => match positionals(
                args,
                &["-f", "-s", "-w", "-c", "-g", "-l", "-n", "-o", "-s"],
            )
            .get(1)
            {
                Some(out) if !has_short(args, 'r') || name == "xxd" => {
                    self.write_verdict(out, name)
                }
                _ => Own(Class::ReadOnly, format!("only reads ({name})")),
            },
            "curl" | "wget" => self.download(name, args),
            "tar" => self.tar(args),
            "yq" if has_short(args, 'i') || has_long(args, "--inplace") => self.targets(
                name,
                &positionals(args, &[])
                    .into_iter()
                    .skip(1)
                    .collect::<Vec<_>>(),
                "edits",
            ),
            _ => return None,
        })
    }

    fn change_dir(&mut self, args: &[Word]) -> Judged {
        let target = positionals(args, &[]).first().map(|w| (*w).clone());
        self.cwd = match target {
            None => self.home.clone(),
            Some(w) if w.text == "-" => None,
            Some(w) => self.expand_dir(&w),
        };
        Own(Class::ReadOnly, "changes the directory".into())
    }

    fn expand_dir(&self, w: &Word) -> Option<PathBuf> {
        if !w.literal {
            return None;
        }
        let path = if w.text == "~" {
            self.home.clone()?
        } else if let Some(rest) = w.text.strip_prefix("~/") {
            self.home.as_ref()?.join(rest)
        } else {
            PathBuf::from(&w.text)
        };
        if path.is_absolute() {
            Some(path)
        } else {
            self.cwd.as_ref().map(|c| c.join(path))
        }
    }

    fn rm(&mut self, args: &[Word]) -> Judged {
        let recursive =
            has_short(args, 'r') || has_short(args, 'R') || has_long(args, "--recursive");
        let force = has_short(args, 'f') || has_long(args, "--force");
        let paths = positionals(args, &[]);
        for path in &paths {
            if let Some(why) = self.deletion_outside(path) {
                return Own(Class::Dangerous, why);
            }
        }
        match (recursive, force) {
            (true, true) => Own(
                Class::Dangerous,
                "deletes recursively and without asking (rm -rf)".into(),
            ),
            (true, false) => Own(Class::Dangerous, "deletes recursively (rm -r)".into()),
            (false, true) => Own(Class::Dangerous, "forces deletion (rm -f)".into()),
            (false, false) => Own(Class::Mutating, format!("deletes {}", shown(&paths))),
        }
    }

    /// Why deleting `path` is dangerous beyond the flags: outside the workspace, or the whole of it.
    fn deletion_outside(&self, path: &Word) -> Option<String> {
        let shown = &path.text;
        match self.locate(path) {
            Location::Outside => Some(format!("deletes outside the workspace ({shown})")),
            Location::Unknown => Some(format!("deletes a path only known at run time ({shown})")),
            Location::Temp | Location::Inside if self.is_workspace_root(path) => {
                Some(format!("deletes the whole workspace ({shown})"))
            }
            Location::Temp | Location::Inside => None,
        }
    }

    fn is_workspace_root(&self, path: &Word) -> bool {
        let Some(dir) = self.expand_dir(path) else {
            return false;
        };
        std::fs::canonicalize(&dir).is_ok_and(|real| real == self.root)
    }

    /// Commands whose every path argument is written (or deleted).
    fn targets(&mut self, name: &str, paths: &[&Word], verb: &str) -> Judged {
        if paths.is_empty() && name != "tee" {
            // Via `xargs` or `find -exec` the paths come from the input.
            return Own(
                Class::Mutating,
                format!("{verb} files named by its input ({name})"),
            );
        }
        let mut worst = Own(Class::ReadOnly, format!("only reads ({name})"));
        let mut worst_class = Class::ReadOnly;
        for path in paths {
            if let Own(class, why) = self.path_verdict(path, name, verb)
                && class > worst_class
            {
                worst_class = class;
                worst = Own(class, why);
            }
        }
        worst
    }

    fn path_verdict(&self, path: &Word, name: &str, verb: &str) -> Judged {
        let shown = &path.text;
        if path.literal && is_harmless_device(shown) {
            return Own(Class::ReadOnly, format!("only reads ({name})"));
        }
        match self.locate(path) {
            Location::Inside => Own(Class::Mutating, format!("{verb} {shown} ({name})")),
            Location::Temp => Own(
                Class::Mutating,
                format!("{verb} {shown} in the temp directory ({name})"),
            ),
            Location::Outside => Own(
                Class::Dangerous,
                format!("{verb} outside the workspace: {shown} ({name})"),
            ),
            Location::Unknown => Own(
                Class::Dangerous,
                format!("{verb} a path only known at run time: {shown} ({name})"),
            ),
        }
    }

    fn write_verdict(&self, target: &Word, name: &str) -> Judged {
        match self.write_target(target) {
            Some((class, why)) => Own(class, format!("{why} ({name})")),
            None => Own(Class::ReadOnly, format!("only reads ({name})")),
        }
    }

    fn copy(&mut self, name: &str, args: &[Word]) -> Judged {
        let with_value = [
            "-t", "-S", "-m", "-o", "-g", "--suffix", "-e", "--rsh", "-P", "-i", "-l", "-F",
        ];
        let paths = positionals(
            args,
            if name == "rsync" || name == "scp" {
                &["-e", "--rsh", "-P", "-i", "-F"]
            } else {
                &with_value
            },
        );
        let target = option_value(args, &["-t", "--target-directory"]).or_else(|| {
            if paths.len() >= 2 || name == "ln" {
                paths.last().map(|w| (*w).clone())
            } else {
                None
            }
        });
        let Some(target) = target else {
            return Own(
                Class::Mutating,
                format!("runs {name}, which is not known to be read-only"),
            );
        };
        if (name == "rsync" || name == "scp") && is_remote(&target.text) {
            return Own(
                Class::Mutating,
                format!("copies files to another machine ({name})"),
            );
        }
        if name == "mv" {
            for source in paths.iter().take(paths.len().saturating_sub(1)) {
                if let Some(why) = self.deletion_outside(source) {
                    return Own(Class::Dangerous, format!("moves files away: {why}"));
                }
            }
        }
        let verb = match name {
            "mv" => "moves files into",
            "ln" => "links",
            _ => "copies files into",
        };
        match self.path_verdict(&target, name, verb) {
            Own(Class::Mutating, _) if name == "rsync" && has_long(args, "--delete") => Own(
                Class::Mutating,
                format!(
                    "mirrors files into {} and deletes extras (rsync --delete)",
                    target.text
                ),
            ),
            verdict => verdict,
        }
    }

    fn permissions(&mut self, name: &str, args: &[Word]) -> Judged {
        let recursive = has_short(args, 'R') || has_long(args, "--recursive");
        let mut paths = positionals(args, &[]);
        if !options(args).any(|o| o.starts_with("--reference")) && !paths.is_empty() {
            paths.remove(0);
        }
        for path in &paths {
            if path.literal && path.text.trim_end_matches('/').is_empty() {
                return Own(
                    Class::Dangerous,
                    format!("changes ownership or permissions of / ({name})"),
                );
            }
            match self.locate(path) {
                Location::Inside | Location::Temp => {}
                _ if recursive => {
                    return Own(
                        Class::Dangerous,
                        format!(
                            "changes permissions recursively outside the workspace ({name} -R {})",
                            path.text
                        ),
                    );
                }
                _ => {
                    return Own(
                        Class::Dangerous,
                        format!(
                            "changes permissions outside the workspace ({name} {})",
                            path.text
                        ),
                    );
                }
            }
        }
        Own(
            Class::Mutating,
            format!("changes file permissions ({name})"),
        )
    }

    fn sed(&mut self, args: &[Word]) -> Judged {
        // `-i`, `-i.bak` and clusters like `-ni` all edit in place; no other short option has an `i`.
        let in_place = options(args)
            .any(|o| o.starts_with("--in-place") || (!o.starts_with("--") && o.contains('i')));
        let scripted = option_value(args, &["-e", "--expression", "-f", "--file"]);
        let positional = positionals(
            args,
            &["-e", "--expression", "-f", "--file", "-l", "--line-length"],
        );
        let (script, files): (Option<&Word>, Vec<&Word>) = match &scripted {
            Some(s) => (Some(s), positional),
            None => (
                positional.first().copied(),
                positional.iter().skip(1).copied().collect(),
            ),
        };
        if in_place {
            return self.targets("sed -i", &files, "edits in place");
        }
        if script.is_some_and(|s| sed_writes(&s.text)) {
            return Own(
                Class::Mutating,
                "writes files or runs commands from its script (sed w/e)".into(),
            );
        }
        Own(Class::ReadOnly, "only reads (sed)".into())
    }

    fn find(&mut self, args: &[Word]) -> Judged {
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
                        self.judge_and_push(&payload, Vec::new());
                    }
                    reason = "runs a command on every file it finds (find -exec)".into();
                    i = end;
                }
                "-delete" => {
                    class = Class::Dangerous;
                    reason = "deletes every file it matches (find -delete)".into();
                }
                "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
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

    fn fd(&mut self, args: &[Word]) -> Judged {
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
            self.judge_and_push(&args[at + 1..end], Vec::new());
        }
        Own(
            Class::ReadOnly,
            "runs a command on every file it finds (fd -x)".into(),
        )
    }

    fn download(&mut self, name: &str, args: &[Word]) -> Judged {
        let out = if name == "curl" {
            option_value(args, &["-o", "--output", "--output-dir"])
        } else {
            option_value(
                args,
                &["-O", "--output-document", "-P", "--directory-prefix"],
            )
        };
        match out {
            Some(target) => match self.write_verdict(&target, name) {
                Own(Class::ReadOnly, _) => {
                    Own(Class::Mutating, format!("makes network requests ({name})"))
                }
                verdict => verdict,
            },
            None => Own(Class::Mutating, format!("makes network requests ({name})")),
        }
    }

    fn tar(&mut self, args: &[Word]) -> Judged {
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
}

fn is_remote(target: &str) -> bool {
    target
        .split('/')
        .next()
        .is_some_and(|head| head.contains(':'))
}

fn shown(paths: &[&Word]) -> String {
    let names: Vec<&str> = paths.iter().map(|w| w.text.as_str()).collect();
    if names.is_empty() {
        "files".into()
    } else {
        names.join(" ")
    }
}

/// Whether a sed script uses the `w`/`W` (write file) or `e` (execute) commands or flags.
fn sed_writes(script: &str) -> bool {
    let bytes = script.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        if !matches!(b, b'w' | b'W' | b'e') {
            return false;
        }
        let after_ok = bytes
            .get(i + 1)
            .is_none_or(|n| n.is_ascii_whitespace() || *n == b';');
        let before = script[..i].trim_end().as_bytes().last().copied();
        after_ok
            && matches!(
                before,
                None | Some(b';' | b'{' | b'}' | b'/' | b'\n' | b'g' | b'p' | b'I')
            )
    })
}

fn awk(name: &str, args: &[Word]) -> Judged {
    if options(args).any(|o| o == "-i" || o.starts_with("--include"))
        || args.iter().any(|a| a.text == "inplace")
    {
        return Own(
            Class::Mutating,
            format!("edits files in place ({name} -i inplace)"),
        );
    }
    if option_value(args, &["-f", "--file"]).is_some() {
        return Own(
            Class::Mutating,
            format!("runs an {name} program from a file"),
        );
    }
    let program = positionals(args, &["-F", "-v", "--field-separator", "--assign"])
        .first()
        .map(|w| w.text.clone());
    match program {
        Some(p) if awk_writes(&p) => Own(
            Class::Mutating,
            format!("writes files or runs commands from its program ({name})"),
        ),
        _ => Own(Class::ReadOnly, format!("only reads ({name})")),
    }
}

/// `system(...)`, pipes to or from commands, and `print > file` inside an awk program.
fn awk_writes(program: &str) -> bool {
    if program.contains("system") || program.contains('|') {
        return true;
    }
    program.split([';', '}', '{', '\n']).any(|statement| {
        let s = statement.trim_start();
        (s.starts_with("print") || s.starts_with("printf")) && s.contains('>')
    })
}
