//! Text for a terminal outside the full-screen UI (`cairn undo`, `cairn exec`'s answer and
//! progress, `cairn sessions`, `cairn tool run`, error messages): nothing in it can drive the
//! user's terminal. Complete escape sequences are removed (CSI, OSC with its clipboard and
//! title writes, DCS, SOS, PM, APC, the shorter ESC sequences, and their 8-bit C1 forms);
//! the bell goes; a CR before an LF goes. Everything else that could move the cursor, hide
//! or reorder text is shown as `<U+XXXX>`: a lone ESC or an unfinished sequence (shown, so
//! nothing after it is lost), a lone CR (which would let a line overwrite itself), backspace,
//! the other control characters, bidi controls and line separators. `\n` and `\t` stay.
//!
//! Names inside such text are escaped where the text is made (`super::name`), so a file name
//! holding a newline cannot forge a line of the report.

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';
/// The 8-bit string terminator.
const ST: char = '\u{9c}';

/// `text` made harmless for a terminal.
pub fn clean(text: &str) -> String {
    if !text.chars().any(needs_work) {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(end) = sequence_end(&chars, i) {
            i = end;
            continue;
        }
        match c {
            '\n' | '\t' => out.push(c),
            BEL => {}
            '\r' if chars.get(i + 1) == Some(&'\n') => {}
            c if shown_as_code(c) => out.push_str(&format!("<U+{:04X}>", u32::from(c))),
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// A character `clean` does something with.
fn needs_work(c: char) -> bool {
    c == BEL || c == '\r' || shown_as_code(c)
}

/// Shown as its code point: controls (but `\n` and `\t`), bidi controls, line separators.
fn shown_as_code(c: char) -> bool {
    match super::always_hidden(c) {
        Some(super::Hidden::Control) => c != '\n' && c != '\t',
        Some(super::Hidden::Bidi | super::Hidden::LineBreak) => true,
        _ => false,
    }
}

/// Where the complete escape sequence that starts at `chars[at]` ends (the index after it);
/// None when none starts there or it is not finished (then its introducer is shown).
fn sequence_end(chars: &[char], at: usize) -> Option<usize> {
    let (kind, body) = match chars[at] {
        ESC => (*chars.get(at + 1)?, at + 2),
        '\u{9b}' => ('[', at + 1),
        '\u{9d}' => (']', at + 1),
        '\u{90}' => ('P', at + 1),
        '\u{98}' => ('X', at + 1),
        '\u{9e}' => ('^', at + 1),
        '\u{9f}' => ('_', at + 1),
        _ => return None,
    };
    match kind {
        // CSI: parameter and intermediate characters, then a final one in @..~.
        '[' => {
            let mut j = body;
            while let Some(&c) = chars.get(j) {
                match c {
                    '\u{20}'..='\u{3f}' => j += 1,
                    '\u{40}'..='\u{7e}' => return Some(j + 1),
                    _ => return None,
                }
            }
            None
        }
        // OSC ends with BEL or ST; DCS, SOS, PM and APC with ST (ESC \ or 8-bit).
        ']' | 'P' | 'X' | '^' | '_' => {
            let mut j = body;
            while let Some(&c) = chars.get(j) {
                if (kind == ']' && c == BEL) || c == ST {
                    return Some(j + 1);
                }
                if c == ESC && chars.get(j + 1) == Some(&'\\') {
                    return Some(j + 2);
                }
                j += 1;
            }
            None
        }
        // nF sequences (character sets and the like): intermediates, then a final character.
        '\u{20}'..='\u{2f}' => {
            let mut j = body;
            while let Some(&c) = chars.get(j) {
                match c {
                    '\u{20}'..='\u{2f}' => j += 1,
                    '\u{30}'..='\u{7e}' => return Some(j + 1),
                    _ => return None,
                }
            }
            None
        }
        // Two-character sequences: ESC 7, ESC c (reset), ESC M, ...
        '\u{30}'..='\u{7e}' => Some(body),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_go_and_what_could_drive_the_terminal_shows() {
        let cases = [
            ("plain text\n\tindented", "plain text\n\tindented"),
            ("\u{1b}[31mred\u{1b}[0m", "red"),
            ("\u{1b}[2Jcleared", "cleared"),
            ("copy\u{1b}]52;c;ZXZpbA==\u{7}done", "copydone"),
            ("copy\u{1b}]52;c;ZXZpbA==\u{1b}\\done", "copydone"),
            ("\u{1b}]0;owned title\u{7}x", "x"),
            ("\u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\", "link"),
            ("\u{1b}Pq#0;2;0;0;0\u{1b}\\x", "x"),
            ("\u{1b}_apc payload\u{1b}\\x", "x"),
            ("\u{1b}^pm\u{1b}\\x\u{1b}Xsos\u{1b}\\", "x"),
            ("\u{9b}2J8bit", "8bit"),
            ("\u{9d}52;c;eA==\u{9c}x", "x"),
            ("\u{1b}cafter reset", "after reset"),
            ("\u{1b}(Bcharset", "charset"),
            ("ding\u{7}", "ding"),
            ("crlf\r\nline", "crlf\nline"),
            ("lone ESC at the end \u{1b}", "lone ESC at the end <U+001B>"),
            (
                "unfinished \u{1b}]52;c;eA==",
                "unfinished <U+001B>]52;c;eA==",
            ),
            ("unfinished \u{1b}[12", "unfinished <U+001B>[12"),
            ("safe\rEVIL", "safe<U+000D>EVIL"),
            ("back\u{8}\u{8}", "back<U+0008><U+0008>"),
            ("nul\u{0}\u{85}", "nul<U+0000><U+0085>"),
            ("a\u{202e}txt.exe", "a<U+202E>txt.exe"),
            ("line\u{2028}sep", "line<U+2028>sep"),
            ("emoji 👩\u{200d}💻 stays", "emoji 👩\u{200d}💻 stays"),
        ];
        for (raw, want) in cases {
            let got = clean(raw);
            assert_eq!(got, want, "{raw:?}");
            assert!(!got.contains(ESC) && !got.contains('\r') && !got.contains(BEL));
            assert!(!got.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c)));
        }
    }

    #[test]
    fn names_escaped_first_keep_their_escapes_visible() {
        let name = super::super::name("a\u{1b}]52;c;eA==\u{7}\nforged  line");
        assert_eq!(name, "a<U+001B>]52;c;eA==<U+0007><U+000A>forged  line");
        assert_eq!(clean(&name), name);
    }
}
