//! One address per name (issue 30 item 5). A type is reached at the one module that defines
//! it: no `pub use …::*` hands a whole module out again under a second path, and no two files
//! of `src/` define a type (struct, enum, union, type alias, trait) of the same name, so a name
//! read anywhere says which thing it is without looking at the imports. Test code is left out
//! (`*_tests.rs`, `tests.rs`, `tests/` folders, what follows a file's `#[cfg(test)]`).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::source_graph::{is_test_file, rust_files};

/// A file's code before its tests: everything above the first `#[cfg(test)]` line.
fn before_tests(text: &str) -> &str {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("#[cfg(test)]") {
            return &text[..at];
        }
        at += line.len();
    }
    text
}

/// The `pub` use declarations that re-export a whole module (`pub use a::*;`,
/// `pub(crate) use a::{b::*, c};`), each as `file:line`.
fn glob_reexports(files: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (file, text) in files {
        let code = before_tests(text);
        let lines: Vec<&str> = code.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") || !trimmed.starts_with("pub") {
                continue;
            }
            let Some(after_pub) = trimmed.strip_prefix("pub") else {
                continue;
            };
            let after_vis = match after_pub.strip_prefix('(') {
                Some(rest) => rest.split_once(')').map_or("", |(_, rest)| rest),
                None => after_pub,
            };
            if !after_vis.trim_start().starts_with("use ") {
                continue;
            }
            // The declaration runs to its `;`, possibly over several lines.
            let mut declaration = String::new();
            for next in &lines[i..] {
                declaration.push_str(next);
                if next.contains(';') {
                    break;
                }
            }
            if declaration.contains('*') {
                found.push(format!("{file}:{}", i + 1));
            }
        }
    }
    found
}

/// The name a top-level type definition line defines: `pub(crate) struct Name<T> {` → `Name`.
fn defined_type(line: &str) -> Option<&str> {
    let mut rest = line;
    if let Some(after) = rest.strip_prefix("pub") {
        rest = match after.strip_prefix('(') {
            Some(vis) => vis.split_once(')')?.1,
            None => after,
        };
        rest = rest.strip_prefix(' ')?;
    }
    rest = rest.strip_prefix("unsafe ").unwrap_or(rest);
    let (keyword, after) = rest.split_once(' ')?;
    if !matches!(keyword, "struct" | "enum" | "union" | "type" | "trait") {
        return None;
    }
    let end = after
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(after.len());
    let name = &after[..end];
    (!name.is_empty()).then_some(name)
}

/// Every type name defined at the top level of more than one place, with each `file:line`.
fn defined_twice(files: &[(String, String)]) -> BTreeMap<String, Vec<String>> {
    let mut places: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (file, text) in files {
        for (i, line) in before_tests(text).lines().enumerate() {
            if let Some(name) = defined_type(line) {
                places
                    .entry(name.to_string())
                    .or_default()
                    .push(format!("{file}:{}", i + 1));
            }
        }
    }
    places.retain(|_, at| at.len() > 1);
    places
}

/// The code files of `src/` (test files left out), as (path below `src/`, text).
fn source_files() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let relative = path.strip_prefix(&src).unwrap().to_path_buf();
            if is_test_file(&relative) {
                return None;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            Some((relative.to_string_lossy().into_owned(), text))
        })
        .collect()
}

#[test]
fn no_module_is_re_exported_whole() {
    let found = glob_reexports(&source_files());
    assert!(
        found.is_empty(),
        "`pub use …::*` gives a module's names a second address; name them where they are \
         defined: {found:#?}"
    );
}

#[test]
fn every_type_name_is_defined_once() {
    let found = defined_twice(&source_files());
    assert!(
        found.is_empty(),
        "type names defined more than once in src/ (rename to say what each is where it lives, \
         or merge): {found:#?}"
    );
}

fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(file, text)| ((*file).to_string(), (*text).to_string()))
        .collect()
}

#[test]
fn the_checker_finds_a_whole_module_re_exported() {
    let found = glob_reexports(&files(&[
        (
            "tools/mod.rs",
            "pub mod bash;\n\npub use crate::tool_output::*;\nuse std::path::*;\n",
        ),
        (
            "web/mod.rs",
            "pub(crate) use self::{\n    client::Body,\n    page::*,\n};\n",
        ),
        (
            "fine.rs",
            "pub use crate::bus::Decision;\n// pub use a::*;\n\
             #[cfg(test)]\nmod tests {\n    pub use super::*;\n}\n",
        ),
    ]));
    assert_eq!(found, ["tools/mod.rs:3", "web/mod.rs:1"]);
}

#[test]
fn the_checker_finds_a_type_name_defined_twice() {
    let found = defined_twice(&files(&[
        (
            "tools/glob.rs",
            "#[derive(Deserialize)]\nstruct Args {\n    pattern: String,\n}\n\
             pub type Found<T> = Vec<T>;\n",
        ),
        (
            "tools/grep.rs",
            "pub(super) struct Args;\nfn f() {\n    struct Inner;\n}\n\
             #[cfg(test)]\nmod tests {\nstruct Found;\n}\n",
        ),
        (
            "skills/discover.rs",
            "pub enum Found<T> {\n    One(T),\n}\npub trait Args {}\nstruct Inner;\n",
        ),
    ]));
    let expected: BTreeMap<String, Vec<String>> = [
        (
            "Args",
            vec!["tools/glob.rs:2", "tools/grep.rs:1", "skills/discover.rs:4"],
        ),
        ("Found", vec!["tools/glob.rs:5", "skills/discover.rs:1"]),
    ]
    .into_iter()
    .map(|(name, at)| (name.to_string(), at.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(found, expected);
}

#[test]
fn the_checker_reads_definition_lines() {
    assert_eq!(defined_type("pub struct Entry {"), Some("Entry"));
    assert_eq!(defined_type("pub(crate) enum Kind {"), Some("Kind"));
    assert_eq!(
        defined_type("pub(in crate::tui) struct Found<T> {"),
        Some("Found")
    );
    assert_eq!(defined_type("type Oid = [u8; 20];"), Some("Oid"));
    assert_eq!(defined_type("pub unsafe trait Store {"), Some("Store"));
    assert_eq!(defined_type("    struct Nested;"), None);
    assert_eq!(defined_type("pub fn entry() {}"), None);
    assert_eq!(defined_type("// struct Comment"), None);
}
