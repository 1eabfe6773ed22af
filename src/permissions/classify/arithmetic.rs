//! Arithmetic on data only known at run time. bash evaluates a variable's value as an
//! arithmetic expression in many places, and an expression can hold an array subscript whose
//! own text runs: with `y='a[$(cmd)]'`, each of `$((y))`, `((y))`, `let y`, `[[ y -eq 1 ]]`,
//! `${s:y:1}`, `${@:y}`, `${a[y]}`, `a[y]=1`, `a=([y]=1)`, `declare -i n=y` (and later `n=$v`
//! or `read n`) and `${!x}` (the variable named by x's value, `a[$(cmd)]`) runs `cmd`. So every
//! one of those contexts is judged the same way: names assigned plain literals earlier in the
//! command line, bash's own numeric variables and digits are harmless; anything else is at
//! least mutating, and a name assigned code-looking text is dangerous.

use tree_sitter::Node;

use crate::permissions::classify::{Class, Walker, text};

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
    /// Judges the variables an arithmetic context reads.
    pub(crate) fn arithmetic(&mut self, node: Node, src: &str) {
        let mut names = Vec::new();
        identifiers(node, src, &mut names);
        self.arithmetic_names(&names);
    }

    /// Judges arithmetic source text (`i+1`, `$y`, `a[b]`).
    pub(crate) fn arithmetic_text(&mut self, source: &str) {
        let mut names = Vec::new();
        scan_identifiers(source, &mut names);
        self.arithmetic_names(&names);
    }

    pub(crate) fn arithmetic_names(&mut self, names: &[String]) {
        if let Some((class, why)) = self.arithmetic_concern(names) {
            self.push(Vec::new(), class, why);
        }
    }

    /// Why arithmetic reading `names` could run something, without recording it. A name
    /// holding code anywhere among them decides, whatever comes before it (`i=y` with y code).
    pub(crate) fn arithmetic_concern(&self, names: &[String]) -> Option<(Class, String)> {
        if let Some(name) = names.iter().find(|name| self.code_vars.contains(*name)) {
            return Some((
                Class::Dangerous,
                format!("evaluates {name} as arithmetic, and its value holds code"),
            ));
        }
        let name = names.iter().find(|name| !self.harmless_number(name))?;
        Some((
            Class::Mutating,
            format!(
                "evaluates {name} as arithmetic; a value from outside can run commands \
                 (a[$(cmd)])"
            ),
        ))
    }

    /// A variable name as a builtin takes it in a word (`unset 'a[i]'`, `test -v a[i]`,
    /// `declare 'a[i]=1'`, `read a[i]`): bash evaluates the subscript of an indexed array as
    /// arithmetic, so it is judged as every arithmetic context is.
    /// Returns whether `word` is a whole array element (`a[i]`), which then names no other
    /// variable than `a`.
    pub(crate) fn named_subscript(&mut self, word: &str) -> bool {
        let Some(open) = word.find('[') else {
            return false;
        };
        let name = &word[..open];
        let rest = &word[open..];
        let Some(close) = closing_bracket(rest) else {
            return false;
        };
        let index = &rest[1..close];
        let whole = is_name(name) && close + 1 == rest.len();
        if matches!(index, "@" | "*") || self.assoc_vars.contains(name) {
            return whole;
        }
        // Quoting does not keep the builtin from evaluating it: `unset 'a[$(id)]'` runs id.
        if index.contains("$(") || index.contains('`') {
            self.push(
                Vec::new(),
                Class::Dangerous,
                format!("bash evaluates the subscript of {word}, and it holds code"),
            );
            return whole;
        }
        self.arithmetic_text(index);
        whole
    }

    /// Whether arithmetic on `name` cannot run anything: digits, bash's numeric variables,
    /// names assigned plain literals earlier in the command line.
    fn harmless_number(&self, name: &str) -> bool {
        self.plain_vars.contains(name)
            || NUMERIC_SPECIALS.contains(&name)
            || name.chars().all(|c| c.is_ascii_digit())
    }

    /// A `${...}` expansion: the offset and length of `${s:off:len}` (also `${@:off}`,
    /// `${a[@]:off:len}`) are arithmetic, and `${!x}` expands the variable x's value names,
    /// whose subscript (`a[$(cmd)]`) is evaluated.
    pub(crate) fn expansion_arithmetic(&mut self, node: Node, src: &str) {
        let Some(inner) = text(node, src)
            .strip_prefix("${")
            .and_then(|t| t.strip_suffix('}'))
        else {
            return;
        };
        let (indirect, rest) = match inner.strip_prefix('!') {
            Some(rest) if !rest.is_empty() => (true, rest),
            _ => (
                false,
                inner
                    .strip_prefix('#')
                    .filter(|r| !r.is_empty())
                    .unwrap_or(inner),
            ),
        };
        let name_len = if rest.starts_with(|c: char| "@*#?$!-".contains(c)) {
            1
        } else {
            rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len())
        };
        let (name, mut after) = rest.split_at(name_len);
        let mut whole_array = false;
        if after.starts_with('[') {
            let close = closing_bracket(after).unwrap_or(after.len() - 1);
            whole_array = matches!(&after[1..close], "@" | "*");
            after = &after[close + 1..];
        }
        if indirect && !name.is_empty() && !whole_array && !after.starts_with(['*', '@']) {
            self.indirect(name);
        }
        if let Some(range) = after.strip_prefix(':')
            && !range.starts_with(['-', '=', '+', '?'])
        {
            for part in split_top_level(range, ':') {
                self.arithmetic_text(part);
            }
        }
    }

    /// `${!x}`: the value of x names the variable to expand, subscript and all.
    fn indirect(&mut self, name: &str) {
        if self.code_vars.contains(name) {
            self.push(
                Vec::new(),
                Class::Dangerous,
                format!("expands the variable named by {name}, and its value holds code"),
            );
        } else if !self.harmless_number(name) {
            self.push(
                Vec::new(),
                Class::Mutating,
                format!(
                    "expands the variable named by the value of {name} (${{!{name}}}); a name \
                     from outside can run commands (a[$(cmd)])"
                ),
            );
        }
    }

    /// An array subscript anywhere (`${a[i]}`, `a[i]=1`, `${#a[i]}`): bash evaluates the
    /// index of an indexed array as arithmetic; associative arrays (`declare -A`) take it as
    /// a string.
    pub(crate) fn subscript(&mut self, node: Node, src: &str) {
        let name = node
            .child_by_field_name("name")
            .map(|n| text(n, src))
            .unwrap_or("");
        let Some(index) = node.child_by_field_name("index") else {
            return;
        };
        if matches!(text(index, src), "@" | "*") || self.assoc_vars.contains(name) {
            return;
        }
        self.arithmetic(index, src);
    }

    /// The `[index]=value` elements of a compound array assignment (`a=([y]=1)`).
    pub(crate) fn array_elements(&mut self, name: &str, array: Node, src: &str) {
        if self.assoc_vars.contains(name) {
            return;
        }
        for element in array.named_children(&mut array.walk()) {
            let t = text(element, src);
            if let Some(close) = t.strip_prefix('[').and_then(|_| closing_bracket(t))
                && t[close + 1..].starts_with(['=', '+'])
            {
                self.arithmetic_text(&t[1..close]);
            }
        }
    }
}

pub(crate) fn is_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The index of the `]` that closes the `[` `text` starts with.
fn closing_bracket(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `text` split at `sep` outside brackets and parentheses.
fn split_top_level(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth = depth.saturating_sub(1),
            _ if c == sep && depth == 0 => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// The variable names an arithmetic expression reads (assigned ones included: `x=y` reads y,
/// and `x` as a target is harmless only when plain).
pub(crate) fn identifiers(node: Node, src: &str, out: &mut Vec<String>) {
    // `i = y` (not `i += y`) only writes its left side.
    if node.kind() == "binary_expression"
        && node.child_by_field_name("operator").map(|o| text(o, src)) == Some("=")
        && let Some(left) = node.child_by_field_name("left")
        && left.kind() == "variable_name"
    {
        if let Some(right) = node.child_by_field_name("right") {
            identifiers(right, src, out);
        }
        return;
    }
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
pub(crate) fn scan_identifiers(source: &str, out: &mut Vec<String>) {
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
