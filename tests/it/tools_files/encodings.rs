//! Files in other encodings than UTF-8: read_file shows them decoded with a note, write_file
//! and edit_file write them back in their own encoding, the read-before-write stamp still
//! guards the raw bytes, and binary files stay an error.

use serde_json::json;

use super::{Ws, edit, read, write};

/// "Café crème, naïve façade" and more, in Latin-1 / windows-1252, with CRLF line breaks.
const LATIN1: &[u8] = b"Caf\xe9 cr\xe8me\r\nna\xefve fa\xe7ade \x80 5\r\nd\xe9j\xe0 vu\r\n";

fn bytes(ws: &Ws, rel: &str) -> Vec<u8> {
    std::fs::read(ws.root.join(rel)).unwrap()
}

fn utf16le(text: &str) -> Vec<u8> {
    let mut out = vec![0xff, 0xfe];
    for unit in text.encode_utf16() {
        out.extend_from_slice(&unit.to_le_bytes());
    }
    out
}

#[tokio::test]
async fn a_latin1_file_is_shown_decoded_with_its_encoding() {
    let ws = Ws::new().file("notes.txt", LATIN1);
    let out = read(&ws, json!({"path": "notes.txt"})).await.unwrap();
    assert_eq!(
        out,
        "[encoding: windows-1252; writes and edits keep it]\n     1\tCaf\u{e9} cr\u{e8}me\n     \
         2\tna\u{ef}ve fa\u{e7}ade \u{20ac} 5\n     3\td\u{e9}j\u{e0} vu\n"
    );
}

#[tokio::test]
async fn an_edit_keeps_the_file_encoding_and_line_breaks() {
    let ws = Ws::new().file("notes.txt", LATIN1);
    read(&ws, json!({"path": "notes.txt"})).await.unwrap();
    let change = edit(
        &ws,
        json!({"path": "notes.txt", "old_string": "na\u{ef}ve fa\u{e7}ade", "new_string": "r\u{e9}sum\u{e9}\nd\u{e9}tail"}),
    )
    .await
    .unwrap();
    assert_eq!(
        bytes(&ws, "notes.txt"),
        b"Caf\xe9 cr\xe8me\r\nr\xe9sum\xe9\r\nd\xe9tail \x80 5\r\nd\xe9j\xe0 vu\r\n"
    );
    // The user sees the diff as text, not as mangled bytes.
    assert!(
        change.diff.contains("-na\u{ef}ve fa\u{e7}ade \u{20ac} 5"),
        "{}",
        change.diff
    );
    assert!(change.diff.contains("+r\u{e9}sum\u{e9}"), "{}", change.diff);
    // Our own write refreshed the stamp: a second edit needs no new read.
    edit(
        &ws,
        json!({"path": "notes.txt", "old_string": "d\u{e9}j\u{e0}", "new_string": "d\u{e9}j\u{e0} d\u{e9}j\u{e0}"}),
    )
    .await
    .unwrap();
    assert!(bytes(&ws, "notes.txt").ends_with(b"d\xe9j\xe0 d\xe9j\xe0 vu\r\n"));
}

#[tokio::test]
async fn a_character_the_encoding_lacks_is_a_clear_error_and_nothing_changes() {
    let ws = Ws::new().file("notes.txt", LATIN1);
    read(&ws, json!({"path": "notes.txt"})).await.unwrap();
    let err = edit(
        &ws,
        json!({"path": "notes.txt", "old_string": "vu", "new_string": "\u{4e16}\u{754c}"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("line 3 has '\u{4e16}' (U+4E16), which windows-1252 cannot store"),
        "{err}"
    );
    assert!(err.contains("no edit was applied"), "{err}");
    let err = write(&ws, "notes.txt", "emoji \u{1f600}")
        .await
        .unwrap_err();
    assert!(err.contains("windows-1252 cannot store"), "{err}");
    assert!(err.contains("nothing was written"), "{err}");
    assert_eq!(bytes(&ws, "notes.txt"), LATIN1);
}

#[tokio::test]
async fn write_file_keeps_the_encoding_of_the_file_it_replaces() {
    let ws = Ws::new().file("notes.txt", LATIN1);
    read(&ws, json!({"path": "notes.txt"})).await.unwrap();
    write(&ws, "notes.txt", "cr\u{e8}me br\u{fb}l\u{e9}e\nfin")
        .await
        .unwrap();
    // Encoded back, CRLF like the file, and the final newline too.
    assert_eq!(bytes(&ws, "notes.txt"), b"cr\xe8me br\xfbl\xe9e\r\nfin\r\n");
    // A new file is UTF-8.
    write(&ws, "new.txt", "cr\u{e8}me").await.unwrap();
    assert_eq!(ws.read("new.txt"), "cr\u{e8}me\n");
}

#[tokio::test]
async fn the_stamp_guards_the_raw_bytes_of_an_encoded_file() {
    let ws = Ws::new().file("notes.txt", LATIN1);
    let err = edit(
        &ws,
        json!({"path": "notes.txt", "old_string": "vu", "new_string": "lu"}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("not read in this session"), "{err}");
    read(&ws, json!({"path": "notes.txt"})).await.unwrap();
    // One byte changes on disk (0xe9 to 0xe8): same length, same decoded length.
    let mut changed = LATIN1.to_vec();
    changed[3] = 0xe8;
    ws.put("notes.txt", &changed);
    let err = edit(
        &ws,
        json!({"path": "notes.txt", "old_string": "vu", "new_string": "lu"}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("changed on disk"), "{err}");
    assert_eq!(bytes(&ws, "notes.txt"), changed);
}

#[tokio::test]
async fn utf16_with_a_bom_is_read_and_edited_in_utf16() {
    let ws = Ws::new().file("win.txt", utf16le("h\u{e9}llo\r\nw\u{f6}rld \u{1f600}\r\n"));
    let out = read(&ws, json!({"path": "win.txt"})).await.unwrap();
    assert_eq!(
        out,
        "[encoding: UTF-16LE; writes and edits keep it]\n     1\th\u{e9}llo\n     2\tw\u{f6}rld \u{1f600}\n"
    );
    edit(
        &ws,
        json!({"path": "win.txt", "old_string": "h\u{e9}llo\nw", "new_string": "hi\nthere\nw"}),
    )
    .await
    .unwrap();
    assert_eq!(
        bytes(&ws, "win.txt"),
        utf16le("hi\r\nthere\r\nw\u{f6}rld \u{1f600}\r\n")
    );
}

#[tokio::test]
async fn shift_jis_is_shown_decoded() {
    let text = "日本語のテキストです。\nこれはテストです。\n";
    let (encoded, _, _) = encoding_rs::SHIFT_JIS.encode(text);
    let ws = Ws::new().file("jp.txt", encoded.as_ref());
    let out = read(&ws, json!({"path": "jp.txt"})).await.unwrap();
    assert_eq!(
        out,
        "[encoding: Shift_JIS; writes and edits keep it]\n     1\t日本語のテキストです。\n     2\tこれはテストです。\n"
    );
}

#[tokio::test]
async fn binary_files_stay_an_error() {
    let mut random = Vec::new();
    let mut state = 0x2545_f491_u32;
    for _ in 0..4096 {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        random.push((state >> 24) as u8);
    }
    let ws = Ws::new().file("blob.bin", &random).file(
        "controls.bin",
        b"\x01\x02\x03\x04\x90\x91\x92\x05\x06\x07abc\xe9".repeat(100),
    );
    for name in ["blob.bin", "controls.bin"] {
        let err = read(&ws, json!({"path": name})).await.unwrap_err();
        assert!(err.contains("is a binary file"), "{name}: {err}");
    }
}
