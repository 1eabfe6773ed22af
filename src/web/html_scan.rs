//! HTML measured before anything parses it, and HTML as plain text without a parser: one
//! linear pass over the source's tags (comments, doctypes and raw-text elements such as
//! `<script>` skipped whole). `measure` counts elements and the nesting an HTML parser would
//! build (unclosed `<p>`/`<li>`/`<td>` closed as the parser closes them, formatting elements an
//! ancestor's end tag closed reopened as the parser reopens them) and stops at the first cap it
//! passes; `plain_text` is the fallback for a page past a cap, linear in its size. Fed by
//! `web::page`, whose parser and extractor are only given pages within the caps.

/// Nesting past this is not parsed (real pages stay under ~60 levels; the markdown writer and
/// the extractor both walk per level).
pub const MAX_DEPTH: usize = 256;
/// Elements past this are not parsed (a large real article has ~20,000).
pub const MAX_ELEMENTS: usize = 150_000;

/// What `measure` found: within both caps, or the first cap passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Within { depth: usize, elements: usize },
    TooDeep { at_byte: usize },
    TooMany { at_byte: usize },
}

impl Shape {
    pub fn within(self) -> bool {
        matches!(self, Shape::Within { .. })
    }

    /// Why a page went out as plain text, for the note the model reads.
    pub fn reason(self) -> Option<String> {
        match self {
            Shape::Within { .. } => None,
            Shape::TooDeep { .. } => Some(format!("nested more than {MAX_DEPTH} elements deep")),
            Shape::TooMany { .. } => Some(format!("more than {MAX_ELEMENTS} elements")),
        }
    }
}

/// One piece of the source, in order.
enum Piece<'a> {
    Start { name: &'a str, closed: bool },
    End { name: &'a str },
    Text(&'a str),
}

/// Elements with no content and no end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param",
    "source", "track", "wbr",
];
/// Elements whose content is text up to their own end tag, never markup.
const RAW_TEXT: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript",
];
/// Formatting elements: the parser reopens them after an ancestor's end tag closed them.
const FORMATTING: &[&str] = &[
    "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u",
];
/// Elements a start tag of the same family closes when one is open just above.
const SELF_CLOSING_FAMILIES: &[&[&str]] = &[
    &["p"],
    &["li"],
    &["dt", "dd"],
    &["td", "th"],
    &["tr"],
    &["option"],
    &["optgroup"],
    &["thead", "tbody", "tfoot"],
    &["rb", "rt", "rp", "rtc"],
];
/// Start tags (besides `CLOSES_P`) before which the parser does not reopen formatting
/// elements (they open inside the new element instead).
const NO_REOPEN: &[&str] = &[
    "li",
    "dd",
    "dt",
    "plaintext",
    "textarea",
    "xmp",
    "iframe",
    "noembed",
    "noscript",
    "head",
    "body",
    "html",
    "caption",
    "col",
    "colgroup",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "base",
    "link",
    "meta",
    "script",
    "style",
    "template",
    "title",
    "menu",
    "dir",
    "center",
    "details",
    "dialog",
    "hgroup",
    "summary",
    "listing",
    "frameset",
    "frame",
];
/// Elements an implied end of a `<li>`, `<tr>`, `<p>`… does not reach past (a nested list or
/// table keeps the outer one's item open).
const SCOPE_BOUNDARIES: &[&str] = &[
    "table", "ul", "ol", "dl", "select", "menu", "template", "button", "object", "applet",
    "marquee", "svg", "math",
];
/// Block elements whose start tag closes an open `<p>`.
const CLOSES_P: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "div",
    "dl",
    "fieldset",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "ul",
];

/// Walks the source's pieces in order; `visit` returns false to stop.
fn scan<'a>(html: &'a str, mut visit: impl FnMut(Piece<'a>, usize) -> bool) {
    let bytes = html.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let Some(lt) = memchr::memchr(b'<', &bytes[at..]).map(|i| at + i) else {
            visit(Piece::Text(&html[at..]), at);
            return;
        };
        if lt > at && !visit(Piece::Text(&html[at..lt]), at) {
            return;
        }
        let next = bytes.get(lt + 1).copied().unwrap_or(b' ');
        if bytes[lt..].starts_with(b"<!--") {
            at = find(bytes, lt + 4, b"-->").map_or(bytes.len(), |i| i + 3);
        } else if next == b'!' || next == b'?' {
            at = memchr::memchr(b'>', &bytes[lt..]).map_or(bytes.len(), |i| lt + i + 1);
        } else if next == b'/' {
            let (name, end) = tag_name(html, lt + 2);
            at = memchr::memchr(b'>', &bytes[end..]).map_or(bytes.len(), |i| end + i + 1);
            if !name.is_empty() && !visit(Piece::End { name }, lt) {
                return;
            }
        } else if next.is_ascii_alphabetic() {
            let (name, end) = tag_name(html, lt + 1);
            let (close, closed) = tag_end(bytes, end);
            at = close;
            if !visit(Piece::Start { name, closed }, lt) {
                return;
            }
            if let Some(raw) = RAW_TEXT.iter().find(|raw| name.eq_ignore_ascii_case(raw)) {
                let text_end = find_end_tag(bytes, at, raw).unwrap_or(bytes.len());
                at = text_end;
            } else if name.eq_ignore_ascii_case("plaintext") {
                visit(Piece::Text(&html[at..]), at);
                return;
            }
        } else {
            // A `<` that opens no tag is text.
            if !visit(Piece::Text(&html[lt..lt + 1]), lt) {
                return;
            }
            at = lt + 1;
        }
    }
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(bytes.get(from..)?, needle).map(|i| from + i)
}

/// The `</name` that ends a raw-text element, case-insensitively.
fn find_end_tag(bytes: &[u8], from: usize, name: &str) -> Option<usize> {
    let mut at = from;
    while let Some(i) = find(bytes, at, b"</") {
        let rest = &bytes[i + 2..];
        if rest.len() >= name.len() && rest[..name.len()].eq_ignore_ascii_case(name.as_bytes()) {
            return Some(i);
        }
        at = i + 2;
    }
    None
}

/// The tag name starting at `from` and where it ends.
fn tag_name(html: &str, from: usize) -> (&str, usize) {
    let bytes = html.as_bytes();
    let mut end = from.min(bytes.len());
    while end < bytes.len()
        && !matches!(
            bytes[end],
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>'
        )
    {
        end += 1;
    }
    (html.get(from.min(end)..end).unwrap_or(""), end)
}

/// Past the attributes (quoted values may hold `>`): where the tag ends and whether it was
/// written self-closing.
fn tag_end(bytes: &[u8], from: usize) -> (usize, bool) {
    let mut at = from;
    let mut quote = None;
    while at < bytes.len() {
        let byte = bytes[at];
        match quote {
            Some(q) if byte == q => quote = None,
            Some(_) => {}
            None if (byte == b'"' || byte == b'\'') && after_equals(bytes, at) => {
                quote = Some(byte);
            }
            None if byte == b'>' => return (at + 1, at > from && bytes[at - 1] == b'/'),
            None => {}
        }
        at += 1;
    }
    (bytes.len(), false)
}

/// Whether the last non-blank byte before `at` is `=` (a quote there opens a value).
fn after_equals(bytes: &[u8], at: usize) -> bool {
    bytes[..at].iter().rev().find(|b| !b.is_ascii_whitespace()) == Some(&b'=')
}

fn is_one_of(name: &str, list: &[&str]) -> bool {
    list.iter().any(|item| name.eq_ignore_ascii_case(item))
}

/// A tag name as a small key: its first 15 bytes, lower case (names are ASCII).
type TagKey = [u8; 16];

fn key(name: &str) -> TagKey {
    let mut key = [0u8; 16];
    for (slot, byte) in key.iter_mut().zip(name.bytes().take(15)) {
        *slot = byte.to_ascii_lowercase();
    }
    key[15] = name.len().min(255) as u8;
    key
}

/// The parser's open elements, as far as nesting and counting need them.
struct Tree {
    open: Vec<(TagKey, bool)>,
    /// Formatting elements an ancestor's end tag closed: the parser reopens them before the
    /// next text or tag (three of a kind at most, as its list of them keeps).
    reopen: Vec<TagKey>,
    elements: usize,
}

impl Tree {
    fn push(&mut self, name: &str) {
        self.open.push((key(name), is_one_of(name, FORMATTING)));
        self.elements += 1;
    }

    fn in_foreign_content(&self) -> bool {
        let (svg, math) = (key("svg"), key("math"));
        self.open.iter().any(|(k, _)| *k == svg || *k == math)
    }

    fn reopen_formatting(&mut self) {
        for key in self.reopen.drain(..) {
            self.open.push((key, true));
            self.elements += 1;
        }
    }

    fn start(&mut self, name: &str, closed: bool) {
        if let Some(family) = SELF_CLOSING_FAMILIES.iter().find(|f| is_one_of(name, f)) {
            let keys: Vec<TagKey> = family.iter().map(|n| key(n)).collect();
            let bounds: Vec<TagKey> = SCOPE_BOUNDARIES.iter().map(|n| key(n)).collect();
            for (from_top, (k, _)) in self.open.iter().rev().take(4).enumerate() {
                if keys.contains(k) {
                    self.close_from(self.open.len() - from_top - 1);
                    break;
                }
                if bounds.contains(k) {
                    break;
                }
            }
        }
        if is_one_of(name, CLOSES_P) && self.open.last().is_some_and(|(k, _)| *k == key("p")) {
            self.open.pop();
        }
        // The parser reopens them inside a `<div>`, before a `<span>`.
        if !is_one_of(name, CLOSES_P) && !is_one_of(name, NO_REOPEN) {
            self.reopen_formatting();
        }
        // `<div/>` opens a div in HTML; only inside SVG or MathML does the slash close it.
        if is_one_of(name, VOID) || closed && self.in_foreign_content() {
            self.elements += 1;
        } else {
            self.push(name);
        }
    }

    fn end(&mut self, name: &str) {
        let wanted = key(name);
        match self.open.iter().rposition(|(k, _)| *k == wanted) {
            Some(at) => self.close_from(at),
            // An end tag for a formatting element no longer open takes it off the reopen list.
            None => self.reopen.retain(|k| *k != wanted),
        }
    }

    /// Closes everything from `at` up; formatting elements closed by another's end tag are
    /// remembered for reopening.
    fn close_from(&mut self, at: usize) {
        let closed: Vec<(TagKey, bool)> = self.open.drain(at..).collect();
        for (k, formatting) in closed.into_iter().skip(1) {
            if formatting && self.reopen.iter().filter(|r| **r == k).count() < 3 {
                self.reopen.push(k);
            }
        }
    }
}

/// Counts elements and nesting in one pass, stopping at the first cap passed.
pub fn measure(html: &str) -> Shape {
    let mut tree = Tree {
        open: Vec::new(),
        reopen: Vec::new(),
        elements: 0,
    };
    let mut depth = 0;
    let mut shape = None;
    scan(html, |piece, at| {
        match piece {
            Piece::Start { name, closed } => tree.start(name, closed),
            Piece::End { name } => tree.end(name),
            Piece::Text(text) => {
                if !text.trim().is_empty() {
                    tree.reopen_formatting();
                }
            }
        }
        depth = depth.max(tree.open.len());
        if tree.open.len() > MAX_DEPTH {
            shape = Some(Shape::TooDeep { at_byte: at });
        } else if tree.elements > MAX_ELEMENTS {
            shape = Some(Shape::TooMany { at_byte: at });
        }
        shape.is_none()
    });
    shape.unwrap_or(Shape::Within {
        depth,
        elements: tree.elements,
    })
}

/// Elements that are never text for the reader (their content is dropped).
const HIDDEN: &[&str] = &["head", "template", "svg", "select", "button"];
/// Elements that start a new line of text.
const BLOCK: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "tr",
    "ul",
    "body",
    "html",
];

/// The page's text without its markup: tags dropped (block elements and `<br>` as line
/// breaks, cells as tabs), raw-text elements and the `<head>` dropped, character references
/// decoded, runs of blank space collapsed. Linear in the source, no tree built.
pub fn plain_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut hidden = 0usize;
    scan(html, |piece, _| {
        match piece {
            Piece::Start { name, closed } => {
                if is_one_of(name, HIDDEN) && !closed {
                    hidden += 1;
                } else if is_one_of(name, BLOCK) {
                    out.push('\n');
                } else if is_one_of(name, &["td", "th"]) {
                    out.push('\t');
                }
            }
            Piece::End { name } => {
                if is_one_of(name, HIDDEN) {
                    hidden = hidden.saturating_sub(1);
                } else if is_one_of(name, BLOCK) {
                    out.push('\n');
                }
            }
            Piece::Text(text) if hidden == 0 => push_decoded(&mut out, text),
            Piece::Text(_) => {}
        }
        true
    });
    tidy(&out)
}

/// Character references decoded (the common named ones and every numeric one).
fn push_decoded(out: &mut String, text: &str) {
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest
            .char_indices()
            .take(12)
            .find(|(_, c)| *c == ';')
            .map(|(i, _)| i);
        let decoded = end.and_then(|end| entity(&rest[1..end]).map(|c| (c, end + 1)));
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
}

fn entity(name: &str) -> Option<char> {
    if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        return Some(
            char::from_u32(code)
                .filter(|c| *c != '\0')
                .unwrap_or('\u{fffd}'),
        );
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "copy" => '©',
        "reg" => '®',
        "mdash" => '—',
        "ndash" => '–',
        "hellip" => '…',
        "laquo" => '«',
        "raquo" => '»',
        "lsquo" => '‘',
        "rsquo" => '’',
        "ldquo" => '“',
        "rdquo" => '”',
        "middot" => '·',
        "bull" => '•',
        _ => return None,
    })
}

/// Spaces and tabs collapsed within lines, lines trimmed, at most one blank line in a row.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.split('\n') {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(&words.join(" "));
    }
    out
}

#[cfg(test)]
#[path = "html_scan_tests.rs"]
mod tests;
