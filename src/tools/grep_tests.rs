//! Unit tests of grep over small temp trees: modes, filters, context, caps.
#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (file, content) in files {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    dir
}

fn run(root: &Path, args: serde_json::Value) -> Matches {
    let args: GrepArgs = parse_args(&args).unwrap();
    let root = root.canonicalize().unwrap();
    search(
        &Beneath::new(Path::new("/"), &root).unwrap(),
        &root,
        &[],
        &query(&args).unwrap(),
        &CancellationToken::new(),
    )
    .unwrap()
}

fn shown(m: &Matches) -> Vec<String> {
    m.lines
        .iter()
        .map(|l| {
            format!(
                "{}{}{}{}",
                l.path,
                if l.is_context { '-' } else { ':' },
                l.line,
                l.text
            )
        })
        .collect()
}

#[test]
fn content_mode_is_sorted_by_path_with_line_numbers() {
    let dir = tree(&[
        ("b.rs", "fn b() {}\nlet x = 1;\n"),
        ("a.rs", "let y = 2;\nfn a() {}\n"),
        ("c.txt", "nothing\n"),
    ]);
    let m = run(dir.path(), json!({"pattern": "fn \\w+"}));
    assert_eq!(shown(&m), ["a.rs:2fn a() {}", "b.rs:1fn b() {}"]);
    assert_eq!((m.total_matches, m.truncated), (2, false));
}

#[test]
fn glob_filter_case_flag_and_binary_files() {
    let dir = tree(&[
        ("src/x.rs", "Hello\n"),
        ("src/deep/y.rs", "hello\n"),
        ("x.txt", "hello\n"),
        ("blob.bin", "hello\0binary\n"),
    ]);
    let names = |m: &Matches| m.files.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    let m = run(
        dir.path(),
        json!({"pattern": "hello", "output_mode": "files"}),
    );
    assert_eq!(names(&m), ["src/deep/y.rs", "x.txt"]);
    let m = run(
        dir.path(),
        json!({"pattern": "hello", "case_insensitive": true, "glob": "*.rs", "output_mode": "files"}),
    );
    assert_eq!(names(&m), ["src/deep/y.rs", "src/x.rs"]);
    let m = run(
        dir.path(),
        json!({"pattern": "hello", "-i": "true", "glob": "src/*.rs", "output_mode": "files"}),
    );
    assert_eq!(names(&m), ["src/x.rs"]);
}

#[test]
fn context_lines_and_counts() {
    let dir = tree(&[("f.txt", "1\n2\nhit\n4\n5\n6\n7\nhit\n9\n")]);
    let m = run(dir.path(), json!({"pattern": "hit", "context": 1}));
    assert_eq!(
        shown(&m),
        [
            "f.txt-22",
            "f.txt:3hit",
            "f.txt-44",
            "f.txt-77",
            "f.txt:8hit",
            "f.txt-99"
        ]
    );
    let m = run(
        dir.path(),
        json!({"pattern": "hit", "output_mode": "count"}),
    );
    assert_eq!(m.files, vec![("f.txt".to_string(), 2)]);
}

#[test]
fn the_limit_cuts_with_a_marker_and_counts_everything() {
    let content: String = (0..50).map(|i| format!("match {i}\n")).collect();
    let dir = tree(&[("a.txt", &content), ("b.txt", &content)]);
    let m = run(
        dir.path(),
        json!({"pattern": "match", "limit": "60", "context": 2}),
    );
    let matches = m.lines.iter().filter(|l| !l.is_context).count();
    assert_eq!((matches, m.total_matches, m.truncated), (60, 100, true));
    assert_eq!(m.lines.last().unwrap().text, "match 9");
    let m = run(dir.path(), json!({"pattern": "match"}));
    assert_eq!((m.lines.len(), m.truncated), (100, false));
}

#[test]
fn long_lines_are_cut() {
    let long = format!("needle {}\n", "x".repeat(5000));
    let dir = tree(&[("min.js", &long)]);
    let m = run(dir.path(), json!({"pattern": "needle"}));
    assert!(m.lines[0].text.ends_with(" [line cut]"));
    assert!(m.lines[0].text.chars().count() < 600);
}

#[test]
fn a_single_file_can_be_searched() {
    let dir = tree(&[("one.rs", "a\nb\n"), ("two.rs", "a\n")]);
    let m = run(
        &dir.path().join("one.rs"),
        json!({"pattern": "a", "glob": "*.rs"}),
    );
    assert_eq!(m.lines.len(), 1);
    assert_eq!(m.lines[0].line, 1);
}

#[test]
fn bad_arguments_are_correctable_errors() {
    let err = |v: serde_json::Value| {
        query(&parse_args::<GrepArgs>(&v).unwrap())
            .err()
            .unwrap()
            .to_string()
    };
    assert!(err(json!({"pattern": "fn("})).contains("Escape special characters"));
    assert!(err(json!({"pattern": "x", "output_mode": "lines"})).contains("not one of"));
    assert!(err(json!({"pattern": ""})).contains("must not be empty"));
    assert!(err(json!({"pattern": "x", "glob": "[a"})).contains("bad glob"));
}
