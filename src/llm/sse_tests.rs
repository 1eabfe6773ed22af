#![allow(clippy::unwrap_used)]

use super::*;

fn data(s: &str) -> SseFrame {
    SseFrame::Data(s.to_string())
}

/// Feeds `body` in reads whose sizes cycle through `sizes`.
fn parse_in_reads(body: &[u8], sizes: &[usize]) -> Vec<SseFrame> {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    let mut rest = body;
    let mut i = 0;
    while !rest.is_empty() {
        let n = sizes[i % sizes.len()].min(rest.len());
        parser.feed(&rest[..n], &mut out);
        rest = &rest[n..];
        i += 1;
    }
    parser.finish(&mut out);
    out
}

#[test]
fn framing_cases() {
    let cases: &[(&str, &[u8], Vec<SseFrame>)] = &[
        (
            "lf",
            b"data: {\"a\":1}\n\ndata: [DONE]\n\n",
            vec![data("{\"a\":1}"), SseFrame::Done],
        ),
        (
            "crlf",
            b"data: x\r\n\r\ndata: y\r\n\r\n",
            vec![data("x"), data("y")],
        ),
        ("cr", b"data: x\r\rdata: y\r\r", vec![data("x"), data("y")]),
        (
            "no space after colon",
            b"data:{\"b\":2}\n\n",
            vec![data("{\"b\":2}")],
        ),
        (
            "only one space stripped",
            b"data:  two\n\n",
            vec![data(" two")],
        ),
        (
            "multi-line data",
            b"data: a\ndata: b\n\n",
            vec![data("a\nb")],
        ),
        (
            "comment ignored",
            b": keep-alive\n\ndata: x\n\n",
            vec![data("x")],
        ),
        (
            "openrouter comment",
            b": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\ndata: x\n\n",
            vec![data("x")],
        ),
        (
            "empty data frame ignored",
            b"data:\n\ndata: \n\ndata: x\n\n",
            vec![data("x")],
        ),
        (
            "done without blank line",
            b"data: x\n\ndata: [DONE]",
            vec![data("x"), SseFrame::Done],
        ),
        (
            "done with only lf",
            b"data: x\n\ndata: [DONE]\n",
            vec![data("x"), SseFrame::Done],
        ),
        (
            "unknown fields ignored",
            b"id: 7\nretry: 10\nfoo: bar\ndata: x\n\n",
            vec![data("x")],
        ),
        (
            "field without colon",
            b"data\n\ndata: x\n\n",
            vec![data("x")],
        ),
        (
            "llama.cpp error field",
            b"error: {\"code\":400}\n\ndata: [DONE]\n\n",
            vec![SseFrame::Error("{\"code\":400}".into()), SseFrame::Done],
        ),
        (
            "error event",
            b"event: error\ndata: boom\n\ndata: x\n\n",
            vec![SseFrame::Error("boom".into()), data("x")],
        ),
        (
            "byte order mark",
            b"\xEF\xBB\xBFdata: x\n\n",
            vec![data("x")],
        ),
        (
            "leading space in value kept past the first",
            b"data:   x\n\n",
            vec![data("  x")],
        ),
        ("blank lines only", b"\n\n\r\n", vec![]),
        ("empty body", b"", vec![]),
    ];
    for (name, body, expected) in cases {
        assert_eq!(&parse_all(body), expected, "case {name}");
    }
}

#[test]
fn reads_of_one_to_seven_bytes_split_utf8_and_crlf_pairs() {
    let body = "data: {\"content\":\"héllo wörld — 日本語 🎉\"}\r\n\r\n\
                : keep-alive\r\n\r\n\
                data: {\"content\":\"ünïcödé\"}\r\n\r\n\
                data: [DONE]\r\n\r\n"
        .as_bytes();
    let expected = vec![
        data("{\"content\":\"héllo wörld — 日本語 🎉\"}"),
        data("{\"content\":\"ünïcödé\"}"),
        SseFrame::Done,
    ];
    for size in 1..=7 {
        assert_eq!(
            parse_in_reads(body, &[size]),
            expected,
            "reads of {size} bytes"
        );
    }
    assert_eq!(
        parse_in_reads(body, &[1, 3, 2, 7, 5]),
        expected,
        "mixed reads"
    );
}

#[test]
fn cr_at_the_end_of_a_read_and_lf_at_the_start_of_the_next_is_one_line_end() {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.feed(b"data: a\r", &mut out);
    parser.feed(b"\n\r", &mut out);
    parser.feed(b"\ndata: b\r", &mut out);
    parser.feed(b"\r", &mut out);
    assert_eq!(out, vec![data("a"), data("b")]);
}

#[test]
fn nothing_is_dispatched_before_the_blank_line() {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.feed(b"data: a\n", &mut out);
    assert!(out.is_empty());
    parser.feed(b"\n", &mut out);
    assert_eq!(out, vec![data("a")]);
}

#[test]
fn invalid_utf8_in_a_line_becomes_replacement_characters() {
    assert_eq!(parse_all(b"data: a\xFFb\n\n"), vec![data("a\u{FFFD}b")]);
}

#[test]
fn eof_flushes_an_unterminated_event() {
    assert_eq!(parse_all(b"data: a\ndata: b"), vec![data("a\nb")]);
}

#[test]
fn a_line_past_the_limit_is_dropped_and_reported_once() {
    let mut parser = SseParser::with_max_bytes(32);
    let mut out = Vec::new();
    parser.feed(b"data: ", &mut out);
    for _ in 0..100 {
        parser.feed(b"xxxxxxxxxxxxxxxx", &mut out);
    }
    assert_eq!(out, vec![SseFrame::TooLong { limit: 32 }]);
    // The rest of the long line is skipped; the stream goes on after it.
    parser.feed(b"xxxx\n\ndata: ok\n\n", &mut out);
    assert_eq!(
        out,
        vec![SseFrame::TooLong { limit: 32 }, SseFrame::Data("ok".into())]
    );
    // Many short data lines in one event are bounded the same way.
    let mut parser = SseParser::with_max_bytes(24);
    let mut out = Vec::new();
    parser.feed(
        b"data: 0123456789\ndata: 0123456789\ndata: 0123456789\n\n",
        &mut out,
    );
    assert!(out.contains(&SseFrame::TooLong { limit: 24 }), "{out:?}");
}

#[test]
fn only_non_empty_data_lines_count_as_data() {
    let mut parser = SseParser::new();
    let mut out = Vec::new();
    parser.feed(
        b": keep-alive\n\n: OPENROUTER PROCESSING\n\ndata:\n\n",
        &mut out,
    );
    assert_eq!(parser.data_lines_seen(), 0);
    parser.feed(b"data: {}\n\n", &mut out);
    assert_eq!(parser.data_lines_seen(), 1);
}
