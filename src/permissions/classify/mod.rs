//! Shell-grammar classification of `bash` commands: tree-sitter-bash parses the command line,
//! and every simple command in it (pipelines, lists, subshells, substitutions, `bash -c`
//! strings, wrapper payloads) is judged on its own. The policy gate and the rules feed on the
//! resulting `Analysis`; the per-command knowledge lives in `commands.rs`.

pub(super) mod arithmetic;
pub(super) mod assigning;
pub(super) mod builtins;
pub(super) mod classification;
pub(super) mod commands;
pub(super) mod dev_commands;
pub(super) mod fan_out;
pub(super) mod file_commands;
pub(super) mod git;
pub(super) mod git_repo;
pub(super) mod git_subcommands;
pub(super) mod git_values;
pub(super) mod kubectl;
pub(super) mod load;
pub(super) mod locations;
pub(super) mod mentions;
pub(super) mod opts;
pub(super) mod outward;
pub(super) mod ps;
pub(super) mod redirects;
pub(super) mod text_tools;
pub(super) mod tree_commands;
pub(super) mod values;
pub(super) mod words;
pub(super) mod wrappers;

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use tree_sitter::{Node, Parser, Tree};

pub use crate::permissions::classify::locations::Places;
pub(crate) use crate::permissions::classify::locations::is_harmless_device;
pub(crate) use crate::permissions::classify::words::{Word, word};

pub use crate::permissions::classify::classification::{
    Analysis, Class, Classification, CommandPart,
};

/// Classifies a command line as it would run in `workspace`, with the temp and home
/// directories of this process's environment (tests; cairn passes its `Places`).
#[cfg(any(test, feature = "testing"))]
pub fn classify(command: &str, workspace: &Path) -> Classification {
    analyze(command, workspace).classification()
}

/// Classifies a command line with injected temp and home directories.
pub fn classify_in(command: &str, workspace: &Path, places: &Places) -> Classification {
    analyze_in(command, workspace, places).classification()
}

/// Judges every simple command of `command`, as it would run in `workspace` (tests).
#[cfg(any(test, feature = "testing"))]
pub fn analyze(command: &str, workspace: &Path) -> Analysis {
    analyze_in(command, workspace, &Places::from_env())
}

/// Judges every simple command of `command` in `workspace`, with injected temp and home.
pub fn analyze_in(command: &str, workspace: &Path, places: &Places) -> Analysis {
    let root = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let mut walker = Walker::new(root, places.clone());
    walker.source(command);
    Analysis {
        parts: walker.parts,
    }
}

/// The words of each simple command in `command`, normalized like `Part::words`, without
/// judging them. Rules use it to normalize their own prefixes.
pub fn command_words(command: &str) -> Vec<Vec<String>> {
    analyze_in(command, Path::new("/"), &Places::default())
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

/// Parses `source` within `PARSE_BUDGET`; None when it cannot, or not in time.
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
        let parser = slot.as_mut()?;
        let started = std::time::Instant::now();
        let mut in_time = |_: &tree_sitter::ParseState| {
            if started.elapsed() > PARSE_BUDGET {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        };
        let bytes = source.as_bytes();
        let tree = parser.parse_with_options(
            &mut |at, _| bytes.get(at..).unwrap_or_default(),
            None,
            Some(tree_sitter::ParseOptions::new().progress_callback(&mut in_time)),
        );
        if tree.is_none() {
            // A parse stopped part way would resume with the next source otherwise.
            parser.reset();
        }
        tree
    })
}

/// The depth of the tree below `root`, counted without recursion (the tree of a hostile
/// command line is as deep as it likes; the walk and its helpers recurse).
fn tree_depth(root: Node) -> usize {
    let mut cursor = root.walk();
    let (mut depth, mut deepest) = (0usize, 0usize);
    loop {
        if cursor.goto_first_child() {
            depth += 1;
            deepest = deepest.max(depth);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return deepest;
            }
            depth -= 1;
        }
    }
}

/// Nested `bash -c` strings deeper than this are refused rather than followed.
const MAX_DEPTH: usize = 8;

const TOO_DEEP: &str = "nests too deeply to examine";

/// Syntax nested deeper than this (`$($($(...)))`) is refused rather than walked, so a
/// hostile command cannot exhaust the stack of the thread that classifies it.
const MAX_NESTING: usize = 150;

/// A parse tree deeper than this is refused before anything walks it: every helper that
/// follows the tree (arithmetic, words, redirections) recurses at most this deep.
const MAX_TREE_DEPTH: usize = 1000;

/// Longest shell source examined (a command line, a `bash -c` string): a longer one is held
/// as dangerous unread, so the parse and the walk are bounded in time whatever it holds.
pub const MAX_SOURCE: usize = 256 * 1024;

/// Time a parse may take; a source the parser needs longer for is held as dangerous.
const PARSE_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);

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
    pub places: Places,
    /// The directory relative paths resolve against; `None` after `cd` to a run-time path.
    pub cwd: Option<PathBuf>,
    pub parts: Vec<CommandPart>,
    pub depth: usize,
    pub stdin: Stdin,
    /// Functions defined earlier in the command line; their bodies were judged already.
    pub functions: Vec<String>,
    /// How deep in the syntax tree the walk is.
    nesting: usize,
    /// Files a download command wrote earlier in the command line.
    pub downloaded: Vec<String>,
    /// Descriptors above 2 that `exec N>file` (and the like) opened earlier in the command
    /// line: a later `>&N` writes where that said.
    pub opened_fds: Vec<u32>,
    /// Protected paths written by the command being judged; the next part pushed carries them.
    pub protected: RefCell<Vec<String>>,
    /// Variables assigned plain literal values (digits, words) earlier in the command line:
    /// arithmetic on them cannot run anything.
    pub plain_vars: std::collections::HashSet<String>,
    /// Variables assigned literal text that looks like code (`$(`, backticks, subscripts).
    pub code_vars: std::collections::HashSet<String>,
    /// Variables declared integer (`declare -i`): assignments to them are arithmetic.
    pub integer_vars: std::collections::HashSet<String>,
    /// Associative arrays (`declare -A`): their subscripts are strings, not arithmetic.
    pub assoc_vars: std::collections::HashSet<String>,
    /// Name references (`declare -n NAME=TARGET`) and their targets.
    pub namerefs: Vec<(String, String)>,
    /// Set while judging the payload of `xargs`, `find -exec`, `parallel`: its paths come
    /// from the input, so a deletion there is mass deletion.
    pub mass: Option<&'static str>,
}

impl Walker {
    fn new(root: PathBuf, places: Places) -> Self {
        Self {
            cwd: Some(root.clone()),
            root,
            places,
            parts: Vec::new(),
            depth: 0,
            stdin: Stdin::Inherited,
            functions: Vec::new(),
            nesting: 0,
            downloaded: Vec::new(),
            opened_fds: Vec::new(),
            protected: RefCell::new(Vec::new()),
            plain_vars: Default::default(),
            code_vars: Default::default(),
            integer_vars: Default::default(),
            assoc_vars: Default::default(),
            namerefs: Vec::new(),
            mass: None,
        }
    }

    pub fn push(&mut self, words: Vec<String>, class: Class, reason: impl Into<String>) {
        let protected = std::mem::take(&mut *self.protected.borrow_mut());
        let protected = (!protected.is_empty()).then(|| {
            format!(
                "writes a protected path ({}), which could make later commands run something else",
                protected.join(", ")
            )
        });
        let reason = reason.into();
        let opaque = words.is_empty() && is_opaque(&reason);
        self.parts.push(CommandPart {
            words,
            class,
            reason,
            protected,
            redirected: false,
            opaque,
        });
    }

    /// Notes a write to a protected path; the next part pushed carries it.
    pub fn mark_protected(&self, shown: &str) {
        let mut pending = self.protected.borrow_mut();
        if !pending.iter().any(|p| p == shown) {
            pending.push(shown.to_string());
        }
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
        if source.len() > MAX_SOURCE {
            self.push(
                Vec::new(),
                Class::Dangerous,
                format!(
                    "is too long to examine ({} KiB; at most {} KiB)",
                    source.len() / 1024,
                    MAX_SOURCE / 1024
                ),
            );
            return;
        }
        // Bash drops a backslash-newline before it splits words (`r\⏎m` is `rm`); the grammar
        // does not, so the join happens here.
        let joined = join_continued_lines(source);
        let source: &str = &joined;
        let Some(tree) = parse(source) else {
            self.push(Vec::new(), Class::Dangerous, "could not parse the command");
            return;
        };
        let root = tree.root_node();
        if tree_depth(root) > MAX_TREE_DEPTH {
            self.push(Vec::new(), Class::Dangerous, TOO_DEEP);
            return;
        }
        if root.has_error() {
            self.push(Vec::new(), Class::Dangerous, "could not parse the command");
        }
        self.depth += 1;
        let saved = std::mem::replace(&mut self.stdin, Stdin::Inherited);
        self.visit(root, source);
        self.stdin = saved;
        self.depth -= 1;
    }

    pub(crate) fn visit(&mut self, node: Node, src: &str) {
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
                // `$(<file)` reads the file with no command to judge: judged as `cat file`.
                if node.kind() == "command_substitution" {
                    for child in node.named_children(&mut node.walk()) {
                        if child.kind() == "file_redirect"
                            && let Some(target) =
                                crate::permissions::classify::redirects::read_target(child, src)
                        {
                            let cat = Word {
                                text: "cat".into(),
                                ..target.clone()
                            };
                            self.judge_and_push(&[cat, target], Vec::new());
                        }
                    }
                }
                let cwd = self.cwd.clone();
                let stdin = std::mem::replace(&mut self.stdin, Stdin::Inherited);
                self.children(node, src);
                self.stdin = stdin;
                self.cwd = cwd;
            }
            "variable_assignment" => {
                // The value is expanded before it is assigned (`i=$((i+1))` reads the old i).
                self.children(node, src);
                self.assignment(node, src);
            }
            "arithmetic_expansion"
            | "c_style_for_statement"
            | "test_command"
            | "declaration_command"
            | "unset_command"
            | "expansion"
            | "subscript"
            | "for_statement"
            | "compound_statement"
                if self.builtin_syntax(node, src) =>
            {
                self.children(node, src)
            }
            "word" if text(node, src).contains("..") => {
                self.brace_load(node, src);
                self.children(node, src)
            }
            "brace_expression" | "concatenation" => {
                let inside_word = node.kind() == "brace_expression"
                    && node.parent().is_some_and(|p| p.kind() == "concatenation");
                if !inside_word {
                    self.brace_load(node, src);
                }
                self.children(node, src)
            }
            "comment" | "heredoc_body" => {}
            _ => self.children(node, src),
        }
    }

    pub(crate) fn children(&mut self, node: Node, src: &str) {
        for child in node.named_children(&mut node.walk()) {
            self.visit(child, src);
        }
    }

    pub(crate) fn pipeline(&mut self, stages: &[Node], src: &str) {
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
                    .is_some_and(|w| crate::permissions::classify::commands::is_download(w))
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

    /// Judges a simple command; `outer` are the redirections of an enclosing statement.
    pub(crate) fn command(
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
        let mut glued_end: Option<usize> = None;
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
                // `sh 0< file`: digits glued to a redirection are its descriptor, which the
                // grammar reads as an argument.
                "number"
                    if src
                        .get(child.end_byte()..)
                        .is_some_and(|rest| rest.starts_with(['<', '>'])) => {}
                _ if node_is_argument(node, child) => {
                    self.visit(child, src);
                    let next = word(child, src);
                    // The grammar sometimes splits one shell word in two (another process's root
                    // directory followed by its `environ`); with no blank between them, bash sees one word.
                    match words.last_mut() {
                        Some(last) if glued_end == Some(child.start_byte()) => {
                            let last: &mut Word = last;
                            last.text.push_str(&next.text);
                            last.literal &= next.literal;
                        }
                        _ => words.push(next),
                    }
                    glued_end = Some(child.end_byte());
                    continue;
                }
                _ => {}
            }
            glued_end = None;
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

/// Whether a finding's reason says that what runs is only known at run time (the reasons
/// are written in `commands.rs` and `wrappers.rs`).
fn is_opaque(reason: &str) -> bool {
    reason.starts_with("names its command at run time")
        || reason.contains("only known at run time (")
            && (reason.starts_with("runs shell code") || reason.starts_with("evaluates"))
        || reason.contains("produced at run time")
        || reason.starts_with("expands a value as a prompt")
        // Unparsed, it could be anything bash makes of it (`{rm,-rf,x}`).
        || reason == "could not parse the command"
}

/// `source` with every backslash-newline outside single quotes removed, as bash's reader does.
fn join_continued_lines(source: &str) -> std::borrow::Cow<'_, str> {
    if !source.contains("\\\n") {
        return std::borrow::Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    let (mut single, mut double) = (false, false);
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '\\' if !single => match chars.peek() {
                Some('\n') => {
                    chars.next();
                    continue;
                }
                Some(_) => {
                    out.push(c);
                    out.extend(chars.next());
                    continue;
                }
                None => {}
            },
            _ => {}
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

/// The anonymous operator token of a redirection (`>`, `>>`, `&>`, `<`, ...).
pub(crate) fn operator(node: Node, src: &str) -> String {
    node.children(&mut node.walk())
        .find(|c| !c.is_named())
        .map(|c| text(c, src).to_string())
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "classify_tests.rs"]
pub(crate) mod tests;

#[cfg(test)]
mod hostile_tests;

#[cfg(test)]
mod redteam_tests;

#[cfg(test)]
mod families_tests;

#[cfg(test)]
mod secrets_tests;

#[cfg(test)]
mod worst_case_tests;
