//! Shell syntax and builtins that run code without naming a command: variables whose value
//! is a command line (`PAGER`, `LESSOPEN`, `PS4`, `GIT_SSH_COMMAND`) or decides what loads
//! (`PATH`, `LD_PRELOAD`, `GIT_CONFIG_*`), arithmetic on data only known at run time (bash
//! evaluates `a[$(cmd)]` found in a variable's value), `[[ -v ]]`, `declare`/`unset`/
//! `printf -v` on names only known at run time, and `${x@P}` prompt expansion.

use tree_sitter::Node;

use crate::permissions::classify::arithmetic::{identifiers, is_name, scan_identifiers};
use crate::permissions::classify::commands::CommandJudged;
use crate::permissions::classify::values::{
    is_identifier, is_plain, numeric_substitution, unquoted,
};
use crate::permissions::classify::{Class, Walker, Word, text, word};

use CommandJudged::Own;

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

/// Why assigning `name` changes what later commands run: its value is a command line, or it
/// decides what loads. `None` for other variables.
pub(crate) fn sensitive_variable(name: &str) -> Option<String> {
    if COMMAND_VARIABLES.contains(&name) || name.starts_with("GIT_CONFIG_VALUE_") {
        Some(format!("sets {name}, a command line that programs run"))
    } else if LOADER_VARIABLES.contains(&name)
        || LOADER_PREFIXES.iter().any(|p| name.starts_with(p))
        || name.starts_with("GIT_") && !HARMLESS_GIT_VARIABLES.contains(&name)
    {
        Some(format!("changes {name}, which decides what runs"))
    } else {
        None
    }
}

/// git variables that only label or quiet what git does; every other `GIT_*` can point git
/// at another repository (`GIT_COMMON_DIR`, `GIT_OBJECT_DIRECTORY`, `GIT_CEILING_DIRECTORIES`).
const HARMLESS_GIT_VARIABLES: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_TERMINAL_PROMPT",
    "GIT_OPTIONAL_LOCKS",
    "GIT_FLUSH",
    "GIT_PROGRESS_DELAY",
];

impl Walker {
    /// A `NAME=value` assignment, before a command, alone, in `env` or in `export`.
    pub(crate) fn variable(&mut self, name: &str, value: &Word) {
        let name = self.referenced(name);
        let name = name.as_str();
        if self.integer_vars.contains(name) {
            // `declare -i n; n=$v`: the value is evaluated as arithmetic.
            if value.literal {
                self.arithmetic_text(&value.text);
            } else {
                self.arithmetic_names(std::slice::from_ref(&value.text));
            }
        }
        // A number computed from harmless numbers (`i=$((i+1))` after `i=0`) is data too, and
        // so is a count (`n=$(ls | wc -l)`).
        let number = self.harmless_arithmetic(&value.text) || numeric_substitution(&value.text);
        if (value.literal && is_plain(&value.text)) || number {
            self.plain_vars.insert(name.to_string());
        } else {
            self.plain_vars.remove(name);
        }
        let code =
            value.text.contains("$(") || value.text.contains('`') || value.text.contains('[');
        if code && !number {
            self.code_vars.insert(name.to_string());
        } else {
            self.code_vars.remove(name);
        }
        let Some(why) = sensitive_variable(name) else {
            return;
        };
        if COMMAND_VARIABLES.contains(&name) || name.starts_with("GIT_CONFIG_VALUE_") {
            let code = if name.starts_with("PS") {
                // A prompt: only its substitutions run.
                format!(": {}", value.text)
            } else {
                value.text.trim_start_matches(['|', '-']).to_string()
            };
            self.shell_string(&Word::literal(code), value.literal);
        }
        self.push(vec![format!("{name}=")], Class::Mutating, why);
    }

    /// Whether `value` is one arithmetic expansion (`$((i+1))`, `$(( ($i+1)*2 ))`, `$[i+1]`) of
    /// names, `$name`/`${name}` references, numbers, operators and balanced parentheses: its
    /// result is a number, never code. (What evaluating the names may run is judged where the
    /// expansion is visited.) Parentheses that close before they open (`$((id)|(id))`) make
    /// bash read a command substitution instead: never a number.
    fn harmless_arithmetic(&self, value: &str) -> bool {
        let value = unquoted(value);
        let Some(inner) = value
            .strip_prefix("$((")
            .and_then(|rest| rest.strip_suffix("))"))
            .or_else(|| {
                value
                    .strip_prefix("$[")
                    .and_then(|rest| rest.strip_suffix(']'))
            })
        else {
            return false;
        };
        let bytes = inner.as_bytes();
        let mut depth = 0usize;
        let mut at = 0;
        while at < bytes.len() {
            match bytes[at] {
                b'(' => depth += 1,
                b')' => match depth.checked_sub(1) {
                    Some(d) => depth = d,
                    None => return false,
                },
                b'$' => {
                    // `$name` or `${name}` only.
                    let rest = &inner[at + 1..];
                    let (name, used) = match rest.strip_prefix('{') {
                        Some(braced) => match braced.find('}') {
                            Some(end) => (&braced[..end], end + 2),
                            None => return false,
                        },
                        None => {
                            let end = rest
                                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                                .unwrap_or(rest.len());
                            (&rest[..end], end)
                        }
                    };
                    if !is_name(name) {
                        return false;
                    }
                    at += used;
                }
                b if b.is_ascii_alphanumeric() || b" \t_+-*/%<>=!&|^~?:,#".contains(&b) => {}
                _ => return false,
            }
            at += 1;
        }
        depth == 0
    }

    /// The variable an assignment to `name` sets: the target of a name reference
    /// (`declare -n r=BASH_ENV; r=x` sets `BASH_ENV`).
    pub(crate) fn referenced(&self, name: &str) -> String {
        let mut name = name.to_string();
        for _ in 0..8 {
            match self.namerefs.iter().find(|(r, _)| *r == name) {
                Some((_, target)) => name = target.clone(),
                None => break,
            }
        }
        name
    }

    /// A variable that a builtin assigns a value only known at run time (`read NAME`,
    /// `mapfile NAME`, `printf -v NAME`, `getopts`): why that is not read-only, if it is not.
    pub(crate) fn assigned_at_run_time(&mut self, target: &Word, by: &str) -> Option<String> {
        let shown = &target.text;
        if !target.literal {
            return Some(format!(
                "assigns to a variable named at run time ({by} {shown})"
            ));
        }
        let (name, index) = match shown.split_once('[') {
            Some((name, rest)) => (name, Some(rest.strip_suffix(']').unwrap_or(rest))),
            None => (shown.as_str(), None),
        };
        if !is_identifier(name) {
            return Some(format!("assigns to an odd variable name ({by} {shown})"));
        }
        let evaluated = index
            .filter(|_| !self.assoc_vars.contains(name))
            .and_then(|index| {
                let mut names = Vec::new();
                scan_identifiers(index, &mut names);
                self.arithmetic_concern(&names)
            });
        let name = self.referenced(name);
        self.plain_vars.remove(&name);
        self.code_vars.remove(&name);
        if let Some(why) = sensitive_variable(&name) {
            return Some(format!("{why} ({by} {shown})"));
        }
        if self.integer_vars.contains(&name) {
            return Some(format!(
                "assigns input to an integer variable, which bash evaluates as arithmetic \
                 ({by} {shown})"
            ));
        }
        evaluated.map(|_| {
            format!("assigns to an array element whose index bash evaluates ({by} {shown})")
        })
    }

    /// An assignment node of the grammar.
    pub(crate) fn assignment(&mut self, node: Node, src: &str) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        let name = text(name, src).to_string();
        let value_node = node.child_by_field_name("value");
        if let Some(array) = value_node.filter(|v| v.kind() == "array") {
            self.array_elements(&name, array, src);
        }
        let value = value_node
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
                // The initializer is arithmetic too (`i=y` evaluates y), then its targets
                // are known.
                if let Some(init) = node.child_by_field_name("initializer") {
                    self.arithmetic(init, src);
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
                    let element = self.named_subscript(&w.text);
                    if !(w.text.starts_with('-')
                        || w.literal && (is_identifier(&w.text) || element))
                    {
                        self.push(
                            Vec::new(),
                            Class::Mutating,
                            format!("unsets a name only known at run time ({})", w.text),
                        );
                    }
                }
            }
            "subscript" => self.subscript(node, src),
            "expansion" if !text(node, src).ends_with("@P}") => {
                self.expansion_arithmetic(node, src)
            }
            "expansion" => self.push(
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

    fn test_command(&mut self, node: Node, src: &str) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "unary_expression" => {
                    let op = n.child_by_field_name("operator").map(|o| text(o, src));
                    if op == Some("-v") {
                        let operand = n.named_children(&mut n.walk()).last().map(|o| word(o, src));
                        let element = operand
                            .as_ref()
                            .is_some_and(|w| self.named_subscript(&w.text));
                        if let Some(w) =
                            operand.filter(|w| !(w.literal && (is_identifier(&w.text) || element)))
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

    /// `declare`, `typeset`, `local`, `export`, `readonly`: their attributes change how later
    /// assignments are taken (`-i` evaluates them as arithmetic, `-n` redirects them to another
    /// variable), and a computed name could be any variable.
    fn declaration(&mut self, node: Node, src: &str) {
        let keyword = node
            .child(0)
            .map(|k| text(k, src).to_string())
            .unwrap_or_default();
        let flags: String = node
            .named_children(&mut node.walk())
            .filter(|c| c.kind() == "word")
            .map(|c| text(c, src))
            .filter_map(|t| t.strip_prefix('-'))
            .collect();
        let exported = keyword == "export" || flags.contains('x');
        for child in node.named_children(&mut node.walk()) {
            let (name, value) = match child.kind() {
                "word" => continue,
                "variable_name" => (text(child, src).to_string(), None),
                "variable_assignment" => {
                    let Some(name) = child.child_by_field_name("name") else {
                        continue;
                    };
                    let value = child.child_by_field_name("value").map(|v| word(v, src));
                    (
                        text(name, src).to_string(),
                        Some(value.unwrap_or(Word::literal(""))),
                    )
                }
                _ => {
                    let w = word(child, src);
                    let target = w.text.split_once('=').map_or(w.text.as_str(), |(t, _)| t);
                    self.named_subscript(target.trim_end_matches('+'));
                    self.push(
                        Vec::new(),
                        Class::Mutating,
                        format!("declares a variable named at run time ({})", w.text),
                    );
                    continue;
                }
            };
            if flags.contains('i') {
                self.integer_vars.insert(name.clone());
            }
            if flags.contains('A') {
                self.assoc_vars.insert(name.clone());
            }
            if flags.contains('n') {
                self.name_reference(&keyword, &name, value.as_ref());
            } else if exported
                && value.is_none()
                && let Some(why) = sensitive_variable(&self.referenced(&name))
            {
                // Its value may come from `read`, `printf -v` or the environment.
                self.push(
                    vec![format!("{keyword} {name}")],
                    Class::Mutating,
                    format!("{why} ({keyword} {name})"),
                );
            }
        }
    }

    /// `declare -n NAME=TARGET`: later assignments to NAME set TARGET.
    fn name_reference(&mut self, keyword: &str, name: &str, target: Option<&Word>) {
        let Some(target) = target else {
            self.push(
                Vec::new(),
                Class::Mutating,
                format!(
                    "declares a name reference ({keyword} -n {name}) that a later assignment \
                     points at any variable"
                ),
            );
            return;
        };
        let shown = &target.text;
        if !(target.literal && is_identifier(shown)) {
            let code = shown.contains("$(") || shown.contains('`');
            self.push(
                Vec::new(),
                if code {
                    Class::Dangerous
                } else {
                    Class::Mutating
                },
                format!("makes {name} a name for a variable only known at run time ({shown})"),
            );
            return;
        }
        self.namerefs.retain(|(r, _)| r != name);
        self.namerefs.push((name.to_string(), shown.clone()));
        if let Some(why) = sensitive_variable(&self.referenced(shown)) {
            self.push(
                Vec::new(),
                Class::Mutating,
                format!("makes {name} a name for {shown}: {why}"),
            );
        }
    }

    /// Builtins judged by name: those that assign (`read`, `printf -v`, ...), `let`, `test -v`.
    pub(crate) fn judge_builtin(&mut self, name: &str, args: &[Word]) -> Option<CommandJudged> {
        match name {
            "printf" | "read" | "mapfile" | "readarray" | "getopts" | "wait" => {
                self.judge_assigning(name, args)
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
                let element = named.is_some_and(|w| self.named_subscript(&w.text));
                named
                    .filter(|w| !(w.literal && (is_identifier(&w.text) || element)))
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
