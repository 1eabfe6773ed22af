//! Small text helpers the file tools share: character cuts, line breaks (CRLF handling),
//! line numbers and newline counts.

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
}
