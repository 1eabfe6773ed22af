//! The layers of the crate, checked: every `crate::…` path in `src/` is read and an import
//! from a layer above fails the test (docs/architecture.md draws the layers). Codex gets this
//! from separate crates; cairn gets it from this file. Test code (`tests.rs`, `*_tests.rs`,
//! `tests/` folders, `#[cfg(test)] mod tests`) may reach anything and is not read.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use crate::support::source_graph::{Graph, cycles, graph_of, is_test_file, rust_files};

/// The layer of each top-level module; a module imports only from its own layer or below.
const LAYERS: &[(&str, u8)] = &[
    // 0: the vocabulary everything shares; imports nothing of cairn but each other.
    ("bus", 0),
    ("tool_output", 0),
    ("sync", 0),
    ("secrets", 0),
    ("secret_stores", 0),
    ("models", 0),
    ("content", 0),
    ("visible", 0),
    ("dirs", 0),
    // 1: the services the agent drives.
    ("process", 1),
    ("fs", 1),
    ("tools", 1),
    ("llm", 1),
    ("permissions", 1),
    ("session_log", 1),
    ("checkpoint", 1),
    ("config", 1),
    ("finder", 1),
    ("paste", 1),
    ("web", 1),
    ("net", 1),
    ("skills", 1),
    ("time_travel", 1),
    ("trust", 1),
    ("hooks", 1),
    ("mcp", 1),
    ("lsp", 1),
    // 2: the loop.
    ("agent", 2),
    // 3: the front ends and the wiring (the binary, subcommands, test doubles).
    ("tui", 3),
    ("exec", 3),
    ("acp", 3),
    ("launch", 3),
    ("cli", 3),
    ("subcommands", 3),
    ("policy_cmd", 3),
    ("testing", 3),
    ("main", 3),
    ("bin", 3),
];

/// Imports forbidden even though the layers would allow them: (importer, path prefix,
/// allowed exception prefix, why).
const FORBIDDEN: &[(&str, &str, &str, &str)] = &[
    (
        "bus",
        "crate::",
        "crate::tool_output",
        "the bus is a leaf: only tool-output types",
    ),
    (
        "tool_output",
        "crate::",
        "crate::tool_output",
        "tool-output types import nothing",
    ),
    (
        "dirs",
        "crate::",
        "",
        "cairn's directories are a leaf: they import nothing of cairn",
    ),
    (
        "llm",
        "crate::tools",
        "",
        "the client does not depend on tools (ToolSpec is a wire type)",
    ),
    (
        "llm",
        "crate::permissions",
        "",
        "the client knows nothing of the gate",
    ),
    (
        "process",
        "crate::tools",
        "",
        "the process service runs programs for tools, hooks and servers, and knows none of them",
    ),
    (
        "process",
        "crate::permissions",
        "",
        "the process service runs what it is given: the gate decided before",
    ),
    (
        "tools",
        "crate::permissions",
        "",
        "tools do not import the permission gate",
    ),
    (
        "tools",
        "crate::llm",
        "crate::llm::wire",
        "tools know the wire types, not the client",
    ),
    (
        "tui",
        "crate::tools",
        "",
        "the TUI runs no tool (the editor it starts is reaped through process)",
    ),
    (
        "tui",
        "crate::llm",
        "",
        "the TUI does not reach the network",
    ),
    (
        "tui",
        "crate::agent",
        "",
        "the TUI talks to the agent over the bus",
    ),
    (
        "tui",
        "crate::net",
        "",
        "the TUI does not reach the network",
    ),
    ("exec", "crate::net", "", "exec does not reach the network"),
    ("exec", "crate::tools", "", "exec runs no tool"),
    ("exec", "crate::llm", "", "exec does not reach the network"),
    (
        "exec",
        "crate::agent",
        "",
        "exec talks to the agent over the bus",
    ),
    ("acp", "crate::net", "", "acp does not reach the network"),
    ("acp", "crate::tools", "", "acp runs no tool"),
    ("acp", "crate::llm", "", "acp does not reach the network"),
    (
        "acp",
        "crate::agent",
        "",
        "acp talks to the agent over the bus",
    ),
];

fn layer(module: &str) -> Option<u8> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
}

/// The top-level module a file of `src/` belongs to.
fn module_of(relative: &Path) -> String {
    let first = relative
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

/// Every `crate::a::b` path in the code of `text` (comments and test modules left out),
/// with `use crate::{a, b::c}` groups expanded to `crate::a`, `crate::b::c`.
pub fn crate_paths(text: &str) -> Vec<String> {
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                for item in group.split([',', '}']) {
                    let item = item.trim();
                    if item.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                        out.push(format!("crate::{}", path_part(item)));
                    }
                }
            } else {
                out.push(format!("crate::{}", path_part(after)));
            }
            rest = after;
        }
    }
    out
}

fn path_part(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    text[..end].trim_end_matches(':')
}

/// The broken rules of one file of module `module`.
pub fn violations(module: &str, file: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Some(own) = layer(module) else {
        return vec![format!("{file}: module `{module}` has no layer in LAYERS")];
    };
    for path in crate_paths(text) {
        let target = path
            .trim_start_matches("crate::")
            .split("::")
            .next()
            .unwrap_or("");
        if target.is_empty() || target == module {
            continue;
        }
        match layer(target) {
            Some(theirs) if theirs > own => out.push(format!(
                "{file}: `{path}` imports layer {theirs} ({target}) from layer {own} ({module})"
            )),
            None => out.push(format!("{file}: `{path}`: module `{target}` has no layer")),
            _ => {}
        }
        for (importer, prefix, except, why) in FORBIDDEN {
            let below = |p: &str| path == p || path.starts_with(&format!("{p}::"));
            let matches_prefix = if prefix.ends_with("::") {
                path.starts_with(prefix)
            } else {
                below(prefix)
            };
            if *importer == module && matches_prefix && (except.is_empty() || !below(except)) {
                out.push(format!("{file}: `{path}`: {why}"));
            }
        }
    }
    out
}

#[test]
fn no_layer_imports_one_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut broken = Vec::new();
    for path in &files {
        let relative = path.strip_prefix(&src).unwrap();
        if relative == Path::new("lib.rs") || is_test_file(relative) {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        broken.extend(violations(
            &module_of(relative),
            &relative.display().to_string(),
            &text,
        ));
    }
    assert!(files.len() > 50, "found only {} files", files.len());
    assert!(
        broken.is_empty(),
        "layer rules broken:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_checker_fails_on_a_forbidden_import() {
    // The bus reaching up into permissions, the old circle.
    let bus = "use std::fmt;\nuse crate::permissions::Mode;\n";
    assert_eq!(
        violations("bus", "bus.rs", bus).len(),
        2,
        "{:?}",
        violations("bus", "bus.rs", bus)
    );
    // A grouped import of the agent from the tools layer.
    let tool = "use crate::{bus::CallId, agent::Agent};\n";
    let found = violations("tools", "tools/x.rs", tool);
    assert!(
        found.len() == 1 && found[0].contains("crate::agent::Agent"),
        "{found:?}"
    );
    // A path written inline, not in a `use`.
    let tui = "fn f() { let m = crate::llm::client::HttpModel::new(); }\n";
    assert!(!violations("tui", "tui/x.rs", tui).is_empty());
    // The client importing tools, and tools importing the gate, though both are layer 1.
    assert!(!violations("llm", "llm/x.rs", "use crate::tools::ToolSpec;\n").is_empty());
    assert!(
        !violations(
            "tools",
            "tools/x.rs",
            "use crate::permissions::policy::PolicyGate;\n"
        )
        .is_empty()
    );
    // What is allowed passes: a lower layer, the documented exceptions, comments, test code.
    let fine = "use crate::bus::{AgentEvent, Mode};\nuse crate::tool_output::FileChange;\n\
        // crate::agent in a comment\nuse crate::process::reaper;\n\
        #[cfg(test)]\nmod tests {\n    use crate::agent::Agent;\n}\n";
    assert_eq!(violations("tui", "tui/x.rs", fine), Vec::<String>::new());
    assert_eq!(
        violations("tools", "tools/x.rs", "use crate::llm::wire::ToolSpec;\n"),
        Vec::<String>::new()
    );
    assert_eq!(
        violations("bus", "bus.rs", "use crate::tool_output::ToolOutput;\n"),
        Vec::<String>::new()
    );
    // cairn's directories import nothing of cairn, not even the layer-0 vocabulary.
    assert!(!violations("dirs", "dirs.rs", "use crate::bus::Mode;\n").is_empty());
    // The process service runs what it is given: it knows no tool and no gate.
    assert!(!violations("process", "process/x.rs", "use crate::tools::ToolEnv;\n").is_empty());
    assert!(
        !violations(
            "process",
            "process/x.rs",
            "use crate::permissions::Answer;\n"
        )
        .is_empty()
    );
    // The TUI reaps the editor it starts through the process service, never through tools.
    assert!(!violations("tui", "tui/x.rs", "use crate::tools::ToolEnv;\n").is_empty());
}

// The finer rules (issue 17): no cycle between top-level modules, the services of layer 1 in
// an order (each imports only earlier ones), and the TUI not importing the permission gate.
// They are checked on a graph of module → imported modules, so the checker can be tested on a
// made-up graph, and asserted on the crate.

use std::collections::BTreeSet;

/// The services of layer 1, lowest first: each may import only the ones before it.
const SERVICE_ORDER: &[&str] = &[
    "process",
    "trust",
    "net",
    "web",
    "llm",
    "config",
    "finder",
    "paste",
    "fs",
    "checkpoint",
    "session_log",
    "skills",
    "lsp",
    "tools",
    "mcp",
    "hooks",
    "permissions",
    "time_travel",
];

/// Imports forbidden by the finer rules whatever the layers say: (importer, imported, why).
const FINER_FORBIDDEN: &[(&str, &str, &str)] = &[(
    "tui",
    "permissions",
    "the TUI classifies nothing: the approval event carries the dangers",
)];

/// The import graph of `src/` (lib.rs and test code left out).
fn crate_graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph = Graph::new();
    for path in &files {
        let relative = path.strip_prefix(&src).unwrap();
        if relative == Path::new("lib.rs") || is_test_file(relative) {
            continue;
        }
        let module = module_of(relative);
        let text = std::fs::read_to_string(path).unwrap();
        let imports = graph.entry(module.clone()).or_default();
        for path in crate_paths(&text) {
            let target = path
                .trim_start_matches("crate::")
                .split("::")
                .next()
                .unwrap_or("");
            if !target.is_empty() && target != module && layer(target).is_some() {
                imports.insert(target.to_string());
            }
        }
    }
    graph
}

/// What the finer rules find in `graph`, one line each.
fn finer_violations(graph: &Graph) -> Vec<String> {
    let mut out: Vec<String> = cycles(graph)
        .into_iter()
        .map(|circle| format!("cycle: {}", circle.join(" ↔ ")))
        .collect();
    let rank = |m: &str| SERVICE_ORDER.iter().position(|s| *s == m);
    for (from, imports) in graph {
        for to in imports {
            if let (Some(own), Some(theirs)) = (rank(from), rank(to))
                && theirs > own
            {
                out.push(format!(
                    "service order: {from} imports {to}, a later service of layer 1"
                ));
            }
            for (importer, imported, why) in FINER_FORBIDDEN {
                if from == importer && to == imported {
                    out.push(format!("{from} imports {to}: {why}"));
                }
            }
        }
    }
    out
}

#[test]
fn the_finer_checker_catches_cycles_later_services_and_the_tui_asking_the_gate() {
    // A circle of three made-up modules, and one of two inside a larger graph.
    let circle = graph_of(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]);
    assert_eq!(cycles(&circle), vec![vec!["a", "b", "c"]]);
    let two = graph_of(&[("session_log", "checkpoint"), ("checkpoint", "session_log")]);
    let found = finer_violations(&two);
    assert!(
        found.iter().any(|f| f == "cycle: checkpoint ↔ session_log"),
        "{found:?}"
    );
    // A service importing a later service of layer 1 (no cycle needed).
    let later = graph_of(&[("net", "tools")]);
    let found = finer_violations(&later);
    assert!(
        found.len() == 1 && found[0].contains("net imports tools, a later service"),
        "{found:?}"
    );
    // The TUI importing the permission gate, though the layers allow it.
    let tui = graph_of(&[("tui", "permissions"), ("tui", "bus")]);
    let found = finer_violations(&tui);
    assert!(
        found.len() == 1 && found[0].starts_with("tui imports permissions"),
        "{found:?}"
    );
    // What is fine passes: a tree, and a service importing an earlier one.
    let fine = graph_of(&[("tools", "net"), ("agent", "tools"), ("tui", "bus")]);
    assert_eq!(finer_violations(&fine), Vec::<String>::new());
    // The real crate reads as a graph with every layered module in it.
    let graph = crate_graph();
    assert!(graph.len() > 20, "{graph:?}");
}

/// The finer rules on the crate: no cycle between top-level modules, no service importing a
/// later service of layer 1, no TUI asking the gate. A failure names the imports to cut.
#[test]
fn the_crate_keeps_the_finer_rules() {
    let graph = crate_graph();
    let mut found = finer_violations(&graph);
    // The arrows inside each circle: which imports to cut.
    for circle in cycles(&graph) {
        for from in &circle {
            for to in graph[from].iter().filter(|to| circle.contains(to)) {
                found.push(format!("  in the cycle: {from} → {to}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "finer architecture rules broken:\n{}",
        found.join("\n")
    );
}

/// A new service of layer 1 gets a place in `SERVICE_ORDER`, or the order would not judge it.
#[test]
fn every_service_has_one_place_in_the_order() {
    let services: BTreeSet<&str> = LAYERS
        .iter()
        .filter(|(_, layer)| *layer == 1)
        .map(|(module, _)| *module)
        .collect();
    let ordered: BTreeSet<&str> = SERVICE_ORDER.iter().copied().collect();
    assert_eq!(
        ordered.len(),
        SERVICE_ORDER.len(),
        "a service is listed twice"
    );
    assert_eq!(
        services, ordered,
        "LAYERS' layer 1 and SERVICE_ORDER differ"
    );
}
