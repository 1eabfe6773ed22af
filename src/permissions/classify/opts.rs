//! Options at the level of one program's getopt rules: which options of a "read-only"
//! program write files or run commands (`sort -o`, `rg --pre`, `tree -o`, `man -P`), found in
//! every spelling getopt accepts: clusters (`-rno out`), attached values (`-oout`,
//! `--output=out`) and GNU's abbreviations of long options (`--out=x`).
//!
//! Programs come in three kinds. Those in `NO_EFFECT_OPTIONS` have no option that writes or
//! runs anything (checked against their manuals): every option is read-only. Those with an
//! entry in `SPECS` are read-only only without the listed options. Everything else is not
//! known to be read-only at all.

use crate::permissions::classify::Word;

/// Programs that only read whatever options they get.
pub(crate) const NO_EFFECT_OPTIONS: &[&str] = &[
    "ls",
    "ll",
    "la",
    "dir",
    "vdir",
    "cat",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "zgrep",
    "wc",
    "echo",
    "pwd",
    "which",
    "whereis",
    "type",
    "whatis",
    "apropos",
    "cut",
    "tr",
    "jq",
    "du",
    "df",
    "stat",
    "printenv",
    "cal",
    "uname",
    "id",
    "whoami",
    "groups",
    "uptime",
    "ps",
    "zipinfo",
    "pgrep",
    "pidof",
    "free",
    "lsblk",
    "lscpu",
    "nproc",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "true",
    "false",
    "test",
    "[",
    "sleep",
    "seq",
    "diff",
    "cmp",
    "comm",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
    "hexdump",
    "od",
    "strings",
    "nl",
    "tac",
    "rev",
    "fold",
    "fmt",
    "column",
    "paste",
    "join",
    "expand",
    "unexpand",
    "help",
    "locale",
    "getconf",
    "nm",
    "objdump",
    "readelf",
    "size",
    "tokei",
    "exa",
    "eza",
    "lsd",
    "cd",
    "pushd",
    "popd",
    "dirs",
    "wait",
    ":",
    "exit",
    "return",
    "break",
    "continue",
    "shift",
    "getent",
    "who",
    "w",
    "zcat",
    "bzcat",
    "xzcat",
    "base64",
    "numfmt",
    "expr",
    "factor",
    "lsmod",
    "tput",
    "look",
    "arch",
    "users",
    "shopt",
    "export",
    "set",
    "unset",
    "local",
    "declare",
    "typeset",
    "readonly",
    "read",
    "dirs",
    "cargo-metadata",
];

/// A program whose options are read-only except `short` letters and `long` names.
pub(crate) struct Spec {
    pub name: &'static str,
    /// Short options that write or run something.
    pub short: &'static str,
    /// Short options that take a value (the rest of a cluster after them is that value).
    pub short_values: &'static str,
    /// Long options that write or run something (GNU abbreviations of them count too).
    pub long: &'static [&'static str],
}

/// Read-only programs with options that are not.
///
/// `less` (and `more`, `zless`) stays read-only: cairn runs commands without a terminal, and
/// without one less only copies its input like `cat`, so its interactive `!cmd`, `|cmd` and
/// `v` (editor) cannot be reached. What does run without a terminal is held: `+cmd` start-up
/// commands, `-o`/`--log-file` (writes), `-k`/`--lesskey-*` (key bindings that run commands),
/// and `LESSOPEN`/`LESSCLOSE` (judged as the commands they are, see `builtins.rs`).
pub(crate) const SPECS: &[Spec] = &[
    Spec {
        name: "sort",
        short: "o",
        short_values: "kotST",
        long: &["--output", "--compress-program", "--files0-from"],
    },
    Spec {
        name: "tree",
        short: "oR",
        short_values: "oPILHT",
        long: &["--fromfile"],
    },
    Spec {
        name: "rg",
        short: "",
        short_values: "ABCEefgMmjrtTd",
        long: &["--pre", "--pre-glob", "--hostname-bin"],
    },
    Spec {
        name: "ag",
        short: "",
        short_values: "ABCGgmp",
        long: &["--pager"],
    },
    Spec {
        name: "ack",
        short: "",
        short_values: "ABCgm",
        long: &["--pager", "--output", "--ackrc", "--env"],
    },
    Spec {
        name: "bat",
        short: "",
        short_values: "lmrHd",
        long: &["--pager", "--paging"],
    },
    Spec {
        name: "batcat",
        short: "",
        short_values: "lmrHd",
        long: &["--pager", "--paging"],
    },
    Spec {
        name: "less",
        short: "oOk",
        short_values: "bhjkoOpPtTxyz#",
        long: &[
            "--log-file",
            "--LOG-FILE",
            "--lesskey-file",
            "--lesskey-src",
            "--lesskey-content",
            "--tag",
            "--tag-file",
        ],
    },
    Spec {
        name: "more",
        short: "",
        short_values: "n",
        long: &[],
    },
    Spec {
        name: "zless",
        short: "oOk",
        short_values: "bhjkoOpPtTxyz#",
        long: &[
            "--log-file",
            "--LOG-FILE",
            "--lesskey-file",
            "--lesskey-src",
        ],
    },
    Spec {
        name: "man",
        short: "PHXCpR",
        short_values: "CMPSeLmprEIT",
        long: &[
            "--pager",
            "--html",
            "--gxditview",
            "--config-file",
            "--preprocessor",
            "--recode",
        ],
    },
    Spec {
        name: "info",
        short: "o",
        short_values: "dfnoO",
        long: &["--output", "--dribble", "--restore", "--init-file"],
    },
    Spec {
        name: "file",
        short: "C",
        short_values: "emfFP",
        long: &["--compile"],
    },
    Spec {
        name: "iconv",
        short: "o",
        short_values: "oft",
        long: &["--output"],
    },
    Spec {
        name: "tldr",
        short: "u",
        short_values: "pL",
        long: &["--update"],
    },
    Spec {
        name: "scc",
        short: "o",
        short_values: "ofMi",
        long: &["--output", "--format-multi"],
    },
    Spec {
        name: "date",
        short: "s",
        short_values: "dfrsI",
        long: &["--set"],
    },
    Spec {
        name: "hostname",
        short: "bF",
        short_values: "F",
        long: &["--boot", "--file"],
    },
    Spec {
        name: "history",
        short: "cdanrws",
        short_values: "d",
        long: &[],
    },
    Spec {
        name: "hash",
        short: "p",
        short_values: "p",
        long: &[],
    },
    Spec {
        name: "enable",
        short: "fdn",
        short_values: "f",
        long: &[],
    },
];

pub(crate) fn spec(name: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.name == name)
}

/// The first option in `args` that `spec` says is not read-only, as typed; an option only
/// known at run time (`"$OPT"`) counts, since it could be any of them.
pub(crate) fn effectful_option(spec: &Spec, args: &[Word]) -> Option<String> {
    for (i, arg) in args.iter().enumerate() {
        let a = arg.text.as_str();
        if a == "--" {
            return None;
        }
        if !arg.literal {
            if could_be_option(arg) && (!spec.short.is_empty() || !spec.long.is_empty()) {
                return Some(a.to_string());
            }
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            if spec
                .long
                .iter()
                .any(|l| l.trim_start_matches('-').starts_with(name) && name.len() >= 2)
            {
                return Some(a.to_string());
            }
            continue;
        }
        let Some(cluster) = a.strip_prefix('-') else {
            continue;
        };
        if i > 0 && takes_value(spec, &args[i - 1]) {
            continue;
        }
        for c in cluster.chars() {
            if spec.short.contains(c) {
                return Some(a.to_string());
            }
            if spec.short_values.contains(c) {
                break;
            }
        }
    }
    None
}

/// Whether `arg` is a short option cluster ending in a letter that takes the next word.
fn takes_value(spec: &Spec, arg: &Word) -> bool {
    let a = arg.text.as_str();
    a.starts_with('-')
        && !a.starts_with("--")
        && a.chars()
            .last()
            .is_some_and(|c| spec.short_values.contains(c))
        && a[1..]
            .chars()
            .position(|c| spec.short_values.contains(c))
            .is_some_and(|p| p + 2 == a.len())
}

/// Whether a word only known at run time could expand to an option.
pub(crate) fn could_be_option(arg: &Word) -> bool {
    let t = arg.text.trim_start_matches('"');
    t.starts_with('$')
        || t.starts_with('`')
        || t.starts_with('-')
        || crate::permissions::classify::words::is_input(arg)
}

/// A GNU long option `typed` (`--out=x`) abbreviates or names `full` (`--output`).
pub(crate) fn long_is(typed: &str, full: &str) -> bool {
    let Some(name) = typed.strip_prefix("--") else {
        return false;
    };
    let name = name.split('=').next().unwrap_or(name);
    name.len() >= 2 && full.trim_start_matches('-').starts_with(name)
}
