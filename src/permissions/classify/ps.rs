//! `ps` options that print other processes' environments, where the user's shell may hold API
//! keys. procps-ng (Linux) has one: BSD's `e` ("show the environment after the command"), in
//! any cluster (`ps e`, `ps axe`, `ps ewwp 1`, `ps e1`). A dash cluster is UNIX syntax, where
//! `-e` means "every process" and prints no environment (`ps -e`, `ps -ef`, `ps -eo pid,args`
//! stay read-only), but procps re-reads a dash cluster as BSD when it fails as UNIX: `-axe`
//! (no UNIX `x`) and `-auxe` (no user named `xe`) print environments too. Options only known at
//! run time could be `e`.

use crate::permissions::classify::Word;

/// UNIX-syntax letters of procps-ng's ps.
const UNIX_LETTERS: &str = "AaCcDdeFfGgHjLlMmNnOoPpqrSsTtUuVwyZ";
/// UNIX letters that take a value (attached or in the next word).
const UNIX_VALUES: &str = "CDGgnOopqstUu";
/// BSD letters that take a value.
const BSD_VALUES: &str = "OopUtkN";
/// Long options that take the next word as their value (without `=`).
const LONG_VALUES: &[&str] = &[
    "--cols",
    "--columns",
    "--width",
    "--rows",
    "--lines",
    "--format",
    "--pid",
    "--ppid",
    "--quick-pid",
    "--sid",
    "--tty",
    "--user",
    "--User",
    "--group",
    "--Group",
    "--sort",
    "--date-format",
];

/// Whether `ps ARGS` prints other processes' environments.
pub(crate) fn ps_prints_environments(args: &[Word]) -> bool {
    let mut value_next = false;
    for arg in args {
        if std::mem::take(&mut value_next) {
            continue;
        }
        if !arg.literal {
            return true;
        }
        let a = arg.text.as_str();
        if let Some(long) = a.strip_prefix("--") {
            value_next = !long.contains('=') && LONG_VALUES.contains(&a);
            continue;
        }
        if let Some(cluster) = a.strip_prefix('-') {
            match unix_cluster(cluster) {
                Cluster::Environment => return true,
                Cluster::ValueNext => value_next = true,
                Cluster::Done => {}
            }
            continue;
        }
        if a.starts_with(|c: char| c.is_ascii_digit()) {
            // A process list.
            continue;
        }
        match bsd_cluster(a) {
            Cluster::Environment => return true,
            Cluster::ValueNext => value_next = true,
            Cluster::Done => {}
        }
    }
    false
}

enum Cluster {
    Environment,
    ValueNext,
    Done,
}

/// A UNIX cluster (`-ef`, `-eo`, `-auxe`) after its dash.
fn unix_cluster(cluster: &str) -> Cluster {
    for (k, c) in cluster.char_indices() {
        if !UNIX_LETTERS.contains(c) {
            // Not UNIX syntax: procps tries it as BSD, where `e` is the environment.
            return if cluster.contains('e') {
                Cluster::Environment
            } else {
                Cluster::Done
            };
        }
        if UNIX_VALUES.contains(c) {
            let rest = &cluster[k + c.len_utf8()..];
            if rest.is_empty() {
                return Cluster::ValueNext;
            }
            // `-auxe`: a value no user or process has makes procps read it all as BSD.
            return if rest.contains('e') {
                Cluster::Environment
            } else {
                Cluster::Done
            };
        }
    }
    Cluster::Done
}

/// A BSD cluster (`aux`, `axe`, `ewwp1`, `o pid`).
fn bsd_cluster(cluster: &str) -> Cluster {
    for (k, c) in cluster.char_indices() {
        if c == 'e' {
            return Cluster::Environment;
        }
        if BSD_VALUES.contains(c) {
            return if cluster[k + c.len_utf8()..].is_empty() {
                Cluster::ValueNext
            } else {
                Cluster::Done
            };
        }
    }
    Cluster::Done
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split(' ')
            .filter(|w| !w.is_empty())
            .map(Word::literal)
            .collect()
    }

    #[test]
    fn every_spelling_of_bsd_e_prints_environments() {
        for spelling in [
            "e",
            "eww",
            "axe",
            "auxe",
            "auxeww",
            "aux e",
            "ewwp 1",
            "ep1",
            "e1",
            "-p 1 e",
            "-ef e",
            "-e e",
            "-o pid,args e",
            "axo pid,args e",
            "ae -p1",
            "-axe",
            "-eax",
            "-xe",
            "-auxe",
            "-auxwwe",
            "-uxe",
            "--forest e",
            "--sort pid e",
        ] {
            assert!(ps_prints_environments(&words(spelling)), "ps {spelling}");
        }
        let run_time = [Word {
            text: "$opts".into(),
            literal: false,
        }];
        assert!(ps_prints_environments(&run_time));
    }

    #[test]
    fn every_process_and_formats_print_no_environment() {
        for spelling in [
            "",
            "aux",
            "ax",
            "-e",
            "-ef",
            "-eF",
            "-ely",
            "-eLf",
            "-eo pid,args",
            "-e -o pid,comm",
            "-ae",
            "-aux",
            "-o user -p 1",
            "-C sleep",
            "-u root",
            "-U e",
            "--user e",
            "--sort=start",
            "-p 1,2",
            "o pid,user",
            "U e",
            "fax",
            "-A",
            "1",
        ] {
            assert!(!ps_prints_environments(&words(spelling)), "ps {spelling}");
        }
    }
}
