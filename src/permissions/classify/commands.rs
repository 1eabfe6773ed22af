//! What each simple command does, by name: the read-only list, the dangerous families, and
//! the wrappers (`sudo`, `env`, `timeout`, `xargs`, `bash -c`, ...) whose payload is judged
//! as a command of its own. The walker in `classify.rs` calls `judge_and_push` for every
//! simple command it finds; file and developer tools live in sibling modules.

use crate::permissions::classify::opts::{NO_EFFECT_OPTIONS, effectful_option, spec};
use crate::permissions::classify::{Class, Walker, Word};
use crate::secret_stores::SecretStores;

/// Privilege escalation.
pub(crate) const PRIVILEGE: &[&str] = &[
    "sudo", "su", "doas", "pkexec", "runuser", "run0", "sudoedit", "chroot",
];

/// Disk and file-system tools.
const DISK: &[&str] = &[
    "dd",
    "fdisk",
    "sfdisk",
    "cfdisk",
    "gdisk",
    "sgdisk",
    "parted",
    "partprobe",
    "mount",
    "umount",
    "losetup",
    "wipefs",
    "shred",
    "blkdiscard",
    "hdparm",
    "cryptsetup",
    "lvremove",
    "vgremove",
    "pvremove",
    "lvcreate",
    "mdadm",
    "zpool",
    "zfs",
    "fsck",
    "e2fsck",
    "tune2fs",
    "resize2fs",
    "debugfs",
    "swapon",
    "swapoff",
    "badblocks",
    "mke2fs",
    "mkswap",
    "mkfs",
];

const POWER: &[&str] = &["shutdown", "reboot", "halt", "poweroff"];

const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
];

const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "deno",
    "bun",
    "Rscript",
    "tclsh",
    "pwsh",
    "osascript",
    "julia",
];

const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "fetch",
    "aria2c",
    "http",
    "https",
    "xh",
    "lwp-download",
    "nc",
    "ncat",
    "socat",
];

/// Whether a command fetches data from the network (and so must not feed an interpreter).
pub(crate) fn is_download(name: &str) -> bool {
    DOWNLOADERS.contains(&name)
}

pub(crate) fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

pub(crate) fn is_interpreter(name: &str) -> bool {
    INTERPRETERS.contains(&name)
        || ["python", "perl", "ruby", "php", "lua"].iter().any(|p| {
            name.strip_prefix(p)
                .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        })
}

/// The outcome of judging one simple command.
pub(crate) enum CommandJudged {
    /// The command's own class; any payload was already pushed as parts of its own.
    Own(Class, String),
    /// A transparent wrapper (`timeout 5 X`): judge `X`, which starts at this word index.
    Inner(usize),
}

use CommandJudged::{Inner, Own};

/// The program name a command word names: unquoted, absolute paths reduced to their file name.
/// `None` when the name is only known at run time or is a pattern the shell would expand.
pub(crate) fn program_name(word: &Word) -> Option<&str> {
    if !word.literal || word.text.contains(['*', '?', '[', '{']) && word.text != "[" {
        return None;
    }
    Some(word.text.rsplit('/').next().unwrap_or(&word.text))
}

/// The words a rule sees: unquoted, the program's absolute path reduced to its name. git's
/// global options stay: an allow rule on `git status` must not cover `git -c k=v status`
/// (deny and ask rules look past them, see `rules::without_git_globals`).
fn normalized(words: &[Word]) -> Vec<String> {
    words
        .iter()
        .enumerate()
        .map(|(i, w)| match (i, program_name(w)) {
            (0, Some(name)) if w.text.starts_with('/') => name.to_string(),
            _ => w.text.clone(),
        })
        .collect()
}

/// The arguments before `--` that are options.
pub(crate) fn options(args: &[Word]) -> impl Iterator<Item = &str> {
    args.iter()
        .map(|a| a.text.as_str())
        .take_while(|a| *a != "--")
        .filter(|a| a.starts_with('-') && a.len() > 1)
}

/// A short option letter, alone or in a cluster (`-rf` has `r` and `f`).
pub(crate) fn has_short(args: &[Word], letter: char) -> bool {
    options(args).any(|o| !o.starts_with("--") && o[1..].contains(letter))
}

/// A long option, bare or with `=value`.
pub(crate) fn has_long(args: &[Word], long: &str) -> bool {
    options(args).any(|o| o == long || o.strip_prefix(long).is_some_and(|r| r.starts_with('=')))
}

/// The non-option arguments; options in `with_value` consume the next word.
pub(crate) fn positionals<'w>(args: &'w [Word], with_value: &[&str]) -> Vec<&'w Word> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        if a == "--" {
            out.extend(&args[i + 1..]);
            break;
        }
        if a.starts_with('-') && a.len() > 1 && args[i].literal {
            i += if with_value.contains(&a) { 2 } else { 1 };
            continue;
        }
        out.push(&args[i]);
        i += 1;
    }
    out
}

/// The value of an option given as `-o VALUE`, `--out VALUE` or `--out=VALUE`.
pub(crate) fn option_value(args: &[Word], names: &[&str]) -> Option<Word> {
    for (i, a) in args.iter().enumerate() {
        if a.text == "--" {
            break;
        }
        for name in names {
            if a.text == *name {
                return args.get(i + 1).cloned();
            }
            if let Some(v) = a.text.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
                return Some(Word {
                    text: v.to_string(),
                    literal: a.literal,
                });
            }
        }
    }
    None
}

/// Index of the first word after the wrapper's options; `with_value` options take an argument.
pub(crate) fn skip_options(words: &[Word], from: usize, with_value: &[&str]) -> usize {
    let mut i = from;
    while i < words.len() {
        let a = words[i].text.as_str();
        if a == "--" {
            return i + 1;
        }
        if !a.starts_with('-') || a.len() == 1 {
            break;
        }
        i += if with_value.contains(&a) { 2 } else { 1 };
    }
    i
}

impl Walker {
    /// Judges one simple command (after quote removal) and records it, merged with what its
    /// redirections write.
    pub(crate) fn judge_and_push(&mut self, words: &[Word], mut findings: Vec<(Class, String)>) {
        if let Some(why) = words
            .iter()
            .skip(1)
            .find_map(|w| self.secret_argument(w))
            .or_else(|| self.reaches_store(words))
        {
            findings.push((Class::Dangerous, why));
        }
        if words.first().and_then(program_name) == Some("ps")
            && crate::permissions::classify::ps::ps_prints_environments(&words[1..])
        {
            findings.push((
                Class::Dangerous,
                "prints other processes' environments, where secrets live (ps e)".into(),
            ));
        }
        // A command named at run time is whatever it turns out to be: no rule may match it.
        let named = words.first().and_then(program_name).is_some();
        let (class, reason) = match self.judge(words) {
            Own(class, reason) => (class, reason),
            Inner(start) if start < words.len() => {
                return self.judge_and_push(&words[start..], findings);
            }
            Inner(_) => (Class::ReadOnly, "runs nothing".to_string()),
        };
        // A rule names a command, not what its redirections write.
        let redirected = !findings.is_empty();
        let (class, reason) = match findings.into_iter().max_by_key(|f| f.0) {
            Some((worse, why)) if worse > class => (worse, why),
            _ => (class, reason),
        };
        // Inline code, editor commands and unknown programs may write whatever they name.
        if class > Class::ReadOnly
            && let Some(word) = words.iter().skip(1).find(|w| {
                crate::permissions::classify::mentions::mentions_protected(&w.text).is_some()
            })
        {
            self.mark_protected(&word.text);
        }
        self.push(
            if named { normalized(words) } else { Vec::new() },
            class,
            reason,
        );
        if let Some(part) = self.parts.last_mut() {
            part.redirected = redirected;
        }
    }

    fn judge(&mut self, words: &[Word]) -> CommandJudged {
        let Some(first) = words.first() else {
            return Own(Class::ReadOnly, "runs nothing".into());
        };
        let Some(name) = program_name(first).map(str::to_string) else {
            return Own(
                Class::Dangerous,
                format!("names its command at run time ({})", first.text),
            );
        };
        let args = &words[1..];
        if self.downloaded.iter().any(|d| same_file(d, &first.text)) {
            return Own(
                Class::Dangerous,
                format!("runs a downloaded file ({})", first.text),
            );
        }
        if self.functions.contains(&first.text) {
            return Own(
                Class::ReadOnly,
                format!("calls the function {} defined in the command", first.text),
            );
        }
        if args.len() == 1 && matches!(args[0].text.as_str(), "--version" | "--help" | "-V") {
            return Own(
                Class::ReadOnly,
                format!("prints the version or help of {name}"),
            );
        }
        let name = name.as_str();
        if let Some(judged) = self.judge_builtin(name, args) {
            return judged;
        }
        if let Some(judged) = self.judge_outward(name, args) {
            return judged;
        }
        if let Some(judged) = self.judge_wrapper(name, words) {
            return judged;
        }
        if let Some(judged) = self.judge_files(name, args) {
            return judged;
        }
        if let Some(judged) = self.judge_dev(name, args) {
            return judged;
        }
        self.judge_system(name, &first.text, args)
    }

    /// Privilege, disks, power, processes, and everything not known: the last resort.
    fn judge_system(&mut self, name: &str, shown: &str, args: &[Word]) -> CommandJudged {
        if DISK.contains(&name) || name.starts_with("mkfs.") || name.starts_with("fsck.") {
            return Own(
                Class::Dangerous,
                format!("uses a disk or file-system tool ({name})"),
            );
        }
        if POWER.contains(&name) {
            return Own(
                Class::Dangerous,
                format!("shuts down or restarts the machine ({name})"),
            );
        }
        match name {
            "init" | "telinit" if args.iter().any(|a| matches!(a.text.as_str(), "0" | "6")) => {
                return Own(
                    Class::Dangerous,
                    format!("shuts down or restarts the machine ({name})"),
                );
            }
            "systemctl" => return systemctl(args),
            "killall" | "pkill" | "killall5" => {
                return Own(
                    Class::Dangerous,
                    format!("kills processes by name ({name})"),
                );
            }
            "kill" => return kill(args),
            "crontab" if has_short(args, 'r') => {
                return Own(Class::Dangerous, "deletes the crontab (crontab -r)".into());
            }
            // Work left to run later, outside cairn and any sandbox it sets up.
            "crontab" if !has_short(args, 'l') => {
                return Own(
                    Class::Dangerous,
                    "installs a crontab, which runs commands later outside cairn (crontab)".into(),
                );
            }
            "systemd-run" | "at" | "batch" | "launchctl" => {
                return Own(
                    Class::Dangerous,
                    format!("has a service manager run a command later, outside cairn ({name})"),
                );
            }
            // Attaching to a process reads its memory, where the keys of its environment live.
            "gdb" | "lldb" | "ltrace" | "gcore" | "pstack" | "eu-stack" | "perf" | "bpftrace"
                if args.iter().any(|a| {
                    matches!(a.text.as_str(), "-p" | "--pid" | "attach" | "--attach-pid")
                        || a.text.starts_with("--pid=")
                        || a.text.starts_with("-p")
                            && a.text[2..].chars().all(|c| c.is_ascii_digit())
                }) || matches!(name, "gcore" | "pstack" | "eu-stack") =>
            {
                return Own(
                    Class::Dangerous,
                    format!("attaches to a running process and can read its secrets ({name})"),
                );
            }
            _ => {}
        }
        if let Some(judged) = read_only(name, args) {
            return judged;
        }
        if is_download(name) {
            return Own(Class::Mutating, format!("makes network requests ({name})"));
        }
        Own(
            Class::Mutating,
            format!("runs {shown}, which is not known to be read-only"),
        )
    }
}

/// A program known to only read, judged by its options and operands; `None` for others.
fn read_only(name: &str, args: &[Word]) -> Option<CommandJudged> {
    if NO_EFFECT_OPTIONS.contains(&name) {
        return Some(Own(Class::ReadOnly, format!("only reads ({name})")));
    }
    let spec = spec(name)?;
    if let Some(option) = effectful_option(spec, args) {
        return Some(Own(
            Class::Mutating,
            format!("runs {name} {option}, which can write files or run commands"),
        ));
    }
    let operands = positionals(args, &[]);
    let changes = match name {
        // `less +!cmd` and friends run less commands at start.
        "less" | "more" | "zless" => args
            .iter()
            .find(|a| a.text.starts_with('+'))
            .map(|a| format!("runs {name} {}, a start-up command", a.text)),
        "date" => operands
            .iter()
            .find(|a| !a.text.starts_with('+'))
            .map(|a| format!("sets the clock (date {})", a.text)),
        "hostname" => operands
            .first()
            .map(|a| format!("sets the host name (hostname {})", a.text)),
        "history" => operands
            .iter()
            .find(|a| !a.text.chars().all(|c| c.is_ascii_digit()))
            .map(|a| format!("changes the history (history {})", a.text)),
        "enable" if !operands.is_empty() => Some("changes which builtins run (enable)".into()),
        _ => None,
    };
    Some(match changes {
        Some(why) => Own(Class::Mutating, why),
        None => Own(Class::ReadOnly, format!("only reads ({name})")),
    })
}

fn systemctl(args: &[Word]) -> CommandJudged {
    let verb = positionals(args, &["-H", "-M", "-t", "-p", "--type", "--property"])
        .first()
        .map(|w| w.text.clone());
    match verb.as_deref() {
        Some(
            "poweroff" | "reboot" | "halt" | "kexec" | "suspend" | "hibernate" | "rescue"
            | "emergency",
        ) => Own(
            Class::Dangerous,
            "shuts down or restarts the machine (systemctl)".into(),
        ),
        Some(
            "status" | "show" | "list-units" | "list-unit-files" | "is-active" | "is-enabled"
            | "is-failed" | "cat",
        )
        | None => Own(Class::ReadOnly, "only reads (systemctl)".into()),
        Some(_) => Own(
            Class::Mutating,
            "changes system services (systemctl)".into(),
        ),
    }
}

fn kill(args: &[Word]) -> CommandJudged {
    let mut rest = args;
    if let Some(first) = rest.first() {
        let t = first.text.as_str();
        if t == "-s" || t == "-n" {
            rest = rest.get(2..).unwrap_or(&[]);
        } else if t.starts_with('-') && t != "--" {
            rest = &rest[1..];
        }
    }
    if rest
        .iter()
        .any(|a| a.text.contains("$PPID") || a.text.contains("${PPID}"))
    {
        return Own(
            Class::Dangerous,
            "signals its parent, which is cairn itself (kill $PPID)".into(),
        );
    }
    if rest.iter().any(|a| a.text == "-1") {
        return Own(Class::Dangerous, "kills every process (kill -1)".into());
    }
    if args.iter().any(|a| a.text == "-l" || a.text == "-L") {
        return Own(Class::ReadOnly, "lists signals".into());
    }
    Own(Class::Mutating, "sends a signal to a process (kill)".into())
}

/// Commands that never descend into a directory they are given (`ls` only with `-R`).
const NON_DESCENDING: &[&str] = &[
    "cd", "pushd", "ls", "stat", "file", "test", "[", "echo", "printf", "realpath", "readlink",
    "dirname", "basename", "mkdir", "pwd", "type", "which", "command", "touch", "git",
];

impl Walker {
    /// A path argument whose real path is inside a store through a glob (`~/.*/id_rsa`,
    /// `~root/.config/*/hosts.yml`), or a directory above one (`~`, `$HOME`, `/`, `../..`)
    /// given to a command that may walk it (`grep -r`, `rg`, `find`, `du`, `tar c`, `cp -r`).
    fn reaches_store(&self, words: &[Word]) -> Option<String> {
        let program = words.first().and_then(program_name)?;
        let recursive_ls = program == "ls"
            && words[1..].iter().any(|w| {
                w.text == "--recursive"
                    || (w.text.starts_with('-')
                        && !w.text.starts_with("--")
                        && w.text.contains('R'))
            });
        let walks = recursive_ls || !NON_DESCENDING.contains(&program);
        words[1..]
            .iter()
            .filter(|w| !w.text.starts_with('-'))
            .find_map(|w| match self.store_reach(w)? {
                (true, store) => Some(format!(
                    "{} may name the secret store {store}, where keys or credentials live",
                    w.text
                )),
                (false, store) if walks => Some(format!(
                    "walks {}, which holds the secret store {store}",
                    w.text
                )),
                _ => None,
            })
    }

    /// A path argument that reads another process's secrets (`/proc/$PPID/environ`), also
    /// relative to a `cd` into `/proc`.
    fn secret_argument(&self, word: &Word) -> Option<String> {
        use crate::permissions::classify::mentions::reads_secrets;
        if let Some(why) = reads_secrets(&word.text) {
            return Some(why);
        }
        if let Some(why) = names_secret_store(&self.places.secrets, &word.text) {
            return Some(why);
        }
        let cwd = self.cwd.as_ref()?;
        if cwd.starts_with("/proc") && !word.text.starts_with('/') {
            return reads_secrets(&cwd.join(&word.text).to_string_lossy());
        }
        // Relative to a `cd` into the home directory (`cd ~ && cat .ssh/id_rsa`); in the
        // workspace itself the word alone decides (this runs on every word).
        if !word.text.starts_with('/') && *cwd != self.root {
            return names_secret_store(
                &self.places.secrets,
                &cwd.join(&word.text).to_string_lossy(),
            );
        }
        None
    }
}

/// Why an argument names a secret store of `stores` (`~/.ssh/id_rsa`, `$HOME/.aws/credentials`),
/// or `None`. Matched anywhere in the argument, whatever spells the home directory before the
/// store (`~`, `$HOME`, `/root`, `../..`): a command that names one is held in every mode but
/// `never`, even when it only reads.
pub(crate) fn names_secret_store(stores: &SecretStores, text: &str) -> Option<String> {
    // Without a glob, a word naming a store (or a directory above one) spells its first
    // component. This runs on every word of every command, so most words leave here.
    let globbed = text.contains(['*', '?', '[']);
    if !globbed
        && !stores.stores().iter().any(|store| {
            store
                .components
                .first()
                .is_some_and(|c| text.contains(c.as_str()))
        })
    {
        return None;
    }
    use crate::permissions::classify::mentions::Component;
    let parts: Vec<Component> = text
        .split('/')
        .map(|p| p.trim_matches(|c| c == '"' || c == '\''))
        .filter(|p| !p.is_empty() && *p != ".")
        .map(Component::new)
        .collect();
    let matches =
        |w: &[Component], store: &[String]| w.iter().zip(store).all(|(p, s)| p.matches_listed(s));
    stores.stores().iter().find_map(|store| {
        let listed = store.components.as_slice();
        let named = parts.windows(listed.len()).any(|w| matches(w, listed));
        // A directory above a store, under something that spells a home (`~/.config`,
        // `$HOME/.local/share`): a recursive read or copy of it takes the store along.
        let above = (1..listed.len()).any(|k| {
            parts.len() > k
                && !matches!(parts[parts.len() - k - 1], Component::Plain(".."))
                && matches(&parts[parts.len() - k..], &listed[..k])
        });
        (named || above).then(|| {
            format!(
                "names {}, where keys, credentials or cairn's own data live",
                store.spelled
            )
        })
    })
}

/// Whether two spellings name the same file (`./x.sh` and `x.sh`).
pub(crate) fn same_file(a: &str, b: &str) -> bool {
    a.trim_start_matches("./") == b.trim_start_matches("./")
}
