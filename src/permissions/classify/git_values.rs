//! git's options whose value git hands to a shell (`clone --upload-pack=CMD`,
//! `difftool -x CMD`, `grep -O CMD`, `push --exec`): the value is judged as a command line of
//! its own, so `--upload-pack='rm -rf ~'` is as dangerous as `rm -rf ~`, and deny rules on the
//! program it names hold. Also the commands `submodule foreach` and `bisect run` execute.

use crate::permissions::classify::opts::long_is;
use crate::permissions::classify::{Walker, Word};

impl Walker {
    /// Options whose value git hands to a shell (`clone --upload-pack=CMD`, `difftool -x CMD`,
    /// `grep -O CMD`, `push --exec`): the value is judged as a command line of its own.
    pub(crate) fn git_command_values(&mut self, sub: &str, rest: &[Word]) {
        // `git submodule foreach CMD` runs a shell string; `git bisect run CMD ARGS` a command.
        if sub == "submodule"
            && let Some(at) = rest.iter().position(|w| w.text == "foreach")
        {
            let code: Vec<&Word> = rest[at + 1..]
                .iter()
                .skip_while(|w| w.text.starts_with('-'))
                .collect();
            if !code.is_empty() {
                let text: Vec<&str> = code.iter().map(|w| w.text.as_str()).collect();
                let literal = code.iter().all(|w| w.literal);
                self.shell_string(&Word::literal(text.join(" ")), literal);
            }
        }
        if sub == "bisect" && rest.first().is_some_and(|w| w.text == "run") && rest.len() > 1 {
            self.judge_and_push(&rest[1..], Vec::new());
        }
        let short = match sub {
            "clone" | "fetch" | "pull" | "ls-remote" | "archive" => "-u",
            "difftool" | "mergetool" => "-x",
            "grep" => "-O",
            _ => "",
        };
        let long = [
            "--upload-pack",
            "--receive-pack",
            "--exec",
            "--extcmd",
            "--open-files-in-pager",
        ];
        for (i, arg) in rest.iter().enumerate() {
            let a = arg.text.as_str();
            if a == "--" {
                break;
            }
            let value = if !short.is_empty() && a == short {
                rest.get(i + 1).cloned()
            } else if !short.is_empty() && a.starts_with(short) && !a.starts_with("--") {
                Some(Word::literal(&a[short.len()..]))
            } else if let Some(name) = long
                .iter()
                .find(|l| long_is(a.split('=').next().unwrap_or(a), l))
            {
                match a.split_once('=') {
                    Some((_, v)) => Some(Word::literal(v)),
                    None if a.len() > 2 => rest.get(i + 1).cloned().filter(|_| !name.is_empty()),
                    None => None,
                }
            } else {
                None
            };
            if let Some(code) = value.filter(|v| !v.text.is_empty()) {
                self.shell_string(&Word::literal(&code.text), code.literal && arg.literal);
            }
        }
    }
}
