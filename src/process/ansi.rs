//! Turning raw command output into text a model can read: terminal escape sequences and
//! control characters removed, carriage-return overwrites collapsed, binary output detected,
//! and head/tail cut points chosen on line or character boundaries.
//!
//! The `strip-ansi-escapes` crate drops tabs and carriage returns along with the escapes, so
//! this small state machine does the stripping itself.

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;

/// Strips escape sequences, applies `\r` overwrites (the last rewrite of a progress line wins)
/// and backspaces, drops the bell, and shows every other odd byte escaped: control
/// characters (but `\n` and `\t`) and bytes that are not UTF-8 become `\xNN`, so a model sees
/// `ok\x00\x01\xffend` where a terminal would show garbage.
pub fn clean(raw: &[u8]) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    let mut line_start = 0;
    let mut carriage_return = false;
    let mut i = 0;
    while i < raw.len() {
        let byte = raw[i];
        let mut width = 1;
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
            BEL => {}
            _ => {
                if carriage_return {
                    // A lone `\r` followed by more text rewrites the line, as a terminal shows it.
                    out.truncate(line_start);
                    carriage_return = false;
                }
                match char_width_at(raw, i) {
                    Some(n) if !is_odd_control(byte) && byte != 0x0c => {
                        width = n;
                        out.extend_from_slice(&raw[i..i + n]);
                    }
                    _ => out.extend_from_slice(format!("\\x{byte:02x}").as_bytes()),
                }
            }
        }
        i += width;
    }
    // Only whole characters and ASCII escapes went in, so this never replaces anything.
    String::from_utf8(out)
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

/// Length of the valid UTF-8 character starting at `raw[at]`, or None when the bytes there
/// are not one (a stray continuation byte, a bad or cut sequence).
fn char_width_at(raw: &[u8], at: usize) -> Option<usize> {
    let width = match raw[at] {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return None,
    };
    let bytes = raw.get(at..at + width)?;
    std::str::from_utf8(bytes).ok().map(|_| width)
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

/// Share of odd bytes above which output counts as binary: stray bytes in text are shown
/// escaped, but escaping mostly-binary output would only fill the model's context with noise.
const BINARY_PERCENT: usize = 30;
/// Output this short is always shown, escaped: at most four times as long, and more telling
/// than a marker (`printf 'ok\000\001\377end'` is 3 odd bytes in 8).
const ALWAYS_SHOWN: usize = 32;

/// Whether bytes are not text: more than 30% of them are odd — NUL or another control
/// character (but the ones text uses: `\n`, `\t`, `\r`, escape, backspace, form feed, bell),
/// DEL, or not UTF-8. An incomplete character at the very end (a cut) does not count, and
/// nothing of 32 bytes or less is binary.
pub fn looks_binary(bytes: &[u8]) -> bool {
    if bytes.len() <= ALWAYS_SHOWN {
        return false;
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
    let controls = bytes.iter().filter(|&&b| is_odd_control(b)).count();
    (invalid + controls) * 100 > bytes.len() * BINARY_PERCENT
}

/// A control byte that `clean` shows escaped.
fn is_odd_control(byte: u8) -> bool {
    (byte < 0x20 && !matches!(byte, b'\n' | b'\t' | b'\r' | ESC | 0x08 | 0x0c | BEL))
        || byte == 0x7f
}

/// Upper bound of what `clean` makes of each byte of `raw`: 4 for a byte shown as `\xNN`,
/// 1 for any other.
fn shown_widths(raw: &[u8]) -> Vec<u8> {
    let mut widths = vec![1u8; raw.len()];
    let mut i = 0;
    while i < raw.len() {
        let byte = raw[i];
        if byte == ESC || byte == b'\n' || byte == b'\r' {
            i += 1;
            continue;
        }
        match char_width_at(raw, i) {
            Some(_) if is_odd_control(byte) || byte == 0x0c => {
                widths[i] = 4;
                i += 1;
            }
            Some(n) => i += n,
            None => {
                widths[i] = 4;
                i += 1;
            }
        }
    }
    widths
}

/// At most how long `clean(raw)` is.
pub fn shown_len(raw: &[u8]) -> usize {
    shown_widths(raw).iter().map(|&w| usize::from(w)).sum()
}

/// The longest prefix of `raw` whose cleaned text stays within `max` bytes.
pub fn prefix_within(raw: &[u8], max: usize) -> usize {
    let mut used = 0;
    for (i, &w) in shown_widths(raw).iter().enumerate() {
        used += usize::from(w);
        if used > max {
            return i;
        }
    }
    raw.len()
}

/// Where the longest suffix of `raw` whose cleaned text stays within `max` bytes starts.
pub fn suffix_within(raw: &[u8], max: usize) -> usize {
    let mut used = 0;
    for (i, &w) in shown_widths(raw).iter().enumerate().rev() {
        used += usize::from(w);
        if used > max {
            return i + 1;
        }
    }
    0
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
            (b"bell\x07 and \x01controls", "bell and \\x01controls"),
            (b"ok\x00\x01\xffend", "ok\\x00\\x01\\xffend"),
            (b"caf\xe9 latin-1\n", "caf\\xe9 latin-1\n"),
            (b"del\x7f and \x0c", "del\\x7f and \\x0c"),
            // A cut character at the very end, a stray continuation byte, an overlong form.
            (&"ab\u{4e16}".as_bytes()[..3], "ab\\xe4"),
            (b"\x80x\xc0\xafy", "\\x80x\\xc0\\xafy"),
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
        assert!(looks_binary(&[0u8; 100]));
        assert!(looks_binary(&b"ELF\x00\x01\x02".repeat(8)));
        // Short output is always shown; longer text with a few stray bytes is text.
        assert!(!looks_binary(b"ok\x00\x01\xffend"));
        assert!(!looks_binary(b"caf\xe9 au lait\n"));
        let mut stray = b"a line of text\n".repeat(10);
        stray[3] = 0;
        stray[40] = 0xff;
        assert!(!looks_binary(&stray));
        // 31% odd bytes is binary, 30% is not.
        let mixed =
            |odd: usize| -> Vec<u8> { (0..100).map(|i| if i < odd { 1 } else { b'a' }).collect() };
        assert!(!looks_binary(&mixed(30)));
        assert!(looks_binary(&mixed(31)));
        assert!(looks_binary(
            &[0xff, 0xfe, 0xfa, 0x80, b'a', 0x90, 0x91].repeat(6)
        ));
        assert!(!looks_binary(b"just text\n"));
        assert!(!looks_binary("\u{4e16}\u{754c}".as_bytes()));
        // A character cut at the end is a truncation, not binary.
        assert!(!looks_binary(&"\u{4e16}".as_bytes()[..2]));
        assert!(!looks_binary(b"\x1b[31mcoloured\x1b[0m\n"));
    }

    #[test]
    fn escaped_lengths_bound_the_cleaned_text() {
        let cases: &[&[u8]] = &[
            b"plain",
            b"ok\x00\x01\xffend",
            "h\u{e9}llo \u{4e16}\n".as_bytes(),
            b"\x1b[31mred\x1b[0m\t\x0c",
            b"\x80\xc0\xaf",
        ];
        for raw in cases {
            assert!(clean(raw).len() <= shown_len(raw), "{raw:?}");
        }
        assert_eq!(shown_len(b"ok\x00\x01\xffend"), 17);
        assert_eq!(prefix_within(b"ok\x00\x01\xffend", 6), 3);
        assert_eq!(prefix_within(b"ok\x00\x01\xffend", 100), 8);
        assert_eq!(suffix_within(b"ok\x00\x01\xffend", 7), 4);
        assert_eq!(suffix_within(b"ok\x00\x01\xffend", 100), 0);
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
