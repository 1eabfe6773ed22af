//! Turning raw command output into text a model can read: terminal escape sequences and
//! control characters removed, carriage-return overwrites collapsed, binary output detected,
//! and head/tail cut points chosen on line or character boundaries.
//!
//! The `strip-ansi-escapes` crate drops tabs and carriage returns along with the escapes, so
//! this small state machine does the stripping itself.

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;

/// Strips escape sequences and control characters (keeping `\n` and `\t`), applies `\r`
/// overwrites (the last rewrite of a progress line wins) and backspaces, and decodes the rest
/// as UTF-8, replacing the rare invalid byte.
pub fn clean(raw: &[u8]) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    let mut line_start = 0;
    let mut carriage_return = false;
    let mut i = 0;
    while i < raw.len() {
        let byte = raw[i];
        match byte {
            ESC => {
                i = skip_escape(raw, i);
                continue;
            }
            b'\n' => {
                out.push(b'\n');
                line_start = out.len();
                carriage_return = false;
            }
            b'\r' => carriage_return = true,
            0x08 => pop_char(&mut out, line_start),
            b'\t' | 0x20.. if byte != 0x7f => {
                if carriage_return {
                    // A lone `\r` followed by more text rewrites the line, as a terminal shows it.
                    out.truncate(line_start);
                    carriage_return = false;
                }
                out.push(byte);
            }
            _ => {}
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Removes the last UTF-8 character of `out`, never going before `floor`.
fn pop_char(out: &mut Vec<u8>, floor: usize) {
    while out.len() > floor {
        let last = out.pop().unwrap_or(0);
        if last & 0xC0 != 0x80 {
            break;
        }
    }
}

/// Returns the index just after the escape sequence starting at `raw[start] == ESC`.
fn skip_escape(raw: &[u8], start: usize) -> usize {
    let Some(&kind) = raw.get(start + 1) else {
        return raw.len();
    };
    let body = start + 2;
    match kind {
        // CSI: parameters and intermediates, then one final byte in 0x40..=0x7e.
        b'[' => raw[body..]
            .iter()
            .position(|b| (0x40..=0x7e).contains(b))
            .map_or(raw.len(), |p| body + p + 1),
        // OSC ends with BEL or ST; DCS, SOS, PM and APC end with ST.
        b']' | b'P' | b'X' | b'^' | b'_' => {
            let mut j = body;
            while j < raw.len() {
                if kind == b']' && raw[j] == BEL {
                    return j + 1;
                }
                if raw[j] == ESC && raw.get(j + 1) == Some(&b'\\') {
                    return j + 2;
                }
                j += 1;
            }
            raw.len()
        }
        // nF sequences (charset selection and the like): intermediates, then a final byte.
        0x20..=0x2f => raw[body..]
            .iter()
            .position(|b| !(0x20..=0x2f).contains(b))
            .map_or(raw.len(), |p| body + p + 1),
        _ => start + 2,
    }
}

/// Whether bytes are not text: a NUL byte, or more than a tenth invalid UTF-8 or control
/// characters. An incomplete character at the very end (a cut) does not count.
pub fn looks_binary(bytes: &[u8]) -> bool {
    if bytes.contains(&0) {
        return true;
    }
    let mut invalid = 0usize;
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(_) => break,
            Err(err) => {
                let Some(len) = err.error_len() else { break };
                invalid += len;
                rest = &rest[err.valid_up_to() + len..];
            }
        }
    }
    let controls = bytes
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\t' | b'\r' | ESC | 0x08 | 0x0c))
        .count();
    (invalid + controls) * 10 > bytes.len()
}

/// Where to end a head cut from a longer stream: after the last newline when one lies in the
/// second half of `bytes`, otherwise on the last character boundary.
pub fn head_len(bytes: &[u8]) -> usize {
    let half = bytes.len() / 2;
    if let Some(pos) = bytes.iter().rposition(|&b| b == b'\n')
        && pos >= half
    {
        return pos + 1;
    }
    let mut end = bytes.len();
    // Step back over an incomplete character: at most three continuation bytes and its lead.
    let mut back = end;
    while back > 0 && end - back < 4 {
        back -= 1;
        let byte = bytes[back];
        if byte & 0xC0 != 0x80 {
            let width = match byte {
                0xF0.. => 4,
                0xE0.. => 3,
                0xC0.. => 2,
                _ => 1,
            };
            if back + width > end {
                end = back;
            }
            break;
        }
    }
    end
}

/// Where to start a tail cut from a longer stream: just after the first newline when one lies
/// in the first half of `bytes`, otherwise on the first character boundary.
pub fn tail_start(bytes: &[u8]) -> usize {
    let half = bytes.len() / 2;
    if let Some(pos) = bytes.iter().position(|&b| b == b'\n')
        && pos < half
    {
        return pos + 1;
    }
    bytes
        .iter()
        .position(|&b| b & 0xC0 != 0x80)
        .unwrap_or(bytes.len())
}

/// How much of a piece of live output is complete: everything but an unfinished escape
/// sequence or UTF-8 character at its end, which waits for the next piece (unless it grew
/// implausibly long).
pub fn complete_len(bytes: &[u8]) -> usize {
    const LONGEST_HELD: usize = 256;
    let window = bytes.len().saturating_sub(LONGEST_HELD);
    if let Some(esc) = bytes[window..]
        .iter()
        .rposition(|&b| b == ESC)
        .map(|p| window + p)
        && skip_escape(bytes, esc) >= bytes.len()
        && !ends_sequence(&bytes[esc..])
    {
        return esc;
    }
    let tail = bytes.len().saturating_sub(3);
    match std::str::from_utf8(&bytes[tail..]) {
        Err(err) if err.error_len().is_none() => tail + err.valid_up_to(),
        _ => bytes.len(),
    }
}

/// Whether an escape sequence that runs to the end of `seq` is complete there.
fn ends_sequence(seq: &[u8]) -> bool {
    match seq {
        [ESC] | [ESC, b'[', ..] | [ESC, b']' | b'P' | b'X' | b'^' | b'_', ..] => {
            let last = seq.len() - 1;
            match seq.get(1) {
                Some(b'[') => last >= 2 && (0x40..=0x7e).contains(&seq[last]),
                Some(_) => seq[last] == BEL || seq.ends_with(b"\x1b\\"),
                None => false,
            }
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_strips_escapes_and_controls() {
        let cases: &[(&[u8], &str)] = &[
            (b"plain\n", "plain\n"),
            (
                b"\x1b[31mred\x1b[0m and \x1b[1;32mbold green\x1b[m",
                "red and bold green",
            ),
            (b"a\tb\n", "a\tb\n"),
            (b"crlf\r\nline\r\n", "crlf\nline\n"),
            (b"10%\r50%\r100%\ndone", "100%\ndone"),
            (b"trailing cr\r", "trailing cr"),
            (b"\x1b]0;window title\x07text", "text"),
            (b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
            (b"\x1b(Bcharset", "charset"),
            (
                b"bell\x07 and nul-free \x01controls",
                "bell and nul-free controls",
            ),
            (b"abc\x08\x08X", "aX"),
            (b"unterminated \x1b[12", "unterminated "),
            (
                "h\u{e9}llo \u{4e16}\u{754c}\n".as_bytes(),
                "h\u{e9}llo \u{4e16}\u{754c}\n",
            ),
        ];
        for (raw, expected) in cases {
            assert_eq!(
                clean(raw),
                *expected,
                "input {:?}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    #[test]
    fn binary_detection() {
        assert!(looks_binary(b"ELF\x00\x01\x02"));
        assert!(looks_binary(&[0xff, 0xfe, 0xfa, 0x80, b'a', 0x90, 0x91]));
        assert!(!looks_binary(b"just text\n"));
        assert!(!looks_binary("\u{4e16}\u{754c}".as_bytes()));
        // A character cut at the end is a truncation, not binary.
        assert!(!looks_binary(&"\u{4e16}".as_bytes()[..2]));
        assert!(!looks_binary(b"\x1b[31mcoloured\x1b[0m\n"));
    }

    #[test]
    fn cut_points_prefer_lines_then_characters() {
        let text = b"line one\nline two\nline three\n";
        assert_eq!(head_len(&text[..20]), 18);
        assert_eq!(head_len(&text[..12]), 9);
        assert_eq!(tail_start(&text[text.len() - 14..]), 3);
        let wide = "\u{4e16}\u{4e16}\u{4e16}".as_bytes();
        assert_eq!(head_len(&wide[..4]), 3);
        assert_eq!(head_len(&wide[..6]), 6);
        assert_eq!(tail_start(&wide[2..]), 1);
        assert_eq!(head_len(b"no newline at all"), 17);
    }

    #[test]
    fn live_pieces_hold_back_split_characters_and_escapes() {
        let cases: &[(&[u8], usize)] = &[
            (b"plain", 5),
            (&"ab\u{4e16}".as_bytes()[..3], 2),
            ("ab\u{4e16}".as_bytes(), 5),
            (b"text\x1b", 4),
            (b"text\x1b[1;3", 4),
            (b"text\x1b[1;31m", 11),
            (b"text\x1b]0;title", 4),
            (b"text\x1b]0;title\x07", 14),
            (b"\x1b[0mdone\n", 9),
        ];
        for (bytes, expected) in cases {
            assert_eq!(
                complete_len(bytes),
                *expected,
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
}
