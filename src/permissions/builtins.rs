//! Shell syntax and builtins that run code without naming a command: variables whose value
//! is a command line (`PAGER`, `LESSOPEN`, `PS4`, `GIT_SSH_COMMAND`) or decides what loads
//! (`PATH`, `LD_PRELOAD`, `GIT_CONFIG_*`), arithmetic on data only known at run time (bash
//! evaluates `a[$(cmd)]` found in a variable's value), `[[ -v ]]`, `declare`/`unset`/
//! `printf -v` on names only known at run time, and `${x@P}` prompt expansion.

use tree_sitter::Node;

use crate::permissions::classify::{Class, Walker, Word, text, word};
use crate::permissions::commands::Judged;

use Judged::Own;

/// Variables whose value is a command line that some program runs.
const COMMAND_VARIABLES: &[&str] = &[
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "BAT_PAGER",
    "DELTA_PAGER",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "GIT_PROXY_COMMAND",
    "LESSOPEN",
    "LESSCLOSE",
    "PROMPT_COMMAND",
    "PS0",
    "PS1",
    "PS2",
    "PS4",
    "BROWSER",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "FZF_DEFAULT_COMMAND",
];

/// Variables that decide which program runs, what it loads or which config it trusts.
const LOADER_VARIABLES: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "IFS",
    "SHELLOPTS",
    "BASHOPTS",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "KUBECONFIG",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "LESSKEY",
    "LESSKEYIN",
    "LESSKEY_CONTENT",
    "MANOPT",
    "MANROFFOPT",
    "HISTFILE",
    "BASH_XTRACEFD",
    "GCONV_PATH",
    "BASH_LOADABLES_PATH",
];

/// Prefixes of such variables (`LD_PRELOAD`, `GIT_CONFIG_KEY_0`, `GIT_TRACE=file`).
const LOADER_PREFIXES: &[&str] = &["LD_", "DYLD_", "GIT_CONFIG", "GIT_TRACE"];

/// Variables bash sets itself to numbers: arithmetic on them runs nothing.
const NUMERIC_SPECIALS: &[&str] = &[
    "#",
    "?",
    "$",
    "!",
    "-",
    "RANDOM",
    "SRANDOM",
    "LINENO",
    "SECONDS",
    "BASHPID",
    "PPID",
    "UID",
    "EUID",
    "COLUMNS",
    "LINES",
    "OPTIND",
    "EPOCHSECONDS",
    "SHLVL",
    "HISTCMD",
];

impl Walker {
    /// A `NAME=value` assignment, before a command, alone, in `env` or in `export`.
    pub(crate) fn variable(&mut self, name: &str, value: &Word) {
        if value.literal && is_plain(&value.text) {
            self.plain_vars.push(name.to_string());
        } else {
            self.plain_vars.retain(|v| v != name);
        }
        if value.text.contains("$(") || value.text.contains('`') || value.text.contains('[') {
            self.code_vars.push(name.to_string());
        } else {
            self.code_vars.retain(|v| v != name);
        }
        if COMMAND_VARIABLES.contains(&name) || name.starts_with("GIT_CONFIG_VALUE_") {
            let code = if name.starts_with("PS") {
                // A prompt: only its substitutions run.
                format!(": {}", value.text)
            } else {
                value.text.trim_start_matches(['|', '-']).to_string()
            };
            self.shell_string(&Word::literal(code), value.literal);
            self.push(
                vec![format!("{name}=")],
                Class::Mutating,
                format!("sets {name}, a command line that programs run"),
            );
        } else if LOADER_VARIABLES.contains(&name)
            || LOADER_PREFIXES.iter().any(|p| name.starts_with(p))
        {
            self.push(
                vec![format!("{name}=")],
                Class::Mutating,
                format!("changes {name}, which decides what runs"),
            );
        }
    }

    /// An assignment node of the grammar.
    pub(crate) fn assignment(&mut self, node: Node, src: &str) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let name = text(name, src).to_string();
        let value = node
            .child_by_field_name("value")
            .map(|v| word(v, src))
            .unwrap_or_else(|| Word::literal(""));
        self.variable(&name, &value);
    }

    /// Syntax that evaluates data as code. Returns true (the caller walks the children).
    pub(crate) fn builtin_syntax(&mut self, node: Node, src: &str) -> bool {
        match node.kind() {
            "arithmetic_expansion" => self.arithmetic(node, src),
            "compound_statement" if text(node, src).starts_with("((") => self.arithmetic(node, src),
            "c_style_for_statement" => {
                if let Some(init) = node.child_by_field_name("initializer") {
                    self.visit_assignments(init, src);
                }
                for field in ["condition", "update"] {
                    if let Some(part) = node.child_by_field_name(field) {
                        self.arithmetic(part, src);
                    }
                }
            }
            "for_statement" => {
                let values: Vec<Word> = node
                    .children_by_field_name("value", &mut node.walk())
                    .map(|v| word(v, src))
                    .collect();
                if let Some(var) = node.child_by_field_name("variable") {
                    let all_plain = values.iter().all(|v| v.literal && is_plain(&v.text));
                    let value = Word {
                        text: if all_plain { "0".into() } else { "$x".into() },
                        literal: all_plain,
                    };
                    self.variable(text(var, src), &value);
                }
            }
            "test_command" => self.test_command(node, src),
            "declaration_command" => self.declaration(node, src),
            "unset_command" => {
                for arg in node.named_children(&mut node.walk()) {
                    let w = word(arg, src);
                    if !(w.text.starts_with('-') || w.literal && is_identifier(&w.text)) {
                        self.push(
                            Vec::new(),
                            Class::Mutating,
                            format!("unsets a name only known at run time ({})", w.text),
                        );
                    }
                }
            }
            "expansion" if text(node, src).ends_with("@P}") => self.push(
                Vec::new(),
                Class::Dangerous,
                format!(
                    "expands a value as a prompt ({}), which runs the commands in it",
                    text(node, src)
                ),
            ),
            _ => {}
        }
        true
    }

    fn visit_assignments(&mut self, node: Node, src: &str) {
        if node.kind() == "variable_assignment" {
            self.assignment(node, src);
        }
        for child in node.named_children(&mut node.walk()) {
            self.visit_assignments(child, src);
        }
    }

    /// Judges the variables an arithmetic context reads.
    fn arithmetic(&mut self, node: Node, src: &str) {
        let mut names = Vec::new();
        identifiers(node, src, &mut names);
        self.arithmetic_names(&names);
    }

    fn arithmetic_names(&mut self, names: &[String]) {
        for name in names {
            if self.code_vars.contains(name) {
                self.push(
                    Vec::new(),
                    Class::Dangerous,
                    format!("evaluates {name} as arithmetic, and its value holds code"),
                );
                return;
            }
            let known = self.plain_vars.contains(name)
                || NUMERIC_SPECIALS.contains(&name.as_str())
                || name.chars().all(|c| c.is_ascii_digit());
            if !known {
                self.push(
                    Vec::new(),
                    Class::Mutating,
                    format!(
                        "evaluates {name} as arithmetic; a value from outside can run commands \
                         (a[$(cmd)])"
                    ),
                );
                return;
            }
        }
    }

    fn test_command(&mut self, node: Node, src: &str) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "unary_expression" => {
                    let op = n.child_by_field_name("operator").map(|o| text(o, src));
                    if op == Some("-v") {
                        let operand = n.named_children(&mut n.walk()).last().map(|o| word(o, src));
                        if let Some(w) = operand.filter(|w| !(w.literal && is_identifier(&w.text)))
                        {
                            self.push(
                                Vec::new(),
                                Class::Mutating,
                                format!(
                                    "tests a variable named at run time ({}), which can run commands",
                                    w.text
                                ),
                            );
                        }
                    }
                }
                "binary_expression" => {
                    let op = n
                        .child_by_field_name("operator")
                        .map(|o| text(o, src))
                        .unwrap_or("");
                    if matches!(op, "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge") {
                        let mut names = Vec::new();
                        for side in ["left", "right"] {
                            if let Some(s) = n.child_by_field_name(side) {
                                identifiers(s, src, &mut names);
                            }
                        }
                        self.arithmetic_names(&names);
                    }
                }
                _ => {}
            }
            stack.extend(n.named_children(&mut n.walk()));
        }
    }

    fn declaration(&mut self, node: Node, src: &str) {
        let mut integer = false;
        for child in node.named_children(&mut node.walk()) {
            match child.kind() {
                "word" => {
                    let t = text(child, src);
                    integer |= t.starts_with('-') && t.contains('i');
                }
                "variable_name" => {}
                "variable_assignment" => {
                    if integer && let Some(value) = child.child_by_field_name("value") {
                        let w = word(value, src);
                        let mut names = Vec::new();
                        if w.literal {
                            scan_identifiers(&w.text, &mut names);
                        } else {
                            names.push(w.text);
                        }
                        self.arithmetic_names(&names);
                    }
                }
                _ => {
                    let w = word(child, src);
                    self.push(
                        Vec::new(),
                        Class::Mutating,
                        format!("declares a variable named at run time ({})", w.text),
                    );
                }
            }
        }
    }

    /// Builtins judged by name: `printf -v`, `let`, `test -v`.
    pub(crate) fn judge_builtin(&mut self, name: &str, args: &[Word]) -> Option<Judged> {
        match name {
            "printf" => {
                let target = args.iter().enumerate().find_map(|(i, a)| {
                    if a.text == "-v" {
                        args.get(i + 1).cloned()
                    } else {
                        a.text.strip_prefix("-v").map(|rest| Word {
                            text: rest.to_string(),
                            literal: a.literal,
                        })
                    }
                });
                Some(match target {
                    Some(t) if !(t.literal && is_identifier(&t.text)) => Own(
                        Class::Mutating,
                        format!(
                            "assigns to a variable named at run time (printf -v {})",
                            t.text
                        ),
                    ),
                    _ => Own(Class::ReadOnly, "only reads (printf)".into()),
                })
            }
            "let" => {
                let mut names = Vec::new();
                for a in args {
                    if a.literal {
                        scan_identifiers(&a.text, &mut names);
                    } else {
                        names.push(a.text.clone());
                    }
                }
                self.arithmetic_names(&names);
                Some(Own(Class::ReadOnly, "computes (let)".into()))
            }
            "test" | "[" => {
                let named = args.windows(2).find(|w| w[0].text == "-v").map(|w| &w[1]);
                named
                    .filter(|w| !(w.literal && is_identifier(&w.text)))
                    .map(|w| {
                        Own(
                            Class::Mutating,
                            format!(
                                "tests a variable named at run time ({}), which can run commands",
                                w.text
                            ),
                        )
                    })
            }
            _ => None,
        }
    }
}

/// The variable names an arithmetic expression reads (assigned ones included: `x=y` reads y,
/// and `x` as a target is harmless only when plain).
fn identifiers(node: Node, src: &str, out: &mut Vec<String>) {
    match node.kind() {
        "variable_name" | "word" => scan_identifiers(text(node, src), out),
        "special_variable_name" | "number" | "command_substitution" => {}
        "variable_assignment" => {
            if let Some(value) = node.child_by_field_name("value") {
                identifiers(value, src, out);
            }
        }
        "subscript" => {
            if let Some(name) = node.child_by_field_name("name") {
                identifiers(name, src, out);
            }
            if let Some(index) = node.child_by_field_name("index") {
                identifiers(index, src, out);
            }
        }
        _ => {
            for child in node.named_children(&mut node.walk()) {
                identifiers(child, src, out);
            }
        }
    }
}

/// Identifiers in arithmetic source text, except targets of plain `=`.
fn scan_identifiers(source: &str, out: &mut Vec<String>) {
    let bytes = source.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let assigned = bytes.get(i) == Some(&b'=') && bytes.get(i + 1) != Some(&b'=');
            let preceded_by_digit = start > 0 && bytes[start - 1].is_ascii_digit();
            if !assigned && !preceded_by_digit {
                out.push(source[start..i].to_string());
            }
        } else {
            i += 1;
        }
    }
}

/// A name bash accepts as a plain variable (no subscript that it would evaluate).
pub(crate) fn is_identifier(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A value that arithmetic can use without evaluating anything: digits, words, simple text.
fn is_plain(value: &str) -> bool {
    value.chars().all(|c| {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ',' | ':' | '/' | ' ' | '+')
    })
}
