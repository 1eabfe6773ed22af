//! What a fetched body becomes for the model: decoded by its charset (header, BOM, `<meta>`,
//! then a guess), HTML turned into markdown of its main content, other text as it is, binary
//! refused. Main-content extraction and markdown come from `dom_smoothie` (a port of Mozilla's
//! readability.js on `dom_query`/html5ever, whose markdown writer keeps headings, fenced code,
//! lists, tables and links, made absolute against the page); a page it finds no article in is
//! converted whole, with scripts, styles, navigation, headers, footers and forms dropped. A
//! page past `html_scan`'s caps (nesting, element count) is never parsed: it goes out as plain
//! text.

use std::borrow::Cow;

use dom_smoothie::{Config, Readability, TextMode};
use encoding_rs::Encoding;

use super::html_scan;

/// What kind of body came back, judged from its declared type and its first bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyKind {
    Html,
    Text,
    /// Not text: refused, naming the type.
    Binary(String),
}

/// How the model wants a page.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// HTML as markdown of its main content; other text as it is.
    #[default]
    Markdown,
    /// HTML as plain text of its main content.
    Text,
    /// The decoded body exactly as served.
    Raw,
}

/// The media type without parameters, lower case (`text/html`): `type/subtype` of token
/// characters only (RFC 9110), at most 127 bytes; anything else a server sends is no type.
/// This is what reaches the model of a server's `Content-Type`, outside the untrusted frame.
pub fn media_type(content_type: Option<&str>) -> Option<String> {
    let essence = content_type?.split(';').next()?.trim().to_ascii_lowercase();
    let (kind, subtype) = essence.split_once('/')?;
    let token = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    (essence.len() <= 127 && token(kind) && token(subtype)).then_some(essence)
}

/// Judges the body by its declared type, falling back on its first bytes when the type is
/// missing or generic.
pub fn kind_of(content_type: Option<&str>, head: &[u8]) -> BodyKind {
    let essence = media_type(content_type);
    match essence.as_deref() {
        Some("text/html" | "application/xhtml+xml") => BodyKind::Html,
        Some(t) if is_textual(t) => BodyKind::Text,
        None | Some("application/octet-stream" | "binary/octet-stream") => sniff(head)
            .unwrap_or_else(|| BodyKind::Binary(essence.unwrap_or_else(|| "unknown".into()))),
        Some(t) => BodyKind::Binary(t.to_string()),
    }
}

/// Whether a declared type is text the model can read.
pub fn is_textual(essence: &str) -> bool {
    essence.starts_with("text/")
        || essence.ends_with("+xml")
        || essence.ends_with("+json")
        || matches!(
            essence,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/ecmascript"
                | "application/x-javascript"
                | "application/toml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/x-sh"
                | "application/sql"
                | "application/graphql"
                | "application/ld+json"
                | "application/x-ndjson"
                | "application/jsonl"
        )
}

/// Text or binary by content, for a body whose type says nothing.
fn sniff(head: &[u8]) -> Option<BodyKind> {
    let sample = &head[..head.len().min(4096)];
    if sample.is_empty() {
        return Some(BodyKind::Text);
    }
    if sample.contains(&0) && Encoding::for_bom(sample).is_none() {
        return None;
    }
    let lower: Vec<u8> = sample
        .iter()
        .take(512)
        .map(u8::to_ascii_lowercase)
        .collect();
    let looks_html = [b"<!doctype html".as_slice(), b"<html", b"<head", b"<body"]
        .iter()
        .any(|tag| lower.windows(tag.len()).any(|w| w == *tag));
    Some(if looks_html {
        BodyKind::Html
    } else {
        BodyKind::Text
    })
}

/// Decodes a body: the header's charset, a byte-order mark, an HTML `<meta>` charset, then a
/// guess from the content (UTF-8 when it is valid UTF-8).
pub fn decode<'a>(bytes: &'a [u8], content_type: Option<&str>, html: bool) -> Cow<'a, str> {
    let declared = content_type
        .and_then(charset_param)
        .and_then(|label| Encoding::for_label(label.as_bytes()));
    let encoding = Encoding::for_bom(bytes)
        .map(|(encoding, _)| encoding)
        .or(declared)
        .or_else(|| html.then(|| meta_charset(bytes)).flatten())
        .unwrap_or_else(|| guess(bytes));
    let (text, _, _) = encoding.decode(bytes);
    text
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// `<meta charset="…">` or `<meta http-equiv="Content-Type" content="…; charset=…">` in the
/// first 1024 bytes, as browsers look for it.
fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]).to_ascii_lowercase();
    let at = head.find("charset=")?;
    let rest = head[at + "charset=".len()..].trim_start_matches(['"', '\'', ' ']);
    let label: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    Encoding::for_label(label.as_bytes())
}

fn guess(bytes: &[u8]) -> &'static Encoding {
    if std::str::from_utf8(bytes).is_ok() {
        return encoding_rs::UTF_8;
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(&bytes[..bytes.len().min(1 << 20)], true);
    detector.guess(None, chardetng::Utf8Detection::Allow)
}

/// Elements that are never content: dropped from a page converted whole.
const NOT_CONTENT: &[&str] = &[
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form",
    "iframe", "svg", "canvas", "button", "select", "head",
];

/// A conversion's text and, when the page could not be converted as asked, why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Converted {
    pub text: String,
    /// Said to the model beside the content (the page went out as plain text, and why).
    pub note: Option<String>,
}

impl Converted {
    pub fn as_is(text: String) -> Self {
        Self { text, note: None }
    }

    /// The page as plain text, saying `why`.
    pub fn plain(html: &str, why: &str) -> Self {
        Self {
            text: html_scan::plain_text(html),
            note: Some(format!("the page is {why}; it is given as plain text")),
        }
    }
}

/// Parsed trees may be deeper or larger than the scan counted (the parser reopens formatting
/// elements and adds `<html>`, `<body>`, `<tbody>`); past this slack the extractor is not run.
const TREE_DEPTH_CAP: usize = html_scan::MAX_DEPTH + 64;
const TREE_ELEMENTS_CAP: usize = html_scan::MAX_ELEMENTS + html_scan::MAX_ELEMENTS / 2;

/// HTML as markdown (or plain text) of its main content, links absolute against `url`. The
/// source is measured before it is parsed and the tree before it is extracted: past
/// `html_scan`'s caps the page is given as plain text (linear in its size), so no page costs
/// more than the extractor's worst case within the caps. Recursion in the markdown writer is
/// bounded by the depth cap; `web::convert` runs this on a thread with a large stack.
pub fn html_to(html: &str, url: &str, format: Format) -> Converted {
    let shape = html_scan::measure(html);
    if let Some(why) = shape.reason() {
        return Converted::plain(html, &why);
    }
    let document = dom_query::Document::from(html);
    if let Some(why) = tree_too_big(&document) {
        return Converted::plain(html, &why);
    }
    let text_mode = match format {
        Format::Text => TextMode::Formatted,
        _ => TextMode::Markdown,
    };
    let config = Config {
        text_mode,
        ..Config::default()
    };
    let article = Readability::with_document(document, Some(url), Some(config))
        .ok()
        .and_then(|mut reader| reader.parse().ok());
    let text = match article {
        Some(article) if article.text_content.trim().len() >= 200 => {
            let body = article.text_content.trim().to_string();
            let title = article.title.trim();
            // Readability drops the heading that repeats the title; the model wants it back.
            let head: String = body.chars().take(300).collect();
            match format {
                _ if title.is_empty() || head.contains(title) => body,
                Format::Text => format!("{title}\n\n{body}"),
                _ => format!("# {title}\n\n{body}"),
            }
        }
        _ => whole_page(html, url, format),
    };
    Converted::as_is(text)
}

/// The parsed tree's depth and element count, walked without recursion; why it is too big for
/// the extractor, if it is.
fn tree_too_big(document: &dom_query::Document) -> Option<String> {
    let (mut depth, mut deepest, mut elements) = (0usize, 0usize, 0usize);
    let mut node = document.root().first_child();
    while let Some(current) = node {
        if current.is_element() {
            elements += 1;
        }
        deepest = deepest.max(depth);
        if deepest > TREE_DEPTH_CAP {
            return Some(format!("nested more than {TREE_DEPTH_CAP} elements deep"));
        }
        if elements > TREE_ELEMENTS_CAP {
            return Some(format!("more than {TREE_ELEMENTS_CAP} elements"));
        }
        if let Some(child) = current.first_child() {
            depth += 1;
            node = Some(child);
            continue;
        }
        let mut up = Some(current);
        node = None;
        while let Some(at) = up {
            if let Some(next) = at.next_sibling() {
                node = Some(next);
                break;
            }
            up = at.parent();
            depth = depth.saturating_sub(1);
        }
    }
    None
}

/// The whole page without what is never content, for pages readability finds no article in
/// (a short page, a listing, a home page).
fn whole_page(html: &str, url: &str, format: Format) -> String {
    let document = dom_query::Document::from(html);
    for tag in NOT_CONTENT {
        document.select(tag).remove();
    }
    if let Ok(base) = url::Url::parse(url) {
        absolutize(&document, &base, "a[href]", "href");
        absolutize(&document, &base, "img[src]", "src");
    }
    let body = document.select("body");
    let root = if body.exists() {
        body
    } else {
        document.select("html")
    };
    let text = match (format, root.nodes().first()) {
        (Format::Text, _) => root.formatted_text().to_string(),
        (_, Some(node)) => node.md(None).to_string(),
        (_, None) => String::new(),
    };
    text.trim().to_string()
}

fn absolutize(document: &dom_query::Document, base: &url::Url, selector: &str, attr: &str) {
    for node in document.select(selector).nodes() {
        if let Some(value) = node.attr(attr)
            && let Ok(absolute) = base.join(value.trim())
        {
            node.set_attr(attr, absolute.as_str());
        }
    }
}

#[cfg(test)]
#[path = "page_tests.rs"]
mod tests;
