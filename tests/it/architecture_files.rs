//! No circle between the files of any folder of `src/`: a file may use the files below it,
//! never one that (through others) uses it back. A leaf is what the rest of a folder shares; a
//! loop makes every file in it depend on every other. The graph of each top-level module's
//! files (its folder and the file that declares it) is read from the paths the code names
//! (`crate::room::…`, `super::…`, `self::…`, a module's own child modules), test code left
//! out; a path to an item of a module with children is an edge to the file that declares
//! them, but not from below (what a module's root declares, its children share). Beside it, the names of the files: no `#[path]` module whose file differs from its
//! module but the test convention (`#[path = "x_tests.rs"] mod tests;`), and no `tests.rs`
//! (a folder's tests are `*_tests.rs`; `tui/tests/` stays a folder of tests).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::source_graph::{Graph, cycles, graph_of, is_test_file, rust_files};

/// Where a file sits among the crate's modules: its module path below `crate` and whether it
/// declares child modules in a folder of its own (`mod.rs`, or `x.rs` beside `x/`).
struct Place {
    /// `["tui"]` for `tui/mod.rs`, `["tui", "app"]` for `tui/app.rs`, `["bus"]` for `bus.rs`.
    module: Vec<String>,
    is_dir_module: bool,
}

/// `exists` says whether a path relative to `src/` is a file or directory.
fn place_of(relative: &Path, exists: &dyn Fn(&str) -> bool) -> Place {
    let mut module: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let file = module.pop().unwrap_or_default();
    if file == "mod.rs" {
        return Place {
            module,
            is_dir_module: true,
        };
    }
    module.push(file.trim_end_matches(".rs").to_string());
    let is_dir_module = exists(&module.join("/"));
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

/// The files of `src/` that `code`, the code of the file at `place`, names.
fn uses(place: &Place, code: &str, exists: &dyn Fn(&str) -> bool) -> BTreeSet<String> {
    let children: BTreeSet<String> = if place.is_dir_module {
        let dir = place.module.join("/");
        code.lines()
            .filter_map(|line| {
                let line = line.trim_start();
                let line = line.strip_prefix("pub ").unwrap_or(line);
                let line = line.strip_prefix("pub(crate) ").unwrap_or(line);
                let line = line.strip_prefix("pub(super) ").unwrap_or(line);
                let name = line.strip_prefix("mod ")?.strip_suffix(';')?;
                let file = format!("{dir}/{name}");
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
        let (base, tail) = if let Some(tail) = rest.strip_prefix("crate::") {
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
    if let Some(own) = module_file(&place.module, exists) {
        out.remove(&own);
    }
    out
}

/// The file that declares `module`: `x.rs`, else `x/mod.rs`.
fn module_file(module: &[String], exists: &dyn Fn(&str) -> bool) -> Option<String> {
    let stem = module.join("/");
    if stem.is_empty() {
        return None;
    }
    [format!("{stem}.rs"), format!("{stem}/mod.rs")]
        .into_iter()
        .find(|file| exists(file))
}

/// The file a path names, walking down from module `base`: a segment that is a file without
/// children ends the walk; a name that is neither a file nor a directory is an item of the
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
        if exists(&format!("{stem}/mod.rs")) || exists(&stem) && exists(&format!("{stem}.rs")) {
            module = candidate;
            continue;
        }
        if exists(&format!("{stem}.rs")) {
            return Some(format!("{stem}.rs"));
        }
        break;
    }
    module_file(&module, exists)
}

/// The top-level module a file of `src/` belongs to (`tui` for `tui/app.rs` and `tui.rs`).
fn room_of(file: &str) -> &str {
    let first = file.split('/').next().unwrap_or(file);
    first.strip_suffix(".rs").unwrap_or(first)
}

/// The files that declare the modules above `file` (`agent/mod.rs` for `agent/calls.rs`;
/// `llm/client.rs` and `llm/mod.rs` for `llm/client/read.rs`). A file's use of what its
/// parents declare is not an edge: a module's root holds the vocabulary its children share,
/// and it names its children; a circle is between files of one level.
fn ancestor_roots(file: &str, exists: &dyn Fn(&str) -> bool) -> BTreeSet<String> {
    let mut dirs: Vec<String> = file.split('/').map(str::to_string).collect();
    dirs.pop();
    (1..=dirs.len())
        .filter_map(|len| module_file(&dirs[..len], exists))
        .filter(|root| root != file)
        .collect()
}

/// The file graph of `src/` within each top-level module (test files and test modules left
/// out; an edge between two modules is the module checker's business).
fn file_graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let exists = |relative: &str| src.join(relative).exists();
    let mut graph = Graph::new();
    for path in &files {
        let relative = path.strip_prefix(&src).unwrap();
        if is_test_file(relative) || relative.starts_with("bin") {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(path).unwrap());
        let name = relative.to_string_lossy().into_owned();
        let room = room_of(&name).to_string();
        let above = ancestor_roots(&name, &exists);
        let used = uses(&place_of(relative, &exists), &code, &exists)
            .into_iter()
            .filter(|file| room_of(file) == room && !above.contains(file));
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
        "tui/mod.rs",
        "tui/app.rs",
        "tui/modal.rs",
        "tui/layers.rs",
        "tui/keymap.rs",
        "tui/transcript/mod.rs",
        "tui/transcript/entry.rs",
        "llm/mod.rs",
        "llm/client.rs",
        "llm/client/read.rs",
    ];
    let dirs = ["tui", "tui/transcript", "llm", "llm/client"];
    let exists = |relative: &str| files.contains(&relative) || dirs.contains(&relative);
    let app = place_of(Path::new("tui/app.rs"), &exists);
    let code = "use super::TuiOptions;\nuse crate::tui::{\n    layers::{Layer, Layers},\n    modal,\n};\nfn f() { crate::tui::transcript::entry::Entry::new(); self::g(); }\n";
    let found: Vec<String> = uses(&app, code, &exists).into_iter().collect();
    assert_eq!(
        found,
        [
            "tui/layers.rs",
            "tui/mod.rs",
            "tui/modal.rs",
            "tui/transcript/entry.rs"
        ]
    );
    let entry = place_of(Path::new("tui/transcript/entry.rs"), &exists);
    let found: Vec<String> = uses(
        &entry,
        "use super::Transcript;\nuse super::super::keymap::Key;",
        &exists,
    )
    .into_iter()
    .collect();
    assert_eq!(found, ["tui/keymap.rs", "tui/transcript/mod.rs"]);
    let root = place_of(Path::new("tui/mod.rs"), &exists);
    let code = "pub mod app;\nmod keymap;\nuse self::app::App;\nfn f(k: keymap::Key) {}\n";
    let found: Vec<String> = uses(&root, code, &exists).into_iter().collect();
    assert_eq!(found, ["tui/app.rs", "tui/keymap.rs"]);
    // A file beside the folder of its children (`client.rs` and `client/`): its children are
    // its folder's files, its own items are the file itself, and a child's `super::` is it.
    let client = place_of(Path::new("llm/client.rs"), &exists);
    assert!(client.is_dir_module);
    let found: Vec<String> = uses(&client, "mod read;\nfn f() { read::go(); }\n", &exists)
        .into_iter()
        .collect();
    assert_eq!(found, ["llm/client/read.rs"]);
    let read = place_of(Path::new("llm/client/read.rs"), &exists);
    let found: Vec<String> = uses(&read, "use super::Client;\nuse crate::llm::Api;\n", &exists)
        .into_iter()
        .collect();
    assert_eq!(found, ["llm/client.rs", "llm/mod.rs"]);
}

/// What is wrong with the names of a file of `src/` (`relative`, its `text`): a `#[path]`
/// module other than a test module (`#[path = "x_tests.rs"] mod tests;`, or `mod y_tests`), or a file named `tests.rs` that is
/// not the root of a `tests/` folder. `exists` says whether a path relative to `src/` exists.
fn misnamed(relative: &str, text: &str, exists: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(target) = line
            .strip_prefix("#[path = \"")
            .and_then(|rest| rest.strip_suffix("\"]"))
        else {
            continue;
        };
        let module = lines[i + 1..]
            .iter()
            .find(|l| !l.starts_with("#[") && !l.is_empty())
            .map(|l| {
                ["pub(crate) ", "pub(super) ", "pub "]
                    .iter()
                    .fold(*l, |l, vis| l.strip_prefix(vis).unwrap_or(l))
            })
            .and_then(|l| l.strip_prefix("mod "))
            .and_then(|l| l.strip_suffix(';'))
            .unwrap_or("");
        let a_test = module == "tests" || module.ends_with("_tests");
        if !(target.ends_with("_tests.rs") && a_test) {
            found.push(format!(
                "{relative}: #[path = \"{target}\"] mod {module}: a module's file is named after \
                 it (only `#[path = \"x_tests.rs\"] mod tests;` may differ)"
            ));
        }
    }
    let folder = relative.strip_suffix(".rs").unwrap_or(relative);
    if (relative == "tests.rs" || relative.ends_with("/tests.rs")) && !exists(folder) {
        found.push(format!(
            "{relative}: a module's tests are `x_tests.rs` (`#[path = \"x_tests.rs\"] mod tests;`)"
        ));
    }
    found
}

#[test]
fn the_name_checker_catches_a_path_module_and_a_tests_file() {
    let none = |_: &str| false;
    assert!(
        misnamed(
            "a/b.rs",
            "#[cfg(test)]\n#[path = \"b_tests.rs\"]\nmod tests;\n",
            &none
        )
        .is_empty()
    );
    assert_eq!(
        misnamed("a/b.rs", "#[path = \"b_view.rs\"]\nmod view;\n", &none).len(),
        1
    );
    assert_eq!(
        misnamed("a/b.rs", "#[path = \"x_tests.rs\"]\nmod helpers;\n", &none).len(),
        1
    );
    assert_eq!(misnamed("a/tests.rs", "", &none).len(), 1);
    // The root of a folder of tests may stay.
    assert!(misnamed("tui/tests.rs", "mod keys;\n", &|p| p == "tui/tests").is_empty());
}

#[test]
fn every_module_file_is_named_after_its_module() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let exists = |relative: &str| src.join(relative).exists();
    let found: Vec<String> = files
        .iter()
        .flat_map(|path| {
            let relative = path
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            misnamed(&relative, &std::fs::read_to_string(path).unwrap(), &exists)
        })
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn no_circle_between_the_files_of_any_folder() {
    let found = report(&file_graph());
    assert!(
        found.is_empty(),
        "files of one module of src/ that use each other in a loop (move what they share to a \
         leaf):\n{}",
        found.join("\n")
    );
}
