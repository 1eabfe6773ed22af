use super::*;

#[test]
fn every_class_of_character_that_does_not_show_is_shown_as_its_code_point() {
    let cases = [
        ("touch safe\u{200b}.txt", "touch safe<U+200B>.txt"),
        (
            "a\u{200c}b\u{200d}c\u{2060}d\u{feff}e",
            "a<U+200C>b<U+200D>c<U+2060>d<U+FEFF>e",
        ),
        ("\u{202e}txt.exe", "<U+202E>txt.exe"),
        (
            "x\u{2066}y\u{2069}\u{200f}\u{61c}",
            "x<U+2066>y<U+2069><U+200F><U+061C>",
        ),
        ("one\u{2028}two\u{2029}", "one<U+2028>two<U+2029>"),
        ("tag\u{e0041}\u{e007f}", "tag<U+E0041><U+E007F>"),
        ("vs\u{fe0f}\u{e0100}", "vs<U+FE0F><U+E0100>"),
        ("soft\u{ad}hyphen", "soft<U+00AD>hyphen"),
        ("rm foo\u{a0}bar", "rm foo<U+00A0>bar"),
        (
            "ideo\u{3000}space\u{2009}thin",
            "ideo<U+3000>space<U+2009>thin",
        ),
        ("fill\u{3164}er\u{115f}", "fill<U+3164>er<U+115F>"),
        ("bell\u{7}esc\u{1b}[2J", "bell<U+0007>esc<U+001B>[2J"),
        ("c1\u{9b}\u{85}del\u{7f}", "c1<U+009B><U+0085>del<U+007F>"),
        ("cr\rlf", "cr<U+000D>lf"),
        ("cgj\u{34f}x", "cgj<U+034F>x"),
    ];
    for (raw, want) in cases {
        let shown = shown(raw);
        assert_eq!(shown.text, want, "{raw:?}");
        assert!(shown.changed(), "{raw:?}");
        assert!(shown.note().is_some_and(|n| n.contains("U+")), "{raw:?}");
    }
}

#[test]
fn ordinary_text_of_every_script_is_left_alone() {
    for text in [
        "ls -la src/ && git status",
        "café naïve",         // precomposed
        "cafe\u{301}",        // e + combining acute
        "Việt Nam",           // precomposed with two marks
        "Vie\u{323}\u{302}t", // e + dot below + circumflex
        "שָׁלוֹם",               // Hebrew points
        "मैं हिंदी",             // Devanagari signs
        "日本語のテキスト",
        "emoji 🎉 ok",
        "tabs and\nnew lines",
    ] {
        let shown = shown(text);
        assert!(!shown.changed(), "{text:?} became {:?}", shown.text);
        assert_eq!(shown.note(), None);
    }
}

#[test]
fn a_tab_is_spaces_in_text_and_a_marker_in_a_line() {
    assert_eq!(shown("a\tb").text, "a    b");
    assert_eq!(shown_line("a\tb\nc").text, "a<U+0009>b<U+000A>c");
    assert_eq!(shown("a\nb").text, "a\nb");
}

#[test]
fn combining_marks_with_nothing_to_sit_on_or_in_long_runs_are_shown() {
    // At the start, after a space, after punctuation or after a hidden character.
    assert_eq!(shown("\u{301}x").text, "<U+0301>x");
    assert_eq!(shown("rm \u{301}x").text, "rm <U+0301>x");
    assert_eq!(shown("'\u{301}'").text, "'<U+0301>'");
    assert_eq!(shown("a\u{200b}\u{301}").text, "a<U+200B><U+0301>");
    // A long run is shown whole, and counted.
    let zalgo = format!("e{}", "\u{301}".repeat(50));
    let shown = super::shown(&zalgo);
    assert_eq!(shown.text, "e<U+0301 ×50>");
    assert_eq!(shown.hidden, vec![('\u{301}', Hidden::CombiningMark)]);
    let mixed = format!("o{}", "\u{300}\u{301}\u{302}\u{303}");
    assert_eq!(
        super::shown(&mixed).text,
        "o<U+0300><U+0301><U+0302><U+0303>"
    );
    // Up to three marks on a base stay as they are.
    assert!(!super::shown("o\u{300}\u{301}\u{302}").changed());
}

#[test]
fn repeats_are_counted_and_markers_are_where_they_say() {
    let shown = shown("a\u{200b}\u{200b}\u{200b}\u{200b}\u{200b}b\u{202e}c");
    assert_eq!(shown.text, "a<U+200B ×5>b<U+202E>c");
    let marked: Vec<&str> = shown
        .markers
        .iter()
        .map(|r| &shown.text[r.clone()])
        .collect();
    assert_eq!(marked, vec!["<U+200B ×5>", "<U+202E>"]);
    let note = shown.note().unwrap_or_default();
    assert!(
        note.contains("U+200B zero-width") && note.contains("U+202E bidi control"),
        "{note}"
    );
}

#[test]
fn the_note_is_one_line_naming_the_first_few() {
    let text: String = ('\u{e0041}'..='\u{e0050}').collect();
    let note = shown(&text).note().unwrap_or_default();
    assert!(!note.contains('\n'));
    assert!(note.ends_with("12 more"), "{note}");
}

#[test]
fn nothing_hidden_survives_in_the_visible_form() {
    // Every code point up to the supplementary planes' ends: what is left either shows by
    // itself or sits on a base character in a short run.
    let all: String = (0u32..0x3_0000)
        .chain(0xE_0000..0xE_0200)
        .filter_map(char::from_u32)
        .collect();
    let shown = shown_line(&all);
    for c in shown.text.chars() {
        assert!(
            always_hidden(c).is_none(),
            "U+{:04X} left as it is",
            u32::from(c)
        );
    }
}
