//! What a workspace can do to turn the store against the user: attributes that would convert
//! content, special files, line endings; each must leave checkpoints working and files coming
//! back byte for byte.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use super::tests::{store, write};
use super::*;

fn paths(store: &CheckpointStore, a: &CheckpointId, b: &CheckpointId) -> Vec<String> {
    store
        .diff(a, b)
        .unwrap()
        .into_iter()
        .map(|c| c.path)
        .collect()
}

fn restore_all(store: &CheckpointStore, to: &CheckpointId, from: &CheckpointId) {
    let changed = paths(store, to, from);
    let changed: Vec<&str> = changed.iter().map(String::as_str).collect();
    store.restore(to, &changed).unwrap();
}

#[test]
fn a_working_tree_encoding_attribute_neither_breaks_checkpoints_nor_converts_files() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "notes.txt", "plain ascii\n");
    let store = store(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    write(
        ws.path(),
        ".gitattributes",
        "* working-tree-encoding=UTF-16 text eol=crlf filter=evil ident\n",
    );
    let second = store.snapshot().unwrap();
    assert_eq!(paths(&store, &first.id, &second.id), [".gitattributes"]);
    // Later checkpoints still record every change, as the bytes on disk.
    write(ws.path(), "notes.txt", "changed $Id$\n");
    let third = store.snapshot().unwrap();
    assert_eq!(paths(&store, &second.id, &third.id), ["notes.txt"]);
    restore_all(&store, &first.id, &third.id);
    assert_eq!(
        std::fs::read(ws.path().join("notes.txt")).unwrap(),
        b"plain ascii\n"
    );
    assert!(!ws.path().join(".gitattributes").exists());
}

#[test]
fn crlf_files_come_back_byte_for_byte_with_the_users_text_auto() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), ".gitattributes", "* text=auto\n");
    let crlf = b"line one\r\nline two\r\nmixed\nend\r\n";
    std::fs::write(ws.path().join("win.txt"), crlf).unwrap();
    let store = store(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    std::fs::write(ws.path().join("win.txt"), b"rewritten\n").unwrap();
    let second = store.snapshot().unwrap();
    restore_all(&store, &first.id, &second.id);
    assert_eq!(std::fs::read(ws.path().join("win.txt")).unwrap(), crlf);
}

#[test]
fn a_fifo_is_left_out_and_named_and_checkpoints_keep_working() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "a.txt", "a\n");
    let store = store(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    nix::unistd::mkfifo(
        &ws.path().join("pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    write(ws.path(), "b.txt", "b\n");
    let second = store.snapshot().unwrap();
    assert_eq!(paths(&store, &first.id, &second.id), ["b.txt"]);
    write(ws.path(), "a.txt", "A\n");
    let third = store.snapshot().unwrap();
    assert_eq!(paths(&store, &second.id, &third.id), ["a.txt"]);
    restore_all(&store, &first.id, &third.id);
    assert_eq!(std::fs::read(ws.path().join("a.txt")).unwrap(), b"a\n");
    assert!(!ws.path().join("b.txt").exists());
    assert!(
        ws.path().join("pipe").exists(),
        "the FIFO is not the store's"
    );
}

#[test]
fn cairns_own_settings_are_not_recorded_so_no_undo_takes_them_back() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    write(ws.path(), "a.txt", "a\n");
    let store = store(data.path(), ws.path());
    let first = store.snapshot().unwrap();
    write(
        ws.path(),
        ".cairn/config.toml",
        "[permissions]\nallow = [\"ls\"]\n",
    );
    write(ws.path(), "a.txt", "A\n");
    let second = store.snapshot().unwrap();
    assert_eq!(paths(&store, &first.id, &second.id), ["a.txt"]);
    restore_all(&store, &first.id, &second.id);
    assert!(Path::new(&ws.path().join(".cairn/config.toml")).exists());
}
