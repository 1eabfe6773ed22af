//! Commands that run another command on their input: `xargs` and GNU `parallel`. What they
//! run gets words from the input, which is only known at run time: a file the model wrote a
//! step before, or another command's output. So the payload is judged with those words in
//! place, as words only known at run time: `xargs sh -c` runs its input as shell code,
//! `xargs env` or `xargs timeout 5` runs a command the input names, `xargs find` takes options
//! from it (`-exec`). Running many of them at once (`-P 0`, a large `-P`) is at least
//! mutating: it is how a command line exhausts the machine's processes.

use crate::permissions::classify::commands::{CommandJudged, skip_options};
use crate::permissions::classify::words::input_word;
use crate::permissions::classify::{Class, Stdin, Walker, Word};

use CommandJudged::Own;

/// More simultaneous commands than this (`xargs -P`) count as a load on the machine.
const MAX_QUIET_PARALLELISM: u64 = 16;

/// What xargs' own options say.
struct XargsOptions {
    /// `-I R`, `-i`, `--replace`: the string replaced by each input line.
    replace: Option<String>,
    /// `-P N` as typed.
    procs: Option<Word>,
    /// The first option xargs does not know.
    unknown: Option<String>,
    /// Where the command starts.
    start: usize,
}

/// Parses xargs' options the way getopt does: clusters (`-0tP4`), attached values (`-I{}`,
/// `-P0`), optional ones (`-i`, `-e`, `-l`), long ones with `=` or the next word.
fn xargs_options(words: &[Word]) -> XargsOptions {
    const REQUIRED: &str = "adEILnPs";
    const OPTIONAL: &str = "eil";
    const FLAGS: &str = "0protx";
    const LONG_WITH_VALUE: &[&str] = &[
        "--arg-file",
        "--delimiter",
        "--eof",
        "--replace",
        "--max-lines",
        "--max-args",
        "--max-procs",
        "--max-chars",
        "--process-slot-var",
    ];
    const LONG_FLAGS: &[&str] = &[
        "--null",
        "--interactive",
        "--verbose",
        "--no-run-if-empty",
        "--exit",
        "--open-tty",
        "--show-limits",
        "--help",
        "--version",
    ];
    let mut out = XargsOptions {
        replace: None,
        procs: None,
        unknown: None,
        start: words.len(),
    };
    let mut i = 1;
    while i < words.len() {
        let w = &words[i];
        let a = w.text.as_str();
        if a == "--" {
            out.start = i + 1;
            return out;
        }
        if !a.starts_with('-') || a.len() == 1 {
            out.start = i;
            return out;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let full = LONG_WITH_VALUE
                .iter()
                .chain(LONG_FLAGS)
                .find(|f| name.len() >= 2 && f[2..].starts_with(name));
            match full {
                Some(&"--replace") => out.replace = Some(value.unwrap_or_else(|| "{}".into())),
                Some(f) if LONG_WITH_VALUE.contains(f) => {
                    let value = match value {
                        Some(v) => Word {
                            text: v,
                            literal: w.literal,
                        },
                        None => {
                            i += 1;
                            words.get(i).cloned().unwrap_or_else(|| Word::literal(""))
                        }
                    };
                    if *f == "--max-procs" {
                        out.procs = Some(value);
                    }
                }
                Some(_) => {}
                None => out.unknown = out.unknown.or(Some(a.to_string())),
            }
            i += 1;
            continue;
        }
        let cluster: Vec<char> = a[1..].chars().collect();
        for (k, c) in cluster.iter().enumerate() {
            let rest: String = cluster[k + 1..].iter().collect();
            if REQUIRED.contains(*c) || OPTIONAL.contains(*c) {
                let value = if !rest.is_empty() {
                    Some(Word {
                        text: rest,
                        literal: w.literal,
                    })
                } else if REQUIRED.contains(*c) {
                    i += 1;
                    words.get(i).cloned()
                } else {
                    None
                };
                match c {
                    'I' | 'i' => {
                        out.replace = Some(value.map_or_else(|| "{}".into(), |v| v.text));
                    }
                    'P' => out.procs = value,
                    _ => {}
                }
                break;
            }
            if !FLAGS.contains(*c) {
                out.unknown = out.unknown.or(Some(a.to_string()));
                break;
            }
        }
        i += 1;
    }
    out
}

impl Walker {
    pub(crate) fn xargs(&mut self, words: &[Word]) -> CommandJudged {
        let options = xargs_options(words);
        let mut own = (
            Class::ReadOnly,
            "runs a command on its input (xargs)".into(),
        );
        if let Some(option) = &options.unknown {
            own = (
                Class::Mutating,
                format!("runs xargs with an unknown option ({option})"),
            );
        }
        if let Some(why) = options.procs.as_ref().and_then(too_parallel) {
            own = (Class::Mutating, why);
        }
        let payload = &words[options.start.min(words.len())..];
        if payload.is_empty() {
            if own.0 == Class::ReadOnly {
                own.1 = "prints its input (xargs)".into();
            }
            return Own(own.0, own.1);
        }
        let payload: Vec<Word> = match &options.replace {
            // Each input line replaces the string wherever it occurs in the command's words.
            Some(replace) if !replace.is_empty() => payload
                .iter()
                .map(|w| {
                    if w.text.contains(replace.as_str()) {
                        Word {
                            text: w.text.clone(),
                            literal: false,
                        }
                    } else {
                        w.clone()
                    }
                })
                .collect(),
            // Otherwise the input's words follow the command's own.
            _ => payload.iter().cloned().chain([input_word()]).collect(),
        };
        let saved = std::mem::replace(&mut self.stdin, Stdin::Inherited);
        let mass = self.mass.replace("xargs");
        self.judge_and_push(&payload, Vec::new());
        self.mass = mass;
        self.stdin = saved;
        Own(own.0, own.1)
    }

    /// GNU parallel: `parallel CMD ::: ARGS` or `parallel CMD < list`; the command runs on
    /// every argument through a shell, so a deletion there is mass deletion. Each input
    /// replaces `{}` (and `{.}`, `{/}`, ...) quoted, or is appended when none is written:
    /// judged as a quoted expansion, what parallel makes of it.
    pub(crate) fn parallel(&mut self, words: &[Word]) -> CommandJudged {
        let with_value = [
            "-j",
            "--jobs",
            "-S",
            "--sshlogin",
            "-a",
            "--arg-file",
            "-d",
            "--delimiter",
            "-n",
            "-N",
            "-I",
            "--results",
            "--joblog",
            "--tmpdir",
            "--workdir",
            "-P",
        ];
        let start = skip_options(words, 1, &with_value);
        let end = words[start.min(words.len())..]
            .iter()
            .position(|w| w.text.starts_with(":::"))
            .map_or(words.len(), |p| start + p);
        if start < end {
            let saved = self.mass.replace("parallel");
            let mut code: Vec<String> = words[start..end].iter().map(|w| w.text.clone()).collect();
            let mut replaced = false;
            for word in &mut code {
                let spliced = replace_parallel_strings(word);
                replaced |= spliced != *word;
                *word = spliced;
            }
            if !replaced {
                code.push(PARALLEL_INPUT.into());
            }
            self.shell_string(
                &Word::literal(code.join(" ")),
                words[start..end].iter().all(|w| w.literal),
            );
            self.mass = saved;
        }
        Own(
            Class::Mutating,
            "runs a command on many inputs in parallel (parallel)".into(),
        )
    }
}

/// What an input becomes in parallel's command: a quoted value only known at run time.
const PARALLEL_INPUT: &str = "\"$PARALLEL_INPUT\"";

/// `word` with parallel's replacement strings (`{}`, `{.}`, `{/}`, `{//}`, `{/.}`, `{3}`,
/// `{2.}`, ...) replaced by the input's expansion.
fn replace_parallel_strings(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after.find('}');
        let inner = close.map(|c| &after[..c]);
        let is_replacement = inner.is_some_and(|s| {
            s.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | '/'))
        });
        match (close, is_replacement) {
            (Some(c), true) => {
                out.push_str(PARALLEL_INPUT);
                rest = &after[c + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Why `-P N` runs too many commands at once, or `None` for a small literal count.
fn too_parallel(procs: &Word) -> Option<String> {
    let shown = &procs.text;
    match procs.text.parse::<u64>() {
        Ok(0) => Some("runs as many commands at once as it can (xargs -P 0)".into()),
        Ok(n) if n > MAX_QUIET_PARALLELISM => {
            Some(format!("runs {n} commands at once (xargs -P {n})"))
        }
        Ok(_) => None,
        Err(_) => Some(format!(
            "runs a number of commands at once only known at run time (xargs -P {shown})"
        )),
    }
}
