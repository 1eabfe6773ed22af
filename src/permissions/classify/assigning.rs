//! Builtins that assign what they read or print to variables they name: `read`, `mapfile`
//! (`readarray`), `printf -v`, `getopts`, `wait -p`. Assigning a loader or start-up variable
//! this way (`read BASH_ENV <<< ./x.sh`) counts like the literal assignment `BASH_ENV=./x.sh`,
//! and so do targets that bash evaluates (`a[$i]`, an integer variable, a name reference).

use crate::permissions::classify::commands::CommandJudged;
use crate::permissions::classify::{Class, Walker, Word};

use CommandJudged::Own;

impl Walker {
    pub(crate) fn judge_assigning(&mut self, name: &str, args: &[Word]) -> Option<CommandJudged> {
        let (targets, callback) = match name {
            "read" => (read_targets(args), None),
            "mapfile" | "readarray" => mapfile_targets(args),
            "printf" => (printf_target(args).into_iter().collect(), None),
            "getopts" => (args.get(1).cloned().into_iter().collect(), None),
            "wait" => (option_values(args, "p", "").into_iter().collect(), None),
            _ => return None,
        };
        if let Some(code) = callback {
            // `mapfile -C CODE` evaluates CODE (with the index and the quoted line appended).
            self.shell_string(&code, code.literal);
        }
        let by = if name == "printf" { "printf -v" } else { name };
        for target in &targets {
            // A code-holding subscript (`read 'a[y]'`) is dangerous, not only mutating.
            self.named_subscript(&target.text);
            if let Some(why) = self.assigned_at_run_time(target, by) {
                return Some(Own(Class::Mutating, why));
            }
        }
        Some(Own(Class::ReadOnly, format!("only reads ({name})")))
    }
}

/// `read [-ers] [-a ARRAY] [-d D] [-i T] [-n N] [-N N] [-p P] [-t T] [-u FD] [NAME...]`.
fn read_targets(args: &[Word]) -> Vec<Word> {
    let mut targets = option_values(args, "a", "dinNptu");
    targets.extend(operands(args, "adinNptu"));
    targets
}

/// `mapfile [-d D] [-n N] [-O O] [-s S] [-t] [-u FD] [-C CODE [-c Q]] [ARRAY]`; the array
/// defaults to `MAPFILE`.
fn mapfile_targets(args: &[Word]) -> (Vec<Word>, Option<Word>) {
    let callback = option_values(args, "C", "dnOsucC").into_iter().next();
    let targets = operands(args, "dnOsucC");
    (targets, callback)
}

/// `printf -v NAME FORMAT ...`: only options before the format count.
fn printf_target(args: &[Word]) -> Option<Word> {
    option_values(args, "v", "v").into_iter().next()
}

/// The values of short option `letter` in the options before the operands; `with_value`
/// are all the letters that take one (in the same word after the letter, or the next word).
fn option_values(args: &[Word], letter: &str, with_value: &str) -> Vec<Word> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.text == "--" || !a.text.starts_with('-') || a.text.len() < 2 {
            break;
        }
        let cluster = &a.text[1..];
        for (k, c) in cluster.char_indices() {
            if with_value.contains(c) || letter.contains(c) {
                let rest = &cluster[k + c.len_utf8()..];
                let value = if rest.is_empty() {
                    i += 1;
                    args.get(i).cloned()
                } else {
                    Some(Word {
                        text: rest.to_string(),
                        literal: a.literal,
                    })
                };
                if letter.contains(c)
                    && let Some(v) = value
                {
                    found.push(v);
                }
                break;
            }
        }
        i += 1;
    }
    found
}

/// The operands after the options (`with_value` letters take a value).
fn operands(args: &[Word], with_value: &str) -> Vec<Word> {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.text == "--" {
            i += 1;
            break;
        }
        if !a.text.starts_with('-') || a.text.len() < 2 {
            break;
        }
        let cluster = &a.text[1..];
        if let Some((k, c)) = cluster
            .char_indices()
            .find(|(_, c)| with_value.contains(*c))
            && k + c.len_utf8() == cluster.len()
        {
            i += 1;
        }
        i += 1;
    }
    args[i.min(args.len())..].to_vec()
}
