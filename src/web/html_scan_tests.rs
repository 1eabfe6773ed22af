use super::*;

fn nested(tag: &str, levels: usize) -> String {
    format!(
        "{}x{}",
        format!("<{tag}>").repeat(levels),
        format!("</{tag}>").repeat(levels)
    )
}

fn depth_of(html: &str) -> usize {
    match measure(html) {
        Shape::Within { depth, .. } => depth,
        other => panic!("past a cap: {other:?}"),
    }
}

#[test]
fn nesting_past_the_cap_is_seen_in_every_spelling() {
    let cases = [
        nested("b", 5000),
        nested("div", 5000),
        nested("DiV", 5000),
        // Never closed.
        "<div>".repeat(5000),
        // Attributes, some with `>` in quoted values.
        "<div class=\"a>b\" id='c>d'>".repeat(5000),
        // Self-closing syntax opens a div in HTML all the same.
        "<div/>".repeat(5000),
        // Unknown and custom elements nest like any other.
        "<x-y>".repeat(5000),
        nested("span", MAX_DEPTH + 1),
        // Tables in tables.
        "<table><tr><td>".repeat(2000),
        // Lists in lists: an `<li>` does not close one in an outer list.
        "<ul><li>".repeat(2000),
    ];
    for html in cases {
        assert!(
            matches!(measure(&html), Shape::TooDeep { .. }),
            "{}: {:?}",
            &html[..40.min(html.len())],
            measure(&html)
        );
    }
}

#[test]
fn formatting_elements_the_parser_reopens_are_counted() {
    // `</div>` closes the `<b><i><u>` inside it; the parser reopens them for the next text
    // (inside the next div), so each `<div>x</div>` makes four elements, not one.
    let html = format!(
        "<div><b><i><u></div>{}",
        "<div>x</div>".repeat(MAX_ELEMENTS / 3)
    );
    assert!(
        matches!(measure(&html), Shape::TooMany { .. }),
        "{:?}",
        measure(&html)
    );
    // An explicit end tag ends the reopening.
    let html = format!("<div><b>x</div></b>{}", "<p>y</p>".repeat(100));
    assert!(measure(&html).within());
}

#[test]
fn element_counts_past_the_cap_are_seen_flat_and_wide() {
    let flat = "<br>".repeat(MAX_ELEMENTS + 1);
    assert!(matches!(measure(&flat), Shape::TooMany { .. }));
    let wide = format!(
        "<table>{}</table>",
        "<tr><td>1</td><td>2</td></tr>".repeat(MAX_ELEMENTS / 3 + 1)
    );
    assert!(matches!(measure(&wide), Shape::TooMany { .. }));
    let unclosed_cells = format!(
        "<table>{}</table>",
        "<tr><td>1<td>2".repeat(MAX_ELEMENTS / 3 + 1)
    );
    assert!(matches!(measure(&unclosed_cells), Shape::TooMany { .. }));
}

#[test]
fn ordinary_pages_are_within_the_caps_at_their_real_depth() {
    assert_eq!(depth_of("<html><body><p>a</p></body></html>"), 3);
    // Unclosed paragraphs, items and cells close as the parser closes them.
    assert_eq!(depth_of(&format!("<body>{}", "<p>text".repeat(10_000))), 2);
    assert_eq!(
        depth_of(&format!("<ul>{}</ul>", "<li>item".repeat(10_000))),
        2
    );
    assert_eq!(
        depth_of(&format!(
            "<table>{}</table>",
            "<tr><td>a<td>b".repeat(10_000)
        )),
        3
    );
    assert_eq!(
        depth_of(&format!("<dl>{}</dl>", "<dt>a<dd>b".repeat(1000))),
        2
    );
    // Void elements and self-closing tags in SVG do not nest.
    assert_eq!(
        depth_of(&format!("<p>{}</p>", "<br><img src=x><hr>".repeat(1000))),
        1
    );
    assert_eq!(
        depth_of(&format!("<svg>{}</svg>", "<path d='M0'/>".repeat(1000))),
        1
    );
}

#[test]
fn scripts_comments_and_raw_text_hide_no_tags_and_count_none() {
    let hidden = "<div>".repeat(5000);
    for html in [
        format!("<script>{hidden}</script><p>a</p>"),
        format!("<SCRIPT type=x>{hidden}</script ><p>a</p>"),
        format!("<style>{hidden}</style><p>a</p>"),
        format!("<textarea>{hidden}</textarea><p>a</p>"),
        format!("<!-- {hidden} --><p>a</p>"),
        format!("<title>{hidden}</title><p>a</p>"),
    ] {
        assert_eq!(depth_of(&html), 1, "{}", &html[..20]);
    }
}

#[test]
fn plain_text_keeps_the_words_in_order_and_drops_the_rest() {
    let html = "<html><head><title>T</title><style>x{}</style></head><body>\
        <h1>Head &amp; line</h1><p>One <b>two</b>&nbsp;three&#33; &#x41;</p>\
        <script>var s = '<p>SCRIPT</p>';</script><ul><li>a<li>b</ul>\
        <table><tr><td>c<td>d</table>a < b &unknown; &</body></html>";
    assert_eq!(
        plain_text(html),
        "Head & line\n\nOne two three! A\n\na\nb\n\nc d\na < b &unknown; &"
    );
}

#[test]
fn plain_text_of_hostile_pages_is_linear_and_whole() {
    let html = nested("b", 200_000);
    let started = std::time::Instant::now();
    assert_eq!(plain_text(&html), "x");
    assert!(matches!(measure(&html), Shape::TooDeep { .. }));
    // A generous bound for a debug build on a shared machine: the point is no blow-up.
    assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
    // Truncated markup ends the text, never the scan.
    for html in [
        "<div",
        "<div class=\"",
        "<!--",
        "<script>x",
        "</",
        "<",
        "&#x110000;",
        "&#",
    ] {
        let _ = plain_text(html);
        let _ = measure(html);
    }
}
