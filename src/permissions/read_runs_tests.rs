#![allow(clippy::unwrap_used)]

use super::*;

const SECRET: &str = "AKIAIOSFODNN7EXAMPLE";

fn read() -> ReadRuns {
    let runs = ReadRuns::default();
    runs.note(&format!(
        "[default]\naws_access_key_id = {SECRET}\nregion = eu-west-1\npassword is hunter2 hunter2\n"
    ));
    runs
}

#[test]
fn every_spelling_of_a_read_run_in_a_url_is_found() {
    let runs = read();
    for url in [
        // As written, in the query, the path, a fragment of the URL.
        "https://evil.example/?k=AKIAIOSFODNN7EXAMPLE",
        "https://evil.example/AKIAIOSFODNN7EXAMPLE",
        "https://evil.example/x?a=1&b=AKIAIOSFODNN7EXAMPLE&c=2",
        // In a DNS label (lowercased on the wire), split over labels or segments.
        "https://akiaiosfodnn7example.evil.example/",
        "https://akiaiosfo.dnn7example.evil.example/",
        "https://evil.example/AKIAIOSF/ODNN7EXAMPLE",
        "https://evil.example/?a=AKIAIOSF&b=ODNN7EXAMPLE",
        // Percent-encoded, twice, form-encoded.
        "https://evil.example/?k=%41%4B%49%41IOSFODNN7EXAMPLE",
        "https://evil.example/?k=%2541%254B%2549%2541IOSFODNN7EXAMPLE",
        "https://evil.example/?q=password+is+hunter2+hunter2",
        "https://evil.example/?q=password%20is%20hunter2",
        // Base64 (standard, URL-safe, after a stray byte), hex (both cases), base64 of hex.
        "https://evil.example/?d=QUtJQUlPU0ZPRE5ON0VYQU1QTEU=",
        "https://evil.example/?d=QUtJQUlPU0ZPRE5ON0VYQU1QTEU%3D",
        "https://evil.example/_0FLSUFJT1NGT0ROTjdFWEFNUExF",
        "https://evil.example/?h=414b4941494f53464f444e4e374558414d504c45",
        "https://evil.example/?h=414B4941494F53464F444E4E374558414D504C45",
        "https://414b4941494f53464f444e4e374558414d504c45.evil.example/",
        "https://evil.example/?x=NDE0YjQ5NDE0OTRmNTM0NjRmNDQ0ZTRlMzc0NTU4NDE0ZDUwNGM0NQ",
        // Inside a longer line of the file.
        "https://evil.example/?l=aws_access_key_id%20%3D%20AKIA",
    ] {
        assert!(runs.carried(url).is_some(), "missed: {url}");
    }
}

#[test]
fn urls_without_a_read_run_pass() {
    let runs = read();
    for url in [
        "https://docs.rs/serde/latest/serde/",
        // 15 bytes of it, as written and in base64.
        "https://evil.example/?k=AKIAIOSFODNN7EX",
        "https://evil.example/?d=QUtJQUlPU0ZPRE5ON0VY",
        "https://crates.io/search?q=toml+parser+for+rust",
    ] {
        assert_eq!(runs.carried(url), None, "{url}");
    }
    // Nothing read: nothing carried.
    assert_eq!(
        ReadRuns::default().carried("https://evil.example/?k=AKIAIOSFODNN7EXAMPLE"),
        None
    );
}

#[test]
fn what_was_found_says_how() {
    let runs = read();
    let found = runs
        .carried("https://evil.example/?d=QUtJQUlPU0ZPRE5ON0VYQU1QTEU=")
        .unwrap();
    assert!(found.how.contains("base64"), "{found:?}");
    assert!(
        SECRET
            .to_ascii_lowercase()
            .contains(&found.sample.to_ascii_lowercase()),
        "{found:?}"
    );
    let found = runs
        .carried("https://evil.example/?k=AKIAIOSFODNN7EXAMPLE")
        .unwrap();
    assert_eq!(found.how, "as written");
}

#[test]
fn the_oldest_text_goes_past_the_cap_and_a_huge_url_is_bounded() {
    let runs = ReadRuns::default();
    runs.note(&format!("first {SECRET} first"));
    let filler = "x".repeat(MAX_KEPT / 4);
    for _ in 0..4 {
        runs.note(&filler);
    }
    assert_eq!(
        runs.carried(&format!("https://e.example/?k={SECRET}")),
        None
    );
    runs.note(&format!("again {SECRET}"));
    // A run at the very end of a URL far longer than what is looked at is still found,
    // and the check over the whole kept text stays linear.
    let url = format!("https://e.example/?pad={}&k={SECRET}", "a".repeat(1 << 20));
    assert!(runs.carried(&url).is_some());
    assert!(candidates(&url).len() <= MAX_CANDIDATES);
}
