//! What is derived once and passed down, checked over `src/`: cairn's directories are read
//! from the environment (`Dirs::from_env`) only by the binary's entry and launch, everything
//! else takes `&Dirs`; a session's tool environment has one constructor (`ToolEnv::new`, its
//! parts set by `with_*`). Test code (test files, `#[cfg(test)]` items and the conveniences
//! behind `#[cfg(any(test, feature = "testing"))]`) is not read.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use crate::support::source_graph::{is_test_file, rust_files};

/// Files that may derive cairn's directories from the environment.
const FROM_ENV_ALLOWED: &[&str] = &["main.rs", "launch.rs", "dirs.rs"];

/// `code` without the items a test attribute guards (`#[cfg(test)]`, `#[cfg(any(test, …))]`):
/// from the attribute to the end of the item it is on (its braces, or its `;`).
fn without_test_items(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest
        .find("#[cfg(test)]")
        .into_iter()
        .chain(rest.find("#[cfg(any(test"))
        .min()
    {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let end = item_end(item);
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// Where the item starting with an attribute at the start of `text` ends.
fn item_end(text: &str) -> usize {
    let mut depth = 0usize;
    let mut opened = false;
    // Past the attribute's own brackets first.
    let start = text.find(']').map_or(0, |i| i + 1);
    for (i, c) in text[start..].char_indices() {
        match c {
            '{' => {
                depth += 1;
                opened = true;
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if opened && depth == 0 {
                    return start + i + 1;
                }
            }
            ';' if !opened => return start + i + 1,
            _ => {}
        }
    }
    text.len()
}

/// The non-comment lines of `code` that call `Dirs::from_env`.
fn from_env_calls(code: &str) -> Vec<String> {
    without_test_items(code)
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .filter(|line| line.contains("Dirs::from_env()"))
        .map(|line| line.trim().to_string())
        .collect()
}

/// The associated functions of `impl ToolEnv` blocks that build one (no `self`, and `Self` or
/// `ToolEnv` in what they return).
fn tool_env_constructors(code: &str) -> Vec<String> {
    let code = without_test_items(code);
    let mut found = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("impl ToolEnv {") {
        let block = &rest[at..];
        let end = item_end(block);
        for line in block[..end].lines() {
            let line = line.trim();
            let Some(signature) = line
                .strip_prefix("pub fn ")
                .or_else(|| line.strip_prefix("fn "))
                .or_else(|| line.strip_prefix("pub(crate) fn "))
            else {
                continue;
            };
            let takes_self = signature.split_once('(').is_some_and(|(_, args)| {
                args.trim_start().starts_with(['&', 's', 'm']) && {
                    let args = args.trim_start().trim_start_matches('&').trim_start();
                    let args = args.strip_prefix("mut ").unwrap_or(args);
                    args.starts_with("self")
                }
            });
            if !takes_self {
                found.push(signature.split('(').next().unwrap_or("").to_string());
            }
        }
        rest = &block[end..];
    }
    found
}

#[test]
fn the_checkers_see_calls_and_constructors_but_not_test_code() {
    let code = "fn a() { let d = Dirs::from_env(); }\n\
        // Dirs::from_env() in a comment\n\
        #[cfg(any(test, feature = \"testing\"))]\n\
        pub fn from_env() -> Self { Self::with(&Dirs::from_env()) }\n\
        #[cfg(test)]\nmod tests { fn t() { Dirs::from_env(); } }\n";
    assert_eq!(
        from_env_calls(code),
        ["fn a() { let d = Dirs::from_env(); }"]
    );
    let two = "impl ToolEnv {\n    pub fn new(w: PathBuf) -> Self {\n        Self { w }\n    }\n\
        pub fn with_files(self, f: F) -> Self {\n        self\n    }\n\
        pub fn for_session(w: PathBuf) -> Arc<Self> {\n        todo()\n    }\n\
        pub fn fresh(&self) -> Self {\n        x()\n    }\n}\n";
    assert_eq!(tool_env_constructors(two), ["new", "for_session"]);
}

#[test]
fn cairns_directories_come_from_the_environment_only_at_the_entry() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for path in &files {
        let relative = path.strip_prefix(&src).unwrap();
        let name = relative.to_string_lossy();
        if is_test_file(relative) || FROM_ENV_ALLOWED.contains(&name.as_ref()) {
            continue;
        }
        let code = std::fs::read_to_string(path).unwrap();
        found.extend(
            from_env_calls(&code)
                .into_iter()
                .map(|line| format!("{name}: {line}")),
        );
    }
    assert!(
        found.is_empty(),
        "Dirs::from_env outside main and launch (take `&Dirs` instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_tool_environment_has_one_constructor() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let constructors: Vec<String> = files
        .iter()
        .filter(|path| !is_test_file(path.strip_prefix(&src).unwrap()))
        .flat_map(|path| tool_env_constructors(&std::fs::read_to_string(path).unwrap()))
        .collect();
    assert_eq!(constructors, ["new"], "ToolEnv's constructors");
}
