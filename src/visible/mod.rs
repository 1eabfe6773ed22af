//! The visible form of untrusted text: what the model, a command or a file name puts before
//! the user is shown so that every character that would not show, or would move, hide or
//! reorder what is around it, appears as `<U+XXXX>`. What the user reads is then what runs:
//! `touch safe<U+200B>.txt` is not mistaken for `touch safe.txt`, and a right-to-left
//! override cannot turn `txt.exe` around.
//!
//! Shown this way: control characters (C0, DEL, C1), line and paragraph separators, every
//! format character (zero-width spaces and joiners, bidi controls, the BOM, tag characters,
//! soft hyphens, ...), variation selectors, spaces other than the ASCII one (a shell reads
//! them as part of a word), the invisible Hangul fillers, and combining marks with nothing to
//! sit on (at a word start) or in a run longer than any script needs (a run that would stack
//! up and out of its line). Identical characters in a row are counted, not repeated:
//! `<U+0301 ×50>`.
//!
//! `shown` keeps line breaks (a script held for approval is several lines), `shown_line`
//! escapes them too (a name, a rule, a card's one-line summary). `terminal` cleans text for a
//! terminal outside the full-screen UI.

pub mod terminal;

use std::ops::Range;

use unicode_width::UnicodeWidthChar;

/// Combining marks on one base character that are shown as they are; a longer run is shown
/// as code points. Three covers the scripts that stack marks (Vietnamese, Hebrew points,
/// Arabic harakat, Indic signs).
const MAX_MARKS: usize = 3;

/// Identical hidden characters in a row from which the marker counts them.
const COUNTED_FROM: usize = 4;

/// Why a character is shown as its code point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hidden {
    Control,
    LineBreak,
    ZeroWidth,
    Bidi,
    Tag,
    VariationSelector,
    Format,
    OddSpace,
    Filler,
    CombiningMark,
}

impl Hidden {
    fn label(self) -> &'static str {
        match self {
            Hidden::Control => "control character",
            Hidden::LineBreak => "line break",
            Hidden::ZeroWidth => "zero-width",
            Hidden::Bidi => "bidi control",
            Hidden::Tag => "tag character",
            Hidden::VariationSelector => "variation selector",
            Hidden::Format => "format character",
            Hidden::OddSpace => "non-ASCII space",
            Hidden::Filler => "invisible filler",
            Hidden::CombiningMark => "combining mark",
        }
    }
}

/// The kind of a character that is always shown as its code point (whatever surrounds it),
/// None for one that shows as itself. `\n` and `\t` are controls here; `shown` keeps them.
pub fn always_hidden(c: char) -> Option<Hidden> {
    let kind = match c {
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => Hidden::Control,
        '\u{2028}' | '\u{2029}' => Hidden::LineBreak,
        '\u{061c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}' => Hidden::Bidi,
        '\u{200b}'..='\u{200d}'
        | '\u{2060}'..='\u{2064}'
        | '\u{feff}'
        | '\u{180e}'
        | '\u{034f}'
        | '\u{17b4}'
        | '\u{17b5}' => Hidden::ZeroWidth,
        '\u{e0001}' | '\u{e0020}'..='\u{e007f}' => Hidden::Tag,
        '\u{fe00}'..='\u{fe0f}'
        | '\u{e0100}'..='\u{e01ef}'
        | '\u{180b}'..='\u{180d}'
        | '\u{180f}' => Hidden::VariationSelector,
        // The other format characters (Unicode category Cf).
        '\u{00ad}'
        | '\u{0600}'..='\u{0605}'
        | '\u{06dd}'
        | '\u{070f}'
        | '\u{0890}'..='\u{0891}'
        | '\u{08e2}'
        | '\u{206a}'..='\u{206f}'
        | '\u{fff9}'..='\u{fffb}'
        | '\u{110bd}'
        | '\u{110cd}'
        | '\u{13430}'..='\u{1343f}'
        | '\u{1bca0}'..='\u{1bca3}'
        | '\u{1d173}'..='\u{1d17a}' => Hidden::Format,
        '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}' => {
            Hidden::OddSpace
        }
        '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' => Hidden::Filler,
        _ => return None,
    };
    Some(kind)
}

/// A character that draws nothing of its own and sits on the one before it.
fn is_combining(c: char) -> bool {
    c.width() == Some(0)
}

/// A character a combining mark may sit on: it shows, and is not a space or ASCII
/// punctuation (a mark on a quote or a slash is a mark at a word start).
fn is_base(c: char) -> bool {
    !c.is_whitespace() && !c.is_ascii_punctuation() && !c.is_control() && !is_combining(c)
}

/// Text in its visible form, with what was made visible.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Visible {
    pub text: String,
    /// Byte ranges of `text` that are `<U+…>` markers (for styling them apart).
    pub markers: Vec<Range<usize>>,
    /// The characters shown as markers, each once, in the order they first came.
    pub hidden: Vec<(char, Hidden)>,
}

impl Visible {
    /// Whether anything had to be made visible.
    pub fn changed(&self) -> bool {
        !self.markers.is_empty()
    }

    /// One line saying what was made visible, e.g. `invisible characters, shown
    /// as <U+…>: U+200B zero-width, U+202E bidi control`; None when nothing was.
    pub fn note(&self) -> Option<String> {
        if self.hidden.is_empty() {
            return None;
        }
        const NAMED: usize = 4;
        let mut named: Vec<String> = self
            .hidden
            .iter()
            .take(NAMED)
            .map(|(c, kind)| format!("U+{:04X} {}", u32::from(*c), kind.label()))
            .collect();
        if self.hidden.len() > NAMED {
            named.push(format!("{} more", self.hidden.len() - NAMED));
        }
        Some(format!(
            "invisible characters, shown as <U+…>: {}",
            named.join(", ")
        ))
    }

    fn push_marker(&mut self, c: char, kind: Hidden, count: usize) {
        let start = self.text.len();
        if count >= COUNTED_FROM {
            self.text
                .push_str(&format!("<U+{:04X} ×{count}>", u32::from(c)));
        } else {
            for _ in 0..count {
                self.text.push_str(&format!("<U+{:04X}>", u32::from(c)));
            }
        }
        self.markers.push(start..self.text.len());
        if !self.hidden.iter().any(|(h, _)| *h == c) {
            self.hidden.push((c, kind));
        }
    }
}

/// The visible form of text of several lines: line breaks stay, a tab shows as spaces (it
/// separates words as a space does), everything else that would not show is a marker.
pub fn shown(text: &str) -> Visible {
    make_visible(text, true)
}

/// The visible form of text meant as one line (a name, a rule, a summary): line breaks and
/// tabs are markers too, so nothing can start a line of its own.
pub fn shown_line(text: &str) -> Visible {
    make_visible(text, false)
}

/// `shown_line(text).text`, for a name printed in a report.
pub fn name(text: &str) -> String {
    shown_line(text).text
}

fn make_visible(text: &str, multi_line: bool) -> Visible {
    let mut out = Visible {
        text: String::with_capacity(text.len()),
        ..Visible::default()
    };
    let chars: Vec<char> = text.chars().collect();
    // Whether the last character written shows and may carry a mark.
    let mut after_base = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if multi_line && c == '\n' {
            out.text.push('\n');
            after_base = false;
            i += 1;
            continue;
        }
        if multi_line && c == '\t' {
            out.text.push_str("    ");
            after_base = false;
            i += 1;
            continue;
        }
        if let Some(kind) = always_hidden(c) {
            let run = chars[i..].iter().take_while(|&&d| d == c).count();
            out.push_marker(c, kind, run);
            after_base = false;
            i += run;
            continue;
        }
        if is_combining(c) {
            let run = chars[i..]
                .iter()
                .take_while(|&&d| is_combining(d) && always_hidden(d).is_none())
                .count();
            if after_base && run <= MAX_MARKS {
                out.text.extend(&chars[i..i + run]);
            } else {
                let mut j = i;
                while j < i + run {
                    let same = chars[j..i + run]
                        .iter()
                        .take_while(|&&d| d == chars[j])
                        .count();
                    out.push_marker(chars[j], Hidden::CombiningMark, same);
                    j += same;
                }
            }
            after_base = false;
            i += run;
            continue;
        }
        out.text.push(c);
        after_base = is_base(c);
        i += 1;
    }
    out
}

#[cfg(test)]
#[path = "visible_tests.rs"]
mod tests;
