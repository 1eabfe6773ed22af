//! list_dir, glob and grep driven as the model drives them, over temp workspaces with a
//! .gitignore, hidden files, binaries and more results than the caps allow.
#![allow(clippy::unwrap_used)]

use cairn::tool_output::{GrepMode, Listing, Matches, ToolOutput};
use cairn::tools::glob::Glob;
use cairn::tools::grep::Grep;
use cairn::tools::list_dir::ListDir;
use serde_json::{Value, json};

use super::tools_files::{Ws, call};

mod confined;

fn project() -> Ws {
    Ws::new()
        .file(".gitignore", "target/\n*.log\n")
        .file("Cargo.toml", "[package]\nname = \"demo\"\n")
        .file("src/main.rs", "fn main() {\n    helper();\n}\n")
        .file("src/util/helper.rs", "pub fn helper() {}\n// TODO: tidy\n")
        .file("target/debug/build.rs", "fn helper() {}\n")
        .file("run.log", "helper called\n")
        .file(".github/ci.yml", "run: cargo test # helper\n")
        .file(".git/config", "[core] helper\n")
        .file("assets/blob.bin", b"helper\0\x01\x02")
}

async fn listing(ws: &Ws, tool: &dyn cairn::tools::Tool, args: Value) -> Listing {
    match call(ws, tool, args).await.unwrap() {
        ToolOutput::Listing(listing) => listing,
        other => panic!("expected a listing, got {other:?}"),
    }
}

async fn grep(ws: &Ws, args: Value) -> Matches {
    match call(ws, &Grep, args).await.unwrap() {
        ToolOutput::Matches(matches) => matches,
        other => panic!("expected matches, got {other:?}"),
    }
}

fn shown(listing: &Listing) -> Vec<String> {
    listing
        .entries
        .iter()
        .map(|e| format!("{}{}", e.path, if e.is_dir { "/" } else { "" }))
        .collect()
}

#[tokio::test]
async fn list_dir_is_sorted_marks_dirs_and_respects_gitignore() {
    let ws = project();
    let top = listing(&ws, &ListDir, json!({"depth": 1})).await;
    assert_eq!(
        shown(&top),
        [".github/", ".gitignore", "Cargo.toml", "assets/", "src/"]
    );
    let src = listing(&ws, &ListDir, json!({"path": "src"})).await;
    assert_eq!(
        shown(&src),
        ["src/main.rs", "src/util/", "src/util/helper.rs"]
    );
    assert_eq!(src.root, "src");
    let text = ToolOutput::Listing(src).model_text();
    assert!(text.contains("src/util/\n"), "{text}");
}

#[tokio::test]
async fn list_dir_caps_at_500_with_a_marker() {
    let ws = Ws::new();
    for i in 0..600 {
        ws.put(&format!("many/f{i:03}.txt"), "");
    }
    ws.put("top.txt", "");
    let out = listing(&ws, &ListDir, json!({"path": ".", "depth": 2})).await;
    assert_eq!(
        (out.entries.len(), out.truncated, out.omitted),
        (500, true, Some(102))
    );
    assert!(
        out.entries.iter().any(|e| e.path == "top.txt"),
        "top level stays complete"
    );
    assert!(ToolOutput::Listing(out).model_text().contains("truncated"));
}

#[tokio::test]
async fn list_dir_errors() {
    let ws = project();
    let err = call(&ws, &ListDir, json!({"path": "Cargo.toml"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("is a file") && err.contains("read_file"),
        "{err}"
    );
    let err = call(&ws, &ListDir, json!({"path": "nope"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no such file or directory"), "{err}");
}

#[tokio::test]
async fn glob_finds_by_pattern_and_skips_ignored_files() {
    let ws = project();
    let all = listing(&ws, &Glob, json!({"pattern": "**/*.rs"})).await;
    let mut paths = shown(&all);
    paths.sort();
    assert_eq!(paths, ["src/main.rs", "src/util/helper.rs"]);
    let direct = listing(&ws, &Glob, json!({"pattern": "*.rs", "path": "src"})).await;
    assert_eq!(shown(&direct), ["src/main.rs"]);
    let narrowed = listing(&ws, &Glob, json!({"pattern": "src/**/*.rs"})).await;
    assert_eq!(narrowed.entries.len(), 2);
    let none = listing(&ws, &Glob, json!({"pattern": "missing/**/*.rs"})).await;
    assert!(none.entries.is_empty());
    let err = call(&ws, &Glob, json!({"pattern": "*", "path": "Cargo.toml"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("is a file"), "{err}");
    let err = call(&ws, &Glob, json!({"pattern": "src/[oops"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad glob pattern"), "{err}");
}

#[tokio::test]
async fn glob_caps_at_500_newest_first() {
    let ws = Ws::new();
    for i in 0..520 {
        ws.put(&format!("gen/{i}.txt"), "");
    }
    let newest = ws.root.join("gen/newest.txt");
    std::fs::write(&newest, "").unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&newest)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let out = listing(&ws, &Glob, json!({"pattern": "**/*.txt"})).await;
    assert_eq!(
        (out.entries.len(), out.truncated, out.omitted),
        (500, true, Some(21))
    );
    assert_eq!(out.entries[0].path, "gen/newest.txt");
}

#[tokio::test]
async fn grep_searches_text_files_that_are_not_ignored() {
    let ws = project();
    let out = grep(&ws, json!({"pattern": "helper"})).await;
    let found: Vec<String> = out
        .lines
        .iter()
        .map(|l| format!("{}:{}", l.path, l.line))
        .collect();
    assert_eq!(
        found,
        [".github/ci.yml:1", "src/main.rs:2", "src/util/helper.rs:1"]
    );
    assert_eq!(out.total_matches, 3);
    let text = ToolOutput::Matches(out).model_text();
    assert!(text.contains("src/main.rs:2:    helper();"), "{text}");
}

#[tokio::test]
async fn grep_modes_filters_and_flags() {
    let ws = project();
    let files = grep(&ws, json!({"pattern": "HELPER", "case_insensitive": true, "glob": "*.rs", "output_mode": "files"})).await;
    assert_eq!(files.mode, GrepMode::Files);
    assert_eq!(
        files.files,
        vec![
            ("src/main.rs".to_string(), 1),
            ("src/util/helper.rs".to_string(), 1)
        ]
    );
    let counts = grep(
        &ws,
        json!({"pattern": "fn|TODO", "path": "src", "output_mode": "count"}),
    )
    .await;
    assert_eq!(
        counts.files,
        vec![
            ("src/main.rs".to_string(), 1),
            ("src/util/helper.rs".to_string(), 2)
        ]
    );
    let with_context = grep(&ws, json!({"pattern": "helper\\(\\);", "context": 1})).await;
    let lines: Vec<(u64, bool)> = with_context
        .lines
        .iter()
        .map(|l| (l.line, l.is_context))
        .collect();
    assert_eq!(lines, [(1, true), (2, false), (3, true)]);
}

#[tokio::test]
async fn grep_caps_matches_with_a_marker() {
    let ws = Ws::new();
    ws.put(
        "many.txt",
        (0..300).map(|i| format!("hit {i}\n")).collect::<String>(),
    );
    let out = grep(&ws, json!({"pattern": "hit"})).await;
    assert_eq!(
        (out.lines.len(), out.total_matches, out.truncated),
        (200, 300, true)
    );
    assert!(ToolOutput::Matches(out).model_text().contains("truncated"));
}

#[tokio::test]
async fn grep_errors_are_correctable() {
    let ws = project();
    let err = call(&ws, &Grep, json!({"pattern": "fn main("}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("invalid regex") && err.contains("backslash"),
        "{err}"
    );
    let err = call(&ws, &Grep, json!({"pattern": "x", "path": "nowhere"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no such file or directory"), "{err}");
}

#[tokio::test]
async fn grep_skips_lines_longer_than_a_mebibyte_with_a_note() {
    // A minified bundle: one 3 MiB line holding the word, then a normal line with it.
    let mut bundle = "var helper=1;".repeat(3 * 1024 * 1024 / 13 + 1);
    bundle.push_str("\n// helper at the end\n");
    let ws = Ws::new()
        .file("dist/bundle.js", &bundle)
        .file("src/a.js", "helper();\n");
    let matches = grep(&ws, json!({"pattern": "helper"})).await;
    let shown: Vec<(String, u64)> = matches
        .lines
        .iter()
        .map(|l| (l.path.clone(), l.line))
        .collect();
    assert_eq!(
        shown,
        [("dist/bundle.js".to_owned(), 2), ("src/a.js".to_owned(), 1)]
    );
    assert_eq!(
        matches.long_lines_skipped,
        [("dist/bundle.js".to_owned(), 1)]
    );
    let text = ToolOutput::Matches(matches).model_text();
    assert!(
        text.ends_with("[skipped 1 line longer than 1 MiB in dist/bundle.js: not searched]\n"),
        "{text}"
    );
    // Also when nothing else matches, and in files mode.
    let matches = grep(&ws, json!({"pattern": "var", "output_mode": "files"})).await;
    assert!(matches.files.is_empty());
    assert_eq!(
        ToolOutput::Matches(matches).model_text(),
        "No matches for `var`\n[skipped 1 line longer than 1 MiB in dist/bundle.js: not searched]\n"
    );
}
