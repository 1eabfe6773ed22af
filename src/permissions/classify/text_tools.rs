//! sed and awk read their program from the command line, and both languages can write files
//! and run commands: sed's `e`, `w`, `W` commands and `s///e`, `s///w FILE` flags; awk's
//! `system()`, pipes and `print > FILE` in any statement. Their scripts are parsed here
//! (strings and regular expressions skipped) rather than searched for letters.

use crate::permissions::classify::commands::CommandJudged;
use crate::permissions::classify::opts::could_be_option;
use crate::permissions::classify::{Class, Walker, Word};

use CommandJudged::Own;

/// What a sed script does beyond printing.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct SedEffects {
    /// Files written by `w`, `W` and `s///w`.
    pub writes: Vec<String>,
    /// It runs commands (`e`, `s///e`).
    pub executes: bool,
    /// It could not be parsed: its effects are unknown.
    pub unknown: bool,
}

/// Parses a sed script (GNU syntax) for the commands that write or execute.
pub(crate) fn sed_effects(script: &str) -> SedEffects {
    let mut fx = SedEffects::default();
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let rest_of_line = |i: &mut usize| -> String {
        let start = *i;
        while *i < chars.len() && chars[*i] != '\n' {
            *i += 1;
        }
        chars[start..*i]
            .iter()
            .collect::<String>()
            .trim()
            .to_string()
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() || c == ';' || c == '}' {
            i += 1;
            continue;
        }
        // Addresses: numbers, `$`, `/re/`, `\cREc`, ranges, steps and negation.
        if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+' | '!') {
            i += 1;
            continue;
        }
        if c == '/' || c == '\\' {
            let delim = if c == '\\' {
                i += 1;
                chars.get(i).copied().unwrap_or('/')
            } else {
                '/'
            };
            i = skip_delimited(&chars, i + 1, delim);
            while i < chars.len() && matches!(chars[i], 'I' | 'M') {
                i += 1;
            }
            continue;
        }
        i += 1;
        match c {
            '{' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'x' | 'n' | 'N' | 'p' | 'P' | 'z'
            | 'F' | 'l' | 'L' | 'q' | 'Q' => {
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            '#' | ':' | 'b' | 't' | 'T' | 'v' => {
                while i < chars.len() && chars[i] != '\n' && (c == '#' || chars[i] != ';') {
                    i += 1;
                }
            }
            'a' | 'i' | 'c' => {
                // Text to the end of the line; a trailing backslash continues it.
                while i < chars.len() && chars[i] != '\n' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            'r' | 'R' => {
                rest_of_line(&mut i);
            }
            'w' | 'W' => fx.writes.push(rest_of_line(&mut i)),
            'e' => {
                fx.executes = true;
                rest_of_line(&mut i);
            }
            's' | 'y' => {
                let Some(&delim) = chars.get(i) else {
                    fx.unknown = true;
                    break;
                };
                if delim == '\n' || delim == '\\' {
                    fx.unknown = true;
                    break;
                }
                i = skip_delimited(&chars, i + 1, delim);
                i = skip_delimited(&chars, i, delim);
                if c == 'y' {
                    continue;
                }
                while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}') {
                    match chars[i] {
                        'e' => fx.executes = true,
                        'w' => {
                            i += 1;
                            fx.writes.push(rest_of_line(&mut i));
                            break;
                        }
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | ' ' | '\t' => {}
                        d if d.is_ascii_digit() => {}
                        _ => fx.unknown = true,
                    }
                    i += 1;
                }
            }
            _ => {
                fx.unknown = true;
                break;
            }
        }
    }
    fx
}

/// The index after the closing `delim`, honouring backslash escapes.
fn skip_delimited(chars: &[char], mut i: usize, delim: char) -> usize {
    while i < chars.len() {
        if chars[i] == '\\' {
            i += 2;
            continue;
        }
        if chars[i] == delim {
            return i + 1;
        }
        i += 1;
    }
    i
}

impl Walker {
    pub(crate) fn sed(&mut self, args: &[Word]) -> CommandJudged {
        let mut scripts: Vec<Word> = Vec::new();
        let mut files: Vec<&Word> = Vec::new();
        let mut in_place = false;
        let mut sandbox = false;
        let mut i = 0;
        let mut options_done = false;
        while i < args.len() {
            let arg = &args[i];
            let a = arg.text.as_str();
            i += 1;
            if options_done || !a.starts_with('-') || a == "-" {
                if !arg.literal && !options_done && could_be_option(arg) && scripts.is_empty() {
                    return Own(
                        Class::Mutating,
                        format!("runs sed with options only known at run time ({a})"),
                    );
                }
                files.push(arg);
                continue;
            }
            if a == "--" {
                options_done = true;
                continue;
            }
            if let Some(long) = a.strip_prefix("--") {
                let (name, value) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (long, None),
                };
                let known = [
                    "expression",
                    "file",
                    "in-place",
                    "quiet",
                    "silent",
                    "regexp-extended",
                    "separate",
                    "null-data",
                    "unbuffered",
                    "line-length",
                    "posix",
                    "debug",
                    "sandbox",
                    "binary",
                    "follow-symlinks",
                    "zero-terminated",
                    "help",
                    "version",
                ];
                let Some(full) = known
                    .iter()
                    .find(|k| !name.is_empty() && k.starts_with(name))
                else {
                    return Own(
                        Class::Mutating,
                        format!("runs sed with an unknown option ({a})"),
                    );
                };
                let value = match (value, *full) {
                    (Some(v), _) => Some(Word {
                        text: v.to_string(),
                        literal: arg.literal,
                    }),
                    (None, "expression" | "file" | "line-length") => {
                        i += 1;
                        args.get(i - 1).cloned()
                    }
                    (None, _) => None,
                };
                match *full {
                    "expression" => scripts.extend(value),
                    "file" => return Own(Class::Mutating, "runs a sed script from a file".into()),
                    "in-place" => in_place = true,
                    "sandbox" => sandbox = true,
                    _ => {}
                }
                continue;
            }
            let cluster: Vec<char> = a[1..].chars().collect();
            for (k, c) in cluster.iter().enumerate() {
                match c {
                    'n' | 'E' | 'r' | 's' | 'z' | 'u' | 'b' => {}
                    'i' => {
                        // `-i[SUFFIX]`: the rest of the cluster is the backup suffix.
                        in_place = true;
                        break;
                    }
                    'e' | 'f' | 'l' => {
                        let rest: String = cluster[k + 1..].iter().collect();
                        let value = if rest.is_empty() {
                            i += 1;
                            args.get(i - 1).cloned()
                        } else {
                            Some(Word {
                                text: rest,
                                literal: arg.literal,
                            })
                        };
                        match c {
                            'e' => scripts.extend(value),
                            'f' => {
                                return Own(
                                    Class::Mutating,
                                    "runs a sed script from a file".into(),
                                );
                            }
                            _ => {}
                        }
                        break;
                    }
                    _ => {
                        return Own(
                            Class::Mutating,
                            format!("runs sed with an unknown option ({a})"),
                        );
                    }
                }
            }
        }
        if scripts.is_empty() && !files.is_empty() {
            scripts.push(files.remove(0).clone());
        }
        if in_place {
            return self.targets("sed -i", &files, "edits in place");
        }
        if sandbox {
            return Own(Class::ReadOnly, "only reads (sed --sandbox)".into());
        }
        let mut worst = Own(Class::ReadOnly, "only reads (sed)".into());
        for script in &scripts {
            if !script.literal {
                return Own(
                    Class::Mutating,
                    format!("runs a sed script only known at run time ({})", script.text),
                );
            }
            let fx = sed_effects(&script.text);
            if fx.executes {
                return Own(
                    Class::Mutating,
                    "runs commands from its script (sed e)".into(),
                );
            }
            if fx.unknown {
                worst = Own(
                    Class::Mutating,
                    "runs a sed script that could not be fully understood".into(),
                );
            }
            for target in &fx.writes {
                let target = Word::literal(target.clone());
                if let Own(class, why) = self.write_verdict(&target, "sed w")
                    && class > Class::ReadOnly
                {
                    return Own(class.max(Class::Mutating), why);
                }
            }
        }
        worst
    }
}

/// awk, gawk, mawk: the program's effects and the options that load or write files.
pub(crate) fn awk(name: &str, args: &[Word]) -> CommandJudged {
    let mut programs: Vec<&Word> = Vec::new();
    let mut positional: Vec<&Word> = Vec::new();
    let mut sandbox = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let a = arg.text.as_str();
        i += 1;
        if !a.starts_with('-')
            || a == "-"
            || !positional.is_empty()
            || !programs.is_empty() && a == "--"
        {
            positional.push(arg);
            continue;
        }
        let value_next = |i: &mut usize| {
            *i += 1;
            args.get(*i - 1)
        };
        match a {
            "--" => {
                positional.extend(&args[i..]);
                break;
            }
            "-F" | "-v" | "--field-separator" | "--assign" => {
                value_next(&mut i);
            }
            "-e" | "--source" => programs.extend(value_next(&mut i)),
            "-S" | "--sandbox" => sandbox = true,
            "-b"
            | "-c"
            | "-C"
            | "-M"
            | "-N"
            | "-n"
            | "-P"
            | "-r"
            | "-s"
            | "-t"
            | "-V"
            | "-h"
            | "--characters-as-bytes"
            | "--traditional"
            | "--posix"
            | "--bignum"
            | "--use-lc-numeric"
            | "--non-decimal-data"
            | "--re-interval"
            | "--no-optimize"
            | "--lint-old"
            | "--version"
            | "--help"
            | "--copyright" => {}
            _ if (a.starts_with("-F") || a.starts_with("-v")) && !a.starts_with("--") => {}
            _ if a.starts_with("--field-separator=") || a.starts_with("--assign=") => {}
            _ if a == "-f" || a.starts_with("--file") || a == "-E" || a.starts_with("--exec") => {
                return Own(
                    Class::Mutating,
                    format!("runs an {name} program from a file"),
                );
            }
            _ if a == "-i"
                || a.starts_with("--include")
                || a == "-l"
                || a.starts_with("--load") =>
            {
                return Own(
                    Class::Mutating,
                    format!("loads {name} code from a file ({a})"),
                );
            }
            _ => {
                return Own(
                    Class::Mutating,
                    format!("runs {name} {a}, which can write files or run commands"),
                );
            }
        }
    }
    if programs.is_empty()
        && let Some(first) = positional.first()
    {
        programs.push(first);
    }
    if sandbox {
        return Own(Class::ReadOnly, format!("only reads ({name} --sandbox)"));
    }
    for program in programs {
        if !program.literal {
            return Own(
                Class::Mutating,
                format!("runs an {name} program only known at run time"),
            );
        }
        if awk_writes(&program.text) {
            return Own(
                Class::Mutating,
                format!("writes files or runs commands from its program ({name})"),
            );
        }
    }
    if positional.iter().skip(1).any(|a| a.text == "inplace") {
        return Own(Class::Mutating, format!("edits files in place ({name})"));
    }
    Own(Class::ReadOnly, format!("only reads ({name})"))
}

/// `system(...)`, pipes to or from commands, `>` or `>>` after `print`/`printf` in any
/// statement, and `@load`/`@include`, outside strings and regular expressions.
pub(crate) fn awk_writes(program: &str) -> bool {
    let code = awk_code(program);
    if code.contains("system") || code.contains('@') || code.contains("|&") {
        return true;
    }
    let bytes = code.as_bytes();
    let pipe = bytes.iter().enumerate().any(|(i, &b)| {
        b == b'|' && bytes.get(i + 1) != Some(&b'|') && (i == 0 || bytes[i - 1] != b'|')
    });
    if pipe {
        return true;
    }
    code.split([';', '}', '{', '\n']).any(|statement| {
        let Some(at) = find_word(statement, "print").or_else(|| find_word(statement, "printf"))
        else {
            return false;
        };
        let after = &statement[at..];
        let mut depth = 0i32;
        after.chars().any(|c| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                '>' if depth <= 0 => return true,
                _ => {}
            }
            false
        })
    })
}

fn find_word(haystack: &str, word: &str) -> Option<usize> {
    let bytes = haystack.as_bytes();
    haystack.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = i.checked_sub(1).map(|b| bytes[b]);
        let after = bytes.get(i + word.len()).copied();
        !before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !after.is_some_and(|a| a.is_ascii_alphanumeric() || a == b'_')
    })
}

/// The program with string literals and regular expressions blanked out.
fn awk_code(program: &str) -> String {
    let mut out = String::with_capacity(program.len());
    let mut chars = program.chars().peekable();
    let mut last_significant = None::<char>;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(d) = chars.next() {
                    if d == '\\' {
                        chars.next();
                    } else if d == '"' {
                        break;
                    }
                }
                out.push_str("\"\"");
                last_significant = Some('"');
            }
            '/' if last_significant.is_none_or(|p| {
                matches!(
                    p,
                    '(' | ',' | '{' | '}' | ';' | '!' | '~' | '&' | '|' | '=' | '\n' | '?' | ':'
                )
            }) =>
            {
                while let Some(d) = chars.next() {
                    if d == '\\' {
                        chars.next();
                    } else if d == '/' {
                        break;
                    }
                }
                out.push_str("//");
                last_significant = Some('/');
            }
            '#' => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
                out.push('\n');
                last_significant = Some('\n');
            }
            _ => {
                out.push(c);
                if !c.is_whitespace() || c == '\n' {
                    last_significant = Some(c);
                }
            }
        }
    }
    out
}
