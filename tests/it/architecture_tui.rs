//! No cycles between the TUI's files: a file of `src/tui/` may use the files below it, never
//! one that (through others) uses it back. A leaf like `modal.rs` or `figures.rs` is what the
//! rest shares; a loop makes every file in it depend on every other. The graph is read from
//! the paths the code names (`crate::tui::…`, `super::…`, `self::…`, a `mod.rs`'s own child
//! modules), test code left out; a path to an item of a directory module is an edge to its
//! `mod.rs`.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::source_graph::{Graph, cycles, graph_of, is_test_file, rust_files};

/// Where a file sits among the TUI's modules: its module path below `tui` and the directory of
/// its child modules, if it has any.
struct Place {
    /// `[]` for `tui/mod.rs`, `["app"]` for `tui/app.rs`, `["transcript"]` for
    /// `transcript/mod.rs`, `["transcript", "entry"]` for `transcript/entry.rs`.
    module: Vec<String>,
    is_dir_module: bool,
}

fn place_of(relative: &Path) -> Place {
    let mut module: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let file = module.pop().unwrap_or_default();
    let is_dir_module = file == "mod.rs";
    if !is_dir_module {
        module.push(file.trim_end_matches(".rs").to_string());
    }
    Place {
        module,
        is_dir_module,
    }
}

/// The code of a file: its test module and its comment lines left out.
fn code_of(text: &str) -> String {
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    code.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Reads a use tree at the start of `text` (`a::b`, `a::{b, c::{d, e}}`, `a::*`) and returns
/// every path it names, as segments.
fn use_tree(text: &str) -> Vec<Vec<String>> {
    fn tree(text: &str, at: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let bytes = text.as_bytes();
        let skip_space = |at: &mut usize| {
            while *at < bytes.len() && (bytes[*at] as char).is_whitespace() {
                *at += 1;
            }
        };
        let mut path = prefix.to_vec();
        loop {
            skip_space(at);
            if *at < bytes.len() && bytes[*at] == b'{' {
                *at += 1;
                loop {
                    skip_space(at);
                    if *at >= bytes.len() {
                        return;
                    }
                    if bytes[*at] == b'}' {
                        *at += 1;
                        break;
                    }
                    if bytes[*at] == b',' {
                        *at += 1;
                        continue;
                    }
                    let before = *at;
                    tree(text, at, &path, out);
                    if *at == before {
                        // Not a path (`*`, `self as x`): step over it.
                        *at += 1;
                    }
                }
                return;
            }
            let start = *at;
            while *at < bytes.len() && is_ident(bytes[*at] as char) {
                *at += 1;
            }
            if *at == start {
                break;
            }
            path.push(text[start..*at].to_string());
            if text[*at..].starts_with("::") {
                *at += 2;
            } else {
                break;
            }
        }
        if path.len() > prefix.len() {
            out.push(path);
        }
    }
    let mut out = Vec::new();
    tree(text, &mut 0, &[], &mut out);
    out
}

/// The files of `src/tui/` that `code`, the code of the file at `place`, names. `exists` says
/// whether a path relative to `src/tui/` is a file or directory.
fn uses(place: &Place, code: &str, exists: &dyn Fn(&str) -> bool) -> BTreeSet<String> {
    let children: BTreeSet<String> = if place.is_dir_module {
        let dir = place.module.join("/");
        code.lines()
            .filter_map(|line| {
                let line = line.trim_start();
                let line = line.strip_prefix("pub ").unwrap_or(line);
                let line = line.strip_prefix("pub(crate) ").unwrap_or(line);
                let name = line.strip_prefix("mod ")?.strip_suffix(';')?;
                let file = if dir.is_empty() {
                    name.to_string()
                } else {
                    format!("{dir}/{name}")
                };
                (exists(&format!("{file}.rs")) || exists(&format!("{file}/mod.rs")))
                    .then(|| name.to_string())
            })
            .collect()
    } else {
        BTreeSet::new()
    };
    let parent = || place.module[..place.module.len().saturating_sub(1)].to_vec();
    let mut out = BTreeSet::new();
    for (at, _) in code.char_indices() {
        if code[..at].chars().next_back().is_some_and(is_ident) || code[..at].ends_with("::") {
            continue;
        }
        let rest = &code[at..];
        let (base, tail) = if let Some(tail) = rest.strip_prefix("crate::tui::") {
            (Vec::new(), tail)
        } else if let Some(tail) = rest.strip_prefix("super::") {
            (parent(), tail)
        } else if let Some(tail) = rest.strip_prefix("self::") {
            if !place.is_dir_module {
                // A file's own items (or its inline modules).
                continue;
            }
            (place.module.clone(), tail)
        } else if children
            .iter()
            .any(|child| rest.starts_with(&format!("{child}::")))
        {
            (place.module.clone(), rest)
        } else {
            continue;
        };
        for path in use_tree(tail) {
            if let Some(file) = resolve(&base, &path, exists) {
                out.insert(file);
            }
        }
    }
    let own = if place.is_dir_module {
        own_dir_file(&place.module)
    } else {
        format!("{}.rs", place.module.join("/"))
    };
    out.remove(&own);
    out
}

fn own_dir_file(module: &[String]) -> String {
    if module.is_empty() {
        "mod.rs".to_string()
    } else {
        format!("{}/mod.rs", module.join("/"))
    }
}

/// The file a path names, walking down from module `base`: the first segment that is a file
/// ends the walk; a name that is neither a file nor a directory is an item of the directory
/// module reached so far.
fn resolve(base: &[String], path: &[String], exists: &dyn Fn(&str) -> bool) -> Option<String> {
    let mut module = base.to_vec();
    for segment in path {
        match segment.as_str() {
            "super" => {
                module.pop()?;
                continue;
            }
            "self" => continue,
            _ => {}
        }
        let mut candidate = module.clone();
        candidate.push(segment.clone());
        let stem = candidate.join("/");
        if exists(&format!("{stem}.rs")) {
            return Some(format!("{stem}.rs"));
        }
        if exists(&format!("{stem}/mod.rs")) {
            module = candidate;
            continue;
        }
        break;
    }
    Some(own_dir_file(&module))
}

/// The file graph of `src/tui/` (test files and test modules left out).
fn tui_graph() -> Graph {
    let tui = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tui");
    let mut files = Vec::new();
    rust_files(&tui, &mut files);
    let exists = |relative: &str| tui.join(relative).is_file();
    let mut graph = Graph::new();
    for path in &files {
        let relative = path.strip_prefix(&tui).unwrap();
        if is_test_file(relative) {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(path).unwrap());
        let name = relative.to_string_lossy().into_owned();
        let used = uses(&place_of(relative), &code, &exists);
        graph.entry(name).or_default().extend(used);
    }
    graph
}

/// One line per cycle, with the arrows inside it (what to cut).
fn report(graph: &Graph) -> Vec<String> {
    cycles(graph)
        .into_iter()
        .map(|circle| {
            let inside: BTreeSet<&String> = circle.iter().collect();
            let arrows: Vec<String> = circle
                .iter()
                .flat_map(|from| {
                    graph[from]
                        .iter()
                        .filter(|to| inside.contains(to))
                        .map(move |to| format!("{from} → {to}"))
                })
                .collect();
            format!(
                "cycle: {} (arrows: {})",
                circle.join(" ↔ "),
                arrows.join(", ")
            )
        })
        .collect()
}

#[test]
fn the_checker_catches_a_cycle_between_files_and_lets_a_tree_through() {
    // Nine files in a loop through the one that holds the shared frame, and a pair.
    let looped = graph_of(&[
        ("layers.rs", "picker.rs"),
        ("picker.rs", "layers.rs"),
        ("cost.rs", "status.rs"),
        ("status.rs", "cost.rs"),
        ("app.rs", "layers.rs"),
    ]);
    let found = report(&looped);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found[0].starts_with("cycle: cost.rs ↔ status.rs"),
        "{found:#?}"
    );
    assert!(found[1].contains("layers.rs ↔ picker.rs"), "{found:#?}");
    assert!(
        !found[1].contains("app.rs"),
        "app.rs only uses the loop: {found:#?}"
    );
    // The frame moved to a leaf: a tree, nothing to report.
    let tree = graph_of(&[
        ("layers.rs", "picker.rs"),
        ("picker.rs", "modal.rs"),
        ("layers.rs", "modal.rs"),
        ("app.rs", "layers.rs"),
    ]);
    assert!(report(&tree).is_empty());
}

#[test]
fn the_reader_finds_the_files_a_file_names() {
    let files = [
        "mod.rs",
        "app.rs",
        "modal.rs",
        "layers.rs",
        "keymap.rs",
        "transcript/mod.rs",
        "transcript/entry.rs",
    ];
    let exists = |relative: &str| files.contains(&relative);
    let app = place_of(Path::new("app.rs"));
    let code = "use super::TuiOptions;\nuse crate::tui::{\n    layers::{Layer, Layers},\n    modal,\n};\nfn f() { crate::tui::transcript::entry::Entry::new(); self::g(); }\n";
    let found: Vec<String> = uses(&app, code, &exists).into_iter().collect();
    assert_eq!(
        found,
        ["layers.rs", "mod.rs", "modal.rs", "transcript/entry.rs"]
    );
    let entry = place_of(Path::new("transcript/entry.rs"));
    let found: Vec<String> = uses(
        &entry,
        "use super::Transcript;\nuse super::super::keymap::Key;",
        &exists,
    )
    .into_iter()
    .collect();
    assert_eq!(found, ["keymap.rs", "transcript/mod.rs"]);
    let root = place_of(Path::new("mod.rs"));
    let code = "pub mod app;\nmod keymap;\nuse self::app::App;\nfn f(k: keymap::Key) {}\n";
    let found: Vec<String> = uses(&root, code, &exists).into_iter().collect();
    assert_eq!(found, ["app.rs", "keymap.rs"]);
}

#[test]
fn no_cycle_between_the_tuis_files() {
    let found = report(&tui_graph());
    assert!(
        found.is_empty(),
        "files of src/tui/ that use each other in a loop (move what they share to a leaf):\n{}",
        found.join("\n")
    );
}
