//! Shell-grammar classification of `bash` commands: tree-sitter-bash parses the command line,
//! and every simple command in it (pipelines, lists, subshells, substitutions, `bash -c`
//! strings, wrapper payloads) is judged on its own. The policy gate and the rules feed on the
//! resulting `Analysis`; the per-command knowledge lives in `commands.rs`.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tree_sitter::{Node, Parser, Tree};

pub(crate) use crate::permissions::locations::is_harmless_device;
pub(crate) use crate::permissions::words::{Word, word};

/// How much a command can do, in increasing order of concern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Only reads: runs without asking in every mode but `ask`.
    ReadOnly,
    /// May change files or state: asks in `auto-edit`, runs in `auto`.
    Mutating,
    /// Could do serious harm: asks in every mode but `never`.
    Dangerous,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::ReadOnly => "read-only",
            Class::Mutating => "mutating",
            Class::Dangerous => "dangerous",
        }
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict on a whole command line, with a reason a person can read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classification {
    pub class: Class,
    pub reason: String,
}

/// One simple command found in a command line, after unwrapping quoting, wrappers
/// (`timeout`, `env`, `xargs`, ...) and `bash -c` strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Normalized words: unquoted, the program's absolute path reduced to its name. Empty for
    /// findings that belong to no single command (parse errors, a download piped into a shell);
    /// no rule can match those.
    pub words: Vec<String>,
    pub class: Class,
    pub reason: String,
}

/// Every simple command of a command line with its own class.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Analysis {
    pub parts: Vec<Part>,
}

impl Analysis {
    /// The most concerning part decides; read-only lines name what they read.
    pub fn classification(&self) -> Classification {
        let Some(worst) = self.parts.iter().max_by_key(|p| p.class) else {
            return Classification {
                class: Class::ReadOnly,
                reason: "does nothing".into(),
            };
        };
        // `max_by_key` returns the last of equals; the first one found reads better.
        let first = self
            .parts
            .iter()
            .find(|p| p.class == worst.class)
            .unwrap_or(worst);
        if first.class != Class::ReadOnly {
            return Classification {
                class: first.class,
                reason: first.reason.clone(),
            };
        }
        if let [only] = self.parts.as_slice() {
            return Classification {
                class: Class::ReadOnly,
                reason: only.reason.clone(),
            };
        }
        let mut names: Vec<&str> = Vec::new();
        for part in &self.parts {
            let name = part
                .reason
                .strip_prefix("only reads (")
                .and_then(|r| r.strip_suffix(')'))
                .or(part.words.first().map(String::as_str));
            if let Some(name) = name.filter(|n| !names.contains(n)) {
                names.push(name);
            }
        }
        let reason = if names.is_empty() {
            "only reads".to_string()
        } else {
            format!("only reads ({})", names.join(", "))
        };
        Classification {
            class: Class::ReadOnly,
            reason,
        }
    }
}

/// Classifies a command line as it would run in `workspace`.
pub fn classify(command: &str, workspace: &Path) -> Classification {
    analyze(command, workspace).classification()
}

/// Judges every simple command of `command`, as it would run in `workspace`.
pub fn analyze(command: &str, workspace: &Path) -> Analysis {
    let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let mut walker = Walker::new(root);
    walker.source(command);
    Analysis {
        parts: walker.parts,
    }
}

/// The words of each simple command in `command`, normalized like `Part::words`, without
/// judging them. Rules use it to normalize their own prefixes.
pub fn command_words(command: &str) -> Vec<Vec<String>> {
    analyze(command, Path::new("/"))
        .parts
        .into_iter()
        .map(|p| p.words)
        .filter(|w| !w.is_empty())
        .collect()
}

thread_local! {
    // Building a parser is far more expensive than a parse; one per thread is reused.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn parse(source: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(source, None)
    })
}

/// Nested `bash -c` strings deeper than this are refused rather than followed.
const MAX_DEPTH: usize = 8;

const TOO_DEEP: &str = "nests too deeply to examine";

/// Syntax nested deeper than this (`$($($(...)))`) is refused rather than walked, so a
/// hostile command cannot exhaust the stack of the thread that classifies it.
const MAX_NESTING: usize = 150;

/// Where a command's standard input comes from, as far as it matters for interpreters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stdin {
    /// Whatever the command line itself got.
    Inherited,
    /// The output of an earlier pipeline stage; `download` when that stage fetched something.
    Pipe { download: bool },
    /// A here-document or here-string: its text is code when an interpreter reads it.
    Code(String),
    /// A file redirected with `<`.
    File,
}

/// Where a path lands relative to the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Location {
    Inside,
    Temp,
    Outside,
    /// Named at run time, or relative to a directory chosen at run time.
    Unknown,
}

pub(crate) struct Walker {
    pub root: PathBuf,
    pub home: Option<PathBuf>,
    /// The directory relative paths resolve against; `None` after `cd` to a run-time path.
    pub cwd: Option<PathBuf>,
    pub parts: Vec<Part>,
    pub depth: usize,
    pub stdin: Stdin,
    /// Functions defined earlier in the command line; their bodies were judged already.
    pub functions: Vec<String>,
    /// How deep in the syntax tree the walk is.
    nesting: usize,
    /// Files a download command wrote earlier in the command line.
    pub downloaded: Vec<String>,
}

impl Walker {
    fn new(root: PathBuf) -> Self {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        Self {
            cwd: Some(root.clone()),
            root,
            home,
            parts: Vec::new(),
            depth: 0,
            stdin: Stdin::Inherited,
            functions: Vec::new(),
            nesting: 0,
            downloaded: Vec::new(),
        }
    }

    pub fn push(&mut self, words: Vec<String>, class: Class, reason: impl Into<String>) {
        self.parts.push(Part {
            words,
            class,
            reason: reason.into(),
        });
    }

    /// Parses and walks a piece of shell source (the command line or a `bash -c` string).
    pub fn source(&mut self, source: &str) {
        if self.depth > MAX_DEPTH {
            self.push(
                Vec::new(),
                Class::Dangerous,
                "nests shell strings too deeply to examine",
            );
            return;
        }
        let Some(tree) = parse(source) else {
            self.push(Vec::new(), Class::Dangerous, "could not parse the command");
            return;
        };
        let root = tree.root_node();
        if root.has_error() {
            self.push(Vec::new(), Class::Dangerous, "could not parse the command");
        }
        self.depth += 1;
        let saved = std::mem::replace(&mut self.stdin, Stdin::Inherited);
        self.visit(root, source);
        self.stdin = saved;
        self.depth -= 1;
    }

    fn visit(&mut self, node: Node, src: &str) {
        if self.nesting >= MAX_NESTING {
            if self.parts.last().is_none_or(|p| p.reason != TOO_DEEP) {
                self.push(Vec::new(), Class::Dangerous, TOO_DEEP);
            }
            return;
        }
        self.nesting += 1;
        self.visit_node(node, src);
        self.nesting -= 1;
    }

    fn visit_node(&mut self, node: Node, src: &str) {
        match node.kind() {
            "command" => self.command(node, src, Vec::new(), &[]),
            "redirected_statement" => self.redirected(node, src),
            "pipeline" => {
                let stages: Vec<Node> = node.named_children(&mut node.walk()).collect();
                self.pipeline(&stages, src);
            }
            "function_definition" => self.function(node, src),
            "subshell" | "command_substitution" | "process_substitution" => {
                let cwd = self.cwd.clone();
                let stdin = std::mem::replace(&mut self.stdin, Stdin::Inherited);
                self.children(node, src);
                self.stdin = stdin;
                self.cwd = cwd;
            }
            "variable_assignment" => {
                self.assignment(node, src);
                self.children(node, src);
            }
            "comment" | "heredoc_body" => {}
            _ => self.children(node, src),
        }
    }

    fn children(&mut self, node: Node, src: &str) {
        for child in node.named_children(&mut node.walk()) {
            self.visit(child, src);
        }
    }

    /// Assignments to variables that change what later commands run are not harmless.
    fn assignment(&mut self, node: Node, src: &str) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let name = text(name, src);
        if crate::permissions::commands::SENSITIVE_VARIABLES.contains(&name) {
            self.push(
                vec![format!("{name}=")],
                Class::Mutating,
                format!("changes {name}, which decides what runs"),
            );
        }
    }

    fn pipeline(&mut self, stages: &[Node], src: &str) {
        let mut download = false;
        for (i, stage) in stages.iter().enumerate() {
            let before = self.parts.len();
            let stdin = if i == 0 {
                self.stdin.clone()
            } else {
                Stdin::Pipe { download }
            };
            let saved = std::mem::replace(&mut self.stdin, stdin);
            self.visit(*stage, src);
            self.stdin = saved;
            download |= self.parts[before..].iter().any(|p| {
                p.words
                    .first()
                    .is_some_and(|w| crate::permissions::commands::is_download(w))
            });
        }
    }

    fn function(&mut self, node: Node, src: &str) {
        let name = node
            .child_by_field_name("name")
            .map(|n| text(n, src).to_string());
        let before = self.parts.len();
        if let Some(body) = node.child_by_field_name("body") {
            self.visit(body, src);
        }
        let Some(name) = name else { return };
        self.functions.push(name.clone());
        if self.parts[before..]
            .iter()
            .any(|p| p.words.first() == Some(&name))
        {
            self.push(
                Vec::new(),
                Class::Dangerous,
                format!("defines a function that calls itself ({name}): a fork bomb"),
            );
        }
    }

    fn redirected(&mut self, node: Node, src: &str) {
        let mut pipe_after: Option<Node> = None;
        let saved_stdin = self.stdin.clone();
        let redirects: Vec<Node> = node
            .named_children(&mut node.walk())
            .filter(|c| c.kind().ends_with("_redirect"))
            .collect();
        for redirect in &redirects {
            self.redirect(*redirect, src, &mut pipe_after);
        }
        let Some(body) = node.child_by_field_name("body") else {
            // A bare redirection (`> file`) still creates or truncates its target.
            let findings = self.write_findings(&redirects, src);
            self.findings_part(findings);
            self.stdin = saved_stdin;
            return;
        };
        match pipe_after {
            // `cat <<EOF | sh`: the grammar hangs the rest of the pipeline under the heredoc.
            Some(pipeline) => {
                let mut stages = vec![body];
                stages.extend(pipeline.named_children(&mut pipeline.walk()));
                self.pipeline(&stages, src);
            }
            None if body.kind() == "command" => {
                let findings = self.write_findings(&redirects, src);
                self.command(body, src, findings, &redirects);
            }
            None => self.visit(body, src),
        }
        if pipe_after.is_some() || body.kind() != "command" {
            // After the body: a `cd` inside it moves where relative targets land.
            let findings = self.write_findings(&redirects, src);
            self.findings_part(findings);
        }
        self.stdin = saved_stdin;
    }

    /// Remembers where a download command saves, so running that file later is held.
    fn note_download(&mut self, words: &[Word], redirects: &[Node], src: &str) {
        let downloads = words
            .first()
            .and_then(crate::permissions::commands::program_name)
            .is_some_and(crate::permissions::commands::is_download);
        if !downloads {
            return;
        }
        for redirect in redirects.iter().filter(|r| r.kind() == "file_redirect") {
            if let Some(dest) = redirect.child_by_field_name("destination") {
                self.downloaded.push(word(dest, src).text);
            }
        }
        let names = ["-o", "--output", "-O", "--output-document"];
        if let Some(out) = crate::permissions::commands::option_value(&words[1..], &names) {
            self.downloaded.push(out.text);
        }
    }

    fn findings_part(&mut self, findings: Vec<(Class, String)>) {
        if let Some((class, reason)) = findings.into_iter().max_by_key(|f| f.0) {
            self.push(Vec::new(), class, reason);
        }
    }

    /// What the output redirections among `redirects` write, outside the harmless devices.
    fn write_findings(&self, redirects: &[Node], src: &str) -> Vec<(Class, String)> {
        let mut findings = Vec::new();
        for redirect in redirects {
            match redirect.kind() {
                "file_redirect" => {
                    let op = operator(*redirect, src);
                    let Some(dest) = redirect.child_by_field_name("destination") else {
                        continue;
                    };
                    if op != "<"
                        && dest.kind() != "number"
                        && !(op == ">&" && text(dest, src) == "-")
                    {
                        findings.extend(self.write_target(&word(dest, src)));
                    }
                }
                "heredoc_redirect" => {
                    let nested: Vec<Node> = redirect
                        .named_children(&mut redirect.walk())
                        .filter(|c| c.kind() == "file_redirect")
                        .collect();
                    findings.extend(self.write_findings(&nested, src));
                }
                _ => {}
            }
        }
        findings
    }

    /// Visits what a redirection runs (substitutions) and sets the standard input it gives.
    fn redirect<'t>(&mut self, node: Node<'t>, src: &str, pipe_after: &mut Option<Node<'t>>) {
        match node.kind() {
            "file_redirect" => {
                let op = operator(node, src);
                if let Some(dest) = node.child_by_field_name("destination") {
                    self.visit(dest, src);
                }
                if op == "<" {
                    self.stdin = Stdin::File;
                }
            }
            "heredoc_redirect" => {
                let mut body = String::new();
                for child in node.named_children(&mut node.walk()) {
                    match child.kind() {
                        "heredoc_body" => {
                            body = text(child, src).to_string();
                            self.children(child, src);
                        }
                        "pipeline" => *pipe_after = Some(child),
                        "file_redirect" | "herestring_redirect" => {
                            self.redirect(child, src, pipe_after)
                        }
                        _ => {}
                    }
                }
                self.stdin = Stdin::Code(body);
            }
            "herestring_redirect" => {
                self.children(node, src);
                let value = node
                    .named_children(&mut node.walk())
                    .map(|c| word(c, src).text)
                    .collect::<Vec<_>>();
                self.stdin = Stdin::Code(value.join(" "));
            }
            _ => self.children(node, src),
        }
    }

    /// Judges a simple command; `outer` are the redirections of an enclosing statement.
    fn command(
        &mut self,
        node: Node,
        src: &str,
        mut findings: Vec<(Class, String)>,
        outer: &[Node],
    ) {
        let saved_stdin = self.stdin.clone();
        let redirects: Vec<Node> = node
            .children_by_field_name("redirect", &mut node.walk())
            .collect();
        for redirect in &redirects {
            let mut ignored = None;
            self.redirect(*redirect, src, &mut ignored);
        }
        findings.extend(self.write_findings(&redirects, src));
        let mut words = Vec::new();
        for child in node.named_children(&mut node.walk()) {
            match child.kind() {
                "variable_assignment" => self.visit(child, src),
                "command_name" => {
                    self.children(child, src);
                    if let Some(inner) = child.named_child(0) {
                        words.push(word(inner, src));
                    }
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {}
                _ if node_is_argument(node, child) => {
                    self.visit(child, src);
                    words.push(word(child, src));
                }
                _ => {}
            }
        }
        if !words.is_empty() {
            let all: Vec<Node> = redirects.iter().chain(outer).copied().collect();
            self.note_download(&words, &all, src);
            self.judge_and_push(&words, findings);
        } else {
            self.findings_part(findings);
        }
        self.stdin = saved_stdin;
    }
}

/// Whether `child` fills the `argument` field of `command` (redirects and names do not).
fn node_is_argument(command: Node, child: Node) -> bool {
    command
        .children_by_field_name("argument", &mut command.walk())
        .any(|a| a.id() == child.id())
}

pub(crate) fn text<'s>(node: Node, src: &'s str) -> &'s str {
    node.utf8_text(src.as_bytes()).unwrap_or("")
}

/// The anonymous operator token of a redirection (`>`, `>>`, `&>`, `<`, ...).
fn operator(node: Node, src: &str) -> String {
    node.children(&mut node.walk())
        .find(|c| !c.is_named())
        .map(|c| text(c, src).to_string())
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
