//! Small text helpers the file tools share: line cutting, CRLF handling,
//! and lenient argument parsing (models send `"10"` for 10 and `"true"` for true).

use serde::{Deserialize, Deserializer};

/// Cuts `text` to at most `max_chars` characters, on a character boundary. Returns the kept
/// part and whether anything was cut.
pub fn cut_chars(text: &str, max_chars: usize) -> (&str, bool) {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => (&text[..at], true),
        None => (text, false),
    }
}

/// True when the file's lines end in CRLF (judged by its first line break).
pub fn uses_crlf(bytes: &[u8]) -> bool {
    memchr::memchr(b'\n', bytes).is_some_and(|at| at > 0 && bytes[at - 1] == b'\r')
}

/// A style of line break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    Lf,
    Crlf,
}

/// The more common line break in `bytes` (a tie goes to the first one), or None without any.
pub fn dominant_ending(bytes: &[u8]) -> Option<LineEnding> {
    let mut crlf = 0usize;
    let mut lf = 0usize;
    let mut first = None;
    for at in memchr::memchr_iter(b'\n', bytes) {
        let ending = if at > 0 && bytes[at - 1] == b'\r' {
            crlf += 1;
            LineEnding::Crlf
        } else {
            lf += 1;
            LineEnding::Lf
        };
        first.get_or_insert(ending);
    }
    match crlf.cmp(&lf) {
        std::cmp::Ordering::Greater => Some(LineEnding::Crlf),
        std::cmp::Ordering::Less => Some(LineEnding::Lf),
        std::cmp::Ordering::Equal => first,
    }
}

/// Rewrites the model's line breaks (LF or CRLF) to CRLF.
pub fn to_crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// 1-based line number of byte offset `at` in `bytes`.
pub fn line_of(bytes: &[u8], at: usize) -> usize {
    count_newlines(&bytes[..at.min(bytes.len())]) + 1
}

/// Number of `\n` bytes. Sums each 255-byte block into a `u8` (which cannot overflow), a
/// reduction the compiler turns into SIMD compares: several GB/s, where a match-by-match
/// search crawls on text with short lines.
pub fn count_newlines(bytes: &[u8]) -> usize {
    let mut blocks = bytes.chunks_exact(255);
    let mut total = 0;
    for block in &mut blocks {
        total += usize::from(block.iter().fold(0u8, |n, &b| n + u8::from(b == b'\n')));
    }
    total + blocks.remainder().iter().filter(|&&b| b == b'\n').count()
}

/// The one rule for counts from a model: a non-negative whole number, also sent as `"10"` or
/// `10.0`; null, a missing field or a blank string mean "not given".
pub fn lenient_u64<'de, D: Deserializer<'de>>(de: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Num(u64),
        Float(f64),
        Text(String),
    }
    let invalid = |got: String| {
        serde::de::Error::custom(format!("expected a non-negative whole number, got {got}"))
    };
    match Option::<Raw>::deserialize(de)? {
        None => Ok(None),
        Some(Raw::Num(n)) => Ok(Some(n)),
        Some(Raw::Float(f)) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => {
            Ok(Some(f as u64))
        }
        Some(Raw::Float(f)) => Err(invalid(f.to_string())),
        Some(Raw::Text(s)) if s.trim().is_empty() => Ok(None),
        Some(Raw::Text(s)) => match s.trim().parse::<f64>() {
            Ok(f) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => {
                Ok(Some(s.trim().parse().unwrap_or(f as u64)))
            }
            _ => Err(invalid(format!("{s:?}"))),
        },
    }
}

/// [`lenient_u64`] for sizes and line numbers.
pub fn lenient_usize<'de, D: Deserializer<'de>>(de: D) -> Result<Option<usize>, D::Error> {
    lenient_u64(de)?
        .map(|n| {
            usize::try_from(n).map_err(|_| serde::de::Error::custom("the number is too large"))
        })
        .transpose()
}

/// The one rule for flags from a model: `true`/`false`, also sent as `"true"`, `"yes"`, `"1"`
/// (any case) and their opposites; null, a missing field or a blank string mean "not given".
pub fn lenient_bool<'de, D: Deserializer<'de>>(de: D) -> Result<Option<bool>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Bool(bool),
        Num(u64),
        Text(String),
    }
    match Option::<Raw>::deserialize(de)? {
        None => Ok(None),
        Some(Raw::Bool(b)) => Ok(Some(b)),
        Some(Raw::Num(n @ (0 | 1))) => Ok(Some(n == 1)),
        Some(Raw::Num(n)) => Err(serde::de::Error::custom(format!(
            "expected true or false, got {n}"
        ))),
        Some(Raw::Text(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Ok(Some(true)),
            "false" | "no" | "0" => Ok(Some(false)),
            "" => Ok(None),
            _ => Err(serde::de::Error::custom(format!(
                "expected true or false, got {s:?}"
            ))),
        },
    }
}

/// [`lenient_bool`] for a flag that is off unless given.
pub fn lenient_flag<'de, D: Deserializer<'de>>(de: D) -> Result<bool, D::Error> {
    Ok(lenient_bool(de)?.unwrap_or(false))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn cutting_respects_characters() {
        assert_eq!(cut_chars("h\u{e9}llo", 2), ("h\u{e9}", true));
        assert_eq!(cut_chars("abc", 3), ("abc", false));
        assert_eq!(cut_chars("", 0), ("", false));
    }

    #[test]
    fn crlf_detection_and_conversion() {
        assert!(uses_crlf(b"a\r\nb\r\n"));
        assert!(!uses_crlf(b"a\nb\r\n"));
        assert!(!uses_crlf(b"no break"));
        assert_eq!(to_crlf("a\nb\r\nc"), "a\r\nb\r\nc");
        assert_eq!(dominant_ending(b"a\r\nb\r\nc\n"), Some(LineEnding::Crlf));
        assert_eq!(dominant_ending(b"a\nb\nc\r\n"), Some(LineEnding::Lf));
        assert_eq!(dominant_ending(b"a\r\nb\n"), Some(LineEnding::Crlf));
        assert_eq!(dominant_ending(b"a\nb\r\n"), Some(LineEnding::Lf));
        assert_eq!(dominant_ending(b"none"), None);
    }

    #[test]
    fn newline_counts_match_a_plain_count() {
        for len in [0, 1, 254, 255, 256, 509, 510, 511, 10_000] {
            let bytes: Vec<u8> = (0..len)
                .map(|i| if i % 3 == 0 { b'\n' } else { b'a' })
                .collect();
            let plain = bytes.iter().filter(|&&b| b == b'\n').count();
            assert_eq!(count_newlines(&bytes), plain, "{len}");
        }
        assert_eq!(count_newlines(&[b'\n'; 9000]), 9000);
    }

    #[test]
    fn line_numbers_of_offsets() {
        let text = b"one\ntwo\nthree";
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 4), 2);
        assert_eq!(line_of(text, 12), 3);
    }

    #[derive(Deserialize)]
    struct Args {
        #[serde(default, deserialize_with = "lenient_usize")]
        n: Option<usize>,
        #[serde(default, deserialize_with = "lenient_bool")]
        flag: Option<bool>,
    }

    #[test]
    fn lenient_numbers_and_flags() {
        let parse = |v: serde_json::Value| serde_json::from_value::<Args>(v).map(|a| (a.n, a.flag));
        assert_eq!(
            parse(serde_json::json!({"n": 3, "flag": true})).unwrap(),
            (Some(3), Some(true))
        );
        assert_eq!(
            parse(serde_json::json!({"n": "12", "flag": "false"})).unwrap(),
            (Some(12), Some(false))
        );
        assert_eq!(
            parse(serde_json::json!({"n": 4.0})).unwrap(),
            (Some(4), None)
        );
        assert_eq!(parse(serde_json::json!({"n": null})).unwrap(), (None, None));
        assert_eq!(parse(serde_json::json!({})).unwrap(), (None, None));
        assert!(parse(serde_json::json!({"n": -1})).is_err());
        assert!(parse(serde_json::json!({"n": "many"})).is_err());
        assert!(parse(serde_json::json!({"flag": "maybe"})).is_err());
        // One rule for every tool: blank means not given, fractions are refused.
        assert_eq!(
            parse(serde_json::json!({"n": " ", "flag": ""})).unwrap(),
            (None, None)
        );
        assert_eq!(
            parse(serde_json::json!({"n": "7.0", "flag": "YES"})).unwrap(),
            (Some(7), Some(true))
        );
        assert_eq!(
            parse(serde_json::json!({"flag": 0})).unwrap(),
            (None, Some(false))
        );
        assert!(parse(serde_json::json!({"n": 1.5})).is_err());
        assert!(parse(serde_json::json!({"n": "1.5"})).is_err());
        assert!(parse(serde_json::json!({"flag": 2})).is_err());
    }
}
