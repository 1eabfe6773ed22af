//! Commands that delete, copy, write or edit files: where their targets land (inside the
//! workspace, the temp directory, or outside) decides between mutating and dangerous.
//! Also `cd` (later relative paths move with it); `find`, `fd` and `tar` are judged in
//! `tree_commands.rs`.

use std::path::{Path, PathBuf};

use crate::permissions::classify::commands::{
    CommandJudged, has_long, has_short, option_value, options, positionals,
};
use crate::permissions::classify::load::sort_buffer;
use crate::permissions::classify::opts::{effectful_option, spec};
use crate::permissions::classify::text_tools::awk;
use crate::permissions::classify::words::is_input;
use crate::permissions::classify::{Class, Location, Walker, Word, is_harmless_device};

use CommandJudged::Own;

impl Walker {
    pub(crate) fn judge_files(&mut self, name: &str, args: &[Word]) -> Option<CommandJudged> {
        Some(match name {
            "cd" | "pushd" => self.change_dir(args),
            "rm" => self.rm(args),
            "rmdir" | "unlink" => self.targets(name, &positionals(args, &[]), "deletes"),
            "cp" | "mv" | "ln" | "install" => self.copy(name, args),
            "rsync" | "scp" => self.copy(name, args),
            "sftp" => Own(
                Class::Dangerous,
                "opens a file transfer to another machine (sftp), which can upload files".into(),
            ),
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
            "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => awk(name, args),
            "find" => self.find(args),
            "fd" | "fdfind" => self.fd(args),
            // Other spellings of `-o` (attached, abbreviated) fall to the option check.
            "sort" => {
                let write = option_value(args, &["-o", "--output"])
                    .map(|out| self.write_verdict(&out, "sort -o"));
                // An option that runs a program (`--compress-program`) says more: the
                // option check after this reports it.
                let runs = spec("sort").and_then(|spec| effectful_option(spec, args));
                match (write, sort_buffer(args)) {
                    (Some(Own(class, why)), _) if class > Class::ReadOnly => Own(class, why),
                    (_, Some(why)) if runs.is_none() => Own(Class::Mutating, why),
                    _ => return None,
                }
            }
            "uniq" | "xxd" => match positionals(
                args,
                if name == "uniq" {
                    &["-f", "-s", "-w"]
                } else {
                    &["-c", "-g", "-l", "-n", "-o", "-s"]
                },
            )
            .get(1)
            {
                Some(out) if !has_short(args, 'r') || name == "xxd" => {
                    self.write_verdict(out, name)
                }
                _ => Own(Class::ReadOnly, format!("only reads ({name})")),
            },
            // Programs that write files named by an operand or an option: the place decides
            // how bad; writing anywhere is at least mutating.
            "split" | "csplit" | "patch" | "unzip" => {
                let target = match name {
                    "split" => positionals(args, &["-a", "-b", "-C", "-l", "-n", "-t"])
                        .get(1)
                        .map(|w| (*w).clone()),
                    "csplit" => option_value(args, &["-f", "--prefix"]),
                    "patch" => option_value(args, &["-o", "--output", "-d", "--directory"])
                        .or_else(|| {
                            positionals(args, &["-p", "-i", "-F", "-r", "-B", "-z", "-V", "-D"])
                                .first()
                                .map(|w| (*w).clone())
                        }),
                    _ => option_value(args, &["-d"]),
                };
                let lists = name == "unzip"
                    && ["-l", "-v", "-t", "-Z", "-p", "-z"]
                        .iter()
                        .any(|o| args.first().is_some_and(|a| a.text == *o));
                match target.map(|t| self.write_verdict(&t, name)) {
                    _ if lists => Own(Class::ReadOnly, "lists an archive (unzip -l)".into()),
                    Some(Own(class, why)) if class > Class::ReadOnly => Own(class, why),
                    _ => Own(Class::Mutating, format!("writes files ({name})")),
                }
            }
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

    fn change_dir(&mut self, args: &[Word]) -> CommandJudged {
        let target = positionals(args, &[]).first().map(|w| (*w).clone());
        self.cwd = match target {
            None => self.places.home.clone(),
            Some(w) if w.text == "-" => None,
            Some(w) => self.expand_dir(&w),
        };
        Own(Class::ReadOnly, "changes the directory".into())
    }

    fn expand_dir(&self, w: &Word) -> Option<PathBuf> {
        self.path_from(self.cwd.as_deref()?, w)
    }

    /// The path a literal word names, relative ones resolved against `base` (`~` is home).
    pub(crate) fn path_from(&self, base: &Path, w: &Word) -> Option<PathBuf> {
        if !w.literal {
            return None;
        }
        let path = if w.text == "~" {
            self.places.home.clone()?
        } else if let Some(rest) = w.text.strip_prefix("~/") {
            self.places.home.as_ref()?.join(rest)
        } else {
            PathBuf::from(&w.text)
        };
        Some(if path.is_absolute() {
            path
        } else {
            base.join(path)
        })
    }

    fn rm(&mut self, args: &[Word]) -> CommandJudged {
        if let Some(via) = self.mass {
            return Own(
                Class::Dangerous,
                format!("deletes every file named by its input ({via} rm)"),
            );
        }
        let recursive =
            has_short(args, 'r') || has_short(args, 'R') || has_long(args, "--recursive");
        let force = has_short(args, 'f') || has_long(args, "--force");
        let paths = positionals(args, &[]);
        for path in &paths {
            if let Some(why) = self.deletion_outside(path) {
                return Own(Class::Dangerous, why);
            }
            self.protected_write(path);
        }
        match (recursive, force) {
            (true, true) => Own(
                Class::Dangerous,
                "deletes recursively and without asking (rm -rf)".into(),
            ),
            (true, false) => Own(Class::Dangerous, "deletes recursively (rm -r)".into()),
            // Named files inside the workspace: -f only skips the question for read-only
            // files and missing ones, which deletes no more than `rm` of the same names.
            (false, true) if !paths.is_empty() && paths.iter().all(|p| named_file(p)) => {
                Own(Class::Mutating, format!("deletes {}", shown(&paths)))
            }
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
    pub(crate) fn targets(&mut self, name: &str, paths: &[&Word], verb: &str) -> CommandJudged {
        let from_input = paths.iter().any(|p| is_input(p));
        let paths: Vec<&Word> = paths.iter().copied().filter(|p| !is_input(p)).collect();
        if paths.is_empty() && (name != "tee" || from_input) {
            // Via `xargs` or `find -exec` the paths come from the input.
            if let Some(via) = self.mass.filter(|_| verb == "deletes") {
                return Own(
                    Class::Dangerous,
                    format!("deletes every file named by its input ({via} {name})"),
                );
            }
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

    pub(crate) fn path_verdict(&self, path: &Word, name: &str, verb: &str) -> CommandJudged {
        let shown = &path.text;
        if path.literal && is_harmless_device(shown) {
            return Own(Class::ReadOnly, format!("only reads ({name})"));
        }
        let location = self.locate(path);
        if let Some(why) = self.protected_write(path) {
            let class = if location == Location::Inside {
                Class::Mutating
            } else {
                Class::Dangerous
            };
            return Own(class, format!("{why} ({name})"));
        }
        match location {
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

    pub(crate) fn write_verdict(&self, target: &Word, name: &str) -> CommandJudged {
        match self.write_target(target) {
            Some((class, why)) => Own(class, format!("{why} ({name})")),
            None => Own(Class::ReadOnly, format!("only reads ({name})")),
        }
    }

    fn copy(&mut self, name: &str, args: &[Word]) -> CommandJudged {
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
                Class::Dangerous,
                format!(
                    "uploads files to another machine ({name} to {})",
                    target.text
                ),
            );
        }
        if (name == "rsync" || name == "scp")
            && paths
                .iter()
                .take(paths.len().saturating_sub(1))
                .any(|p| is_remote(&p.text))
        {
            // A download: where it lands decides.
            return match self.path_verdict(&target, name, "downloads into") {
                Own(Class::ReadOnly, _) => {
                    Own(Class::Mutating, format!("downloads files ({name})"))
                }
                verdict => verdict,
            };
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

    fn permissions(&mut self, name: &str, args: &[Word]) -> CommandJudged {
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

    fn download(&mut self, name: &str, args: &[Word]) -> CommandJudged {
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
}

fn is_remote(target: &str) -> bool {
    target
        .split('/')
        .next()
        .is_some_and(|head| head.contains(':'))
}

/// A path written out in full: no glob, no expansion, not a directory's own name.
fn named_file(path: &Word) -> bool {
    let text = path.text.as_str();
    path.literal
        && !text.is_empty()
        && !text.contains(['*', '?', '[', '{', '~', '$'])
        && !text.ends_with('/')
        && !matches!(text.rsplit('/').next(), Some("." | ".."))
}

fn shown(paths: &[&Word]) -> String {
    let names: Vec<&str> = paths.iter().map(|w| w.text.as_str()).collect();
    if names.is_empty() {
        "files".into()
    } else {
        names.join(" ")
    }
}
