//! write_file's final newline follows the line breaks of the content (or of the file it
//! replaces when the content has none): LF, CRLF, mixed, and content without a final newline.

use serde_json::json;

use super::{Ws, read, write};

fn bytes(ws: &Ws, rel: &str) -> Vec<u8> {
    std::fs::read(ws.root.join(rel)).unwrap()
}

#[tokio::test]
async fn crlf_content_ends_with_crlf_in_a_new_file() {
    let ws = Ws::new();
    write(&ws, "win.txt", "one\r\ntwo").await.unwrap();
    assert_eq!(bytes(&ws, "win.txt"), b"one\r\ntwo\r\n");
    write(&ws, "done.txt", "one\r\ntwo\r\n").await.unwrap();
    assert_eq!(bytes(&ws, "done.txt"), b"one\r\ntwo\r\n");
}

#[tokio::test]
async fn lf_content_ends_with_lf() {
    let ws = Ws::new();
    write(&ws, "unix.txt", "one\ntwo").await.unwrap();
    assert_eq!(bytes(&ws, "unix.txt"), b"one\ntwo\n");
    write(&ws, "single.txt", "one").await.unwrap();
    assert_eq!(bytes(&ws, "single.txt"), b"one\n");
}

#[tokio::test]
async fn crlf_content_over_an_lf_file_stays_crlf() {
    let ws = Ws::new().file("f.txt", "old\n");
    read(&ws, json!({"path": "f.txt"})).await.unwrap();
    write(&ws, "f.txt", "new\r\nlines").await.unwrap();
    assert_eq!(bytes(&ws, "f.txt"), b"new\r\nlines\r\n");
}

#[tokio::test]
async fn a_single_line_over_a_crlf_file_takes_the_file_line_break() {
    let ws = Ws::new().file("f.bat", "@echo off\r\nexit\r\n");
    read(&ws, json!({"path": "f.bat"})).await.unwrap();
    write(&ws, "f.bat", "exit").await.unwrap();
    assert_eq!(bytes(&ws, "f.bat"), b"exit\r\n");
}

#[tokio::test]
async fn mixed_content_is_kept_and_ends_in_its_majority_break() {
    let ws = Ws::new();
    write(&ws, "mixed.txt", "a\r\nb\r\nc\nd").await.unwrap();
    assert_eq!(bytes(&ws, "mixed.txt"), b"a\r\nb\r\nc\nd\r\n");
    write(&ws, "mostly_lf.txt", "a\nb\nc\r\nd").await.unwrap();
    assert_eq!(bytes(&ws, "mostly_lf.txt"), b"a\nb\nc\r\nd\n");
}
