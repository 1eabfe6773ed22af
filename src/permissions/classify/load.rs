//! Command lines that load the machine rather than change it: a brace expansion bash builds
//! in memory before anything runs (`echo {1..3000000}` took 825 MiB), sort's in-memory buffer
//! (`sort -S 90%`). The per-command limits are the wall; these are judged at least mutating so
//! that they are not run unasked as "read-only".

use tree_sitter::Node;

use crate::permissions::classify::opts::long_is;
use crate::permissions::classify::{Class, Walker, Word, text};

/// More words than this from one brace expansion count as a load on the machine.
pub(crate) const MAX_QUIET_BRACE_WORDS: u128 = 100_000;

impl Walker {
    /// A word with brace ranges (`{1..3000000}`, `{1..2000}{1..2000}`): the number of words it
    /// expands to is the product of its ranges.
    pub(crate) fn brace_load(&mut self, word: Node, src: &str) {
        let count = brace_ranges(text(word, src))
            .map(range_words)
            .fold(1u128, u128::saturating_mul);
        if count > MAX_QUIET_BRACE_WORDS {
            self.push(
                Vec::new(),
                Class::Mutating,
                format!(
                    "expands {} into {count} words, which bash builds in memory",
                    text(word, src)
                ),
            );
        }
    }
}

/// The `{...}` groups of an unquoted word that hold a range (`..`).
fn brace_ranges(word: &str) -> impl Iterator<Item = &str> {
    word.match_indices('{').filter_map(move |(open, _)| {
        let close = open + word[open..].find('}')?;
        let group = &word[open..=close];
        (group.contains("..") && !group[1..].contains('{')).then_some(group)
    })
}

/// How many words a brace range (`{1..10}`, `{a..z}`, `{1..100..5}`) expands to.
fn range_words(range: &str) -> u128 {
    let Some(inner) = range.strip_prefix('{').and_then(|r| r.strip_suffix('}')) else {
        return 1;
    };
    let parts: Vec<&str> = inner.split("..").collect();
    let (start, end) = match parts.as_slice() {
        [a, b] | [a, b, _] => (*a, *b),
        _ => return 1,
    };
    let step = parts
        .get(2)
        .and_then(|s| s.trim_start_matches('-').parse::<u128>().ok())
        .filter(|s| *s > 0)
        .unwrap_or(1);
    let span = match (start.parse::<i128>(), end.parse::<i128>()) {
        (Ok(a), Ok(b)) => a.abs_diff(b),
        // Letter ranges: at most the ASCII letters.
        _ => 60,
    };
    span / step + 1
}

/// `sort -S SIZE` / `--buffer-size=SIZE` in any spelling: a buffer the user did not size.
pub(crate) fn sort_buffer(args: &[Word]) -> Option<String> {
    for (i, arg) in args.iter().enumerate() {
        let a = arg.text.as_str();
        if a == "--" {
            break;
        }
        if long_is(a, "--buffer-size") {
            let size = a
                .split_once('=')
                .map(|(_, v)| v.to_string())
                .or_else(|| args.get(i + 1).map(|v| v.text.clone()))
                .unwrap_or_default();
            return Some(format!("sorts in a buffer of {size} (sort --buffer-size)"));
        }
        if let Some(cluster) = a.strip_prefix('-').filter(|c| !c.starts_with('-')) {
            // Letters before `S` that take a value end the cluster (`-k2S` is a key).
            for (k, c) in cluster.char_indices() {
                if c == 'S' {
                    let rest = &cluster[k + 1..];
                    let size = if rest.is_empty() {
                        args.get(i + 1).map_or("", |v| v.text.as_str())
                    } else {
                        rest
                    };
                    return Some(format!("sorts in a buffer of {size} (sort -S)"));
                }
                if "kotT".contains(c) {
                    break;
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brace_ranges_count_their_words() {
        assert_eq!(range_words("{1..3000000}"), 3_000_000);
        assert_eq!(range_words("{3000000..1}"), 3_000_000);
        assert_eq!(range_words("{-5..5}"), 11);
        assert_eq!(range_words("{1..10..2}"), 5);
        assert_eq!(range_words("{a..z}"), 61);
        assert_eq!(range_words("{a,b}"), 1);
    }

    #[test]
    fn sort_buffers_are_found_in_every_spelling() {
        let words = |s: &str| -> Vec<Word> { s.split(' ').map(Word::literal).collect() };
        for spelling in [
            "-S 10G f",
            "-S10G f",
            "-nS 1G f",
            "-rnS50% f",
            "--buffer-size=1G f",
            "--buffer-size 1G f",
            "--buf=1G f",
        ] {
            assert!(sort_buffer(&words(spelling)).is_some(), "{spelling}");
        }
        for plain in ["-n f", "-k2S f", "-t S f", "-u -r f", "-- -S"] {
            assert!(sort_buffer(&words(plain)).is_none(), "{plain}");
        }
    }
}
