//! What a variable's value holds, judged from its text alone: a plain name, text arithmetic
//! can use without evaluating anything, or a count (`$(… | wc -l)`). The builtins' judge asks
//! these before it treats a value as code.

/// A name bash accepts as a plain variable (no subscript that it would evaluate).
pub(super) fn is_identifier(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A value that arithmetic can use without evaluating anything: digits, words, simple text.
pub(super) fn is_plain(value: &str) -> bool {
    value.chars().all(|c| {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ',' | ':' | '/' | ' ' | '+')
    })
}

/// `"…"` around a whole word taken off (a quoted expansion is the same value).
pub(super) fn unquoted(value: &str) -> &str {
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .filter(|v| !v.contains('"'))
        .unwrap_or(value)
}

/// Whether `value` is one command substitution whose output is counts only: a pipeline that
/// ends in `wc` with counting options and no file operand (`$(ls | wc -l)`, `$(wc -c < f)`).
/// What the pipeline runs is judged where it is visited; this is only about its output.
pub(super) fn numeric_substitution(value: &str) -> bool {
    let value = unquoted(value);
    let Some(inner) = value.strip_prefix("$(").and_then(|r| r.strip_suffix(')')) else {
        return false;
    };
    // One pipeline, its output only: no list, no second command, no stderr in the output.
    if inner.starts_with('(') || inner.contains([';', '&', '\n', '`', '>']) || inner.contains("||")
    {
        return false;
    }
    let Some(last) = inner.rsplit('|').next() else {
        return false;
    };
    let mut words = last.split_whitespace();
    if words.next() != Some("wc") {
        return false;
    }
    let mut redirect_target = false;
    for word in words {
        if redirect_target {
            redirect_target = false;
        } else if word == "<" {
            redirect_target = true;
        } else if word.starts_with('<') {
            // `<file` (a here-string's words would not pass as options).
            if word.starts_with("<<") {
                return false;
            }
        } else if !counting_option(word) {
            return false;
        }
    }
    !redirect_target
}

fn counting_option(word: &str) -> bool {
    match word.strip_prefix("--") {
        Some(long) => matches!(
            long,
            "lines" | "bytes" | "chars" | "words" | "max-line-length"
        ),
        None => word
            .strip_prefix('-')
            .is_some_and(|short| !short.is_empty() && short.chars().all(|c| "lcwmL".contains(c))),
    }
}
