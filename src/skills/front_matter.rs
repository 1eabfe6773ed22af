//! The YAML front matter of `SKILL.md` and command files: `---` on the first line, the YAML,
//! `---` on a line of its own, then the body. Parsed with `serde-saphyr` (maintained, and
//! panic-free on hostile input: repositories ship these files). Unknown keys are ignored, so
//! files written for other agents (`license`, `metadata`, `model`, …) load unchanged.

use serde::Deserialize;

/// The keys cairn reads. Every one is optional here; what is required is checked by the caller,
/// which knows whether it reads a skill or a command.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct FrontMatter {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub argument_hint: Option<String>,
    #[serde(default)]
    pub disable_model_invocation: Option<bool>,
    /// Claude Code's `user-invocable: false`: the skill is not a `/name` command.
    #[serde(default)]
    pub user_invocable: Option<bool>,
    #[serde(default)]
    pub allowed_tools: Option<AllowedTools>,
    /// The YAML was read only after quoting plain values holding `: ` (invalid YAML that
    /// people write often: `description: Use when: …`); the caller warns.
    #[serde(skip)]
    pub repaired: bool,
}

/// `allowed-tools` as a string (`"Bash(git:*) Read"`, comma or space separated) or a list.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum AllowedTools {
    One(String),
    Many(Vec<String>),
}

impl AllowedTools {
    /// The entries, split where a string lists several (commas and spaces outside
    /// parentheses: `Bash(git add:*), Read` is two).
    pub fn entries(&self) -> Vec<String> {
        match self {
            AllowedTools::One(text) => split_outside_parens(text),
            AllowedTools::Many(items) => {
                items.iter().flat_map(|i| split_outside_parens(i)).collect()
            }
        }
    }
}

fn split_outside_parens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' | ' ' | '\t' | '\n' if depth == 0 => {
                if !current.trim().is_empty() {
                    out.push(current.trim().to_string());
                }
                current.clear();
            }
            _ => current.push(c),
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_string());
    }
    out
}

/// Why a file's front matter cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontMatterError {
    #[error("no front matter: the file must start with a `---` line, the YAML keys, and `---`")]
    Missing,
    #[error("the front matter has no closing `---` line")]
    Unclosed,
    #[error("the front matter is not valid YAML: {0}")]
    Yaml(String),
}

/// Splits `text` into its front matter and body. A file without front matter is all body
/// (`Ok((None, text))`); an opened but unclosed or invalid block is an error.
pub fn split(text: &str) -> Result<(Option<FrontMatter>, &str), FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok((None, text));
    };
    let (yaml, body) = closing(rest).ok_or(FrontMatterError::Unclosed)?;
    if yaml.trim().is_empty() {
        return Ok((Some(FrontMatter::default()), body));
    }
    let front: FrontMatter = match serde_saphyr::from_str(yaml) {
        Ok(front) => front,
        Err(err) => {
            let repaired = quote_plain_colons(yaml);
            match serde_saphyr::from_str::<FrontMatter>(&repaired) {
                Ok(front) if repaired != yaml => FrontMatter {
                    repaired: true,
                    ..front
                },
                _ => {
                    // The first line says what is wrong; the rest is a rendered snippet.
                    let message = err.to_string();
                    return Err(FrontMatterError::Yaml(
                        message.lines().next().unwrap_or("").trim().to_string(),
                    ));
                }
            }
        }
    };
    Ok((Some(front), body))
}

/// Splits `text` into front matter of the caller's own keys (`T`) and body, as `split` does
/// (a file without front matter is all body). Agent definitions read theirs with it.
pub fn split_as<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<(Option<T>, &str), FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok((None, text));
    };
    let (yaml, body) = closing(rest).ok_or(FrontMatterError::Unclosed)?;
    let yaml = quote_plain_colons(yaml);
    let yaml = if yaml.trim().is_empty() { "{}" } else { &yaml };
    match serde_saphyr::from_str::<T>(yaml) {
        Ok(front) => Ok((Some(front), body)),
        Err(err) => {
            let message = err.to_string();
            Err(FrontMatterError::Yaml(
                message.lines().next().unwrap_or("").trim().to_string(),
            ))
        }
    }
}

/// Top-level `key: value` lines whose plain value holds `: ` get the value double-quoted.
fn quote_plain_colons(yaml: &str) -> String {
    let mut out = String::with_capacity(yaml.len() + 16);
    for line in yaml.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let ending = &line[content.len()..];
        let fixed = content.split_once(": ").and_then(|(key, value)| {
            let plain_key = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            let value = value.trim();
            let plain_value = !value.is_empty()
                && !value.starts_with(['"', '\'', '[', '{', '|', '>', '&', '*', '!', '#']);
            (plain_key && plain_value && value.contains(": ")).then(|| {
                let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
                format!("{key}: \"{escaped}\"")
            })
        });
        out.push_str(fixed.as_deref().unwrap_or(content));
        out.push_str(ending);
    }
    out
}

/// The YAML before the closing `---` line and the body after it.
fn closing(rest: &str) -> Option<(&str, &str)> {
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == "---" {
            return Some((&rest[..at], &rest[at + line.len()..]));
        }
        at += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn keys_are_read_and_unknown_ones_ignored() {
        let text = "---\nname: release\ndescription: \"Cut a release: tag, notes\"\nlicense: MIT\nargument-hint: \"[version]\"\nallowed-tools: Bash(git tag:*), Read\nmetadata:\n  owner: x\n---\n# Body\n";
        let (front, body) = split(text).unwrap();
        let front = front.unwrap();
        assert_eq!(front.name.as_deref(), Some("release"));
        assert_eq!(
            front.description.as_deref(),
            Some("Cut a release: tag, notes")
        );
        assert_eq!(front.argument_hint.as_deref(), Some("[version]"));
        assert_eq!(
            front.allowed_tools.unwrap().entries(),
            ["Bash(git tag:*)", "Read"]
        );
        assert_eq!(body, "# Body\n");
    }

    #[test]
    fn lists_crlf_and_no_front_matter() {
        let text =
            "---\r\nname: a\r\nallowed-tools:\r\n  - Bash(npm run test)\r\n  - Edit\r\n---\r\nbody";
        let (front, body) = split(text).unwrap();
        assert_eq!(
            front.unwrap().allowed_tools.unwrap().entries(),
            ["Bash(npm run test)", "Edit"]
        );
        assert_eq!(body, "body");
        assert_eq!(split("just text").unwrap(), (None, "just text"));
    }

    #[test]
    fn a_plain_value_with_a_colon_is_read_as_if_quoted() {
        let text = "---\nname: a\ndescription: Use when: the user says \"ship it\"\n---\nbody";
        let front = split(text).unwrap().0.unwrap();
        assert_eq!(
            front.description.as_deref(),
            Some("Use when: the user says \"ship it\"")
        );
        assert!(front.repaired);
        assert!(
            !split("---\ndescription: fine\n---\n")
                .unwrap()
                .0
                .unwrap()
                .repaired
        );
    }

    #[test]
    fn broken_front_matter_says_what_is_wrong() {
        assert_eq!(split("---\nname: a\n"), Err(FrontMatterError::Unclosed));
        let err = split("---\nname: [a\n---\n").unwrap_err();
        assert!(matches!(err, FrontMatterError::Yaml(_)), "{err:?}");
        let err = split("---\ndescription: [1, 2]\n---\n").unwrap_err();
        assert!(matches!(err, FrontMatterError::Yaml(_)), "{err:?}");
        // An alias bomb is refused by the parser's budget, not expanded.
        let bomb = "---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\ndescription: x\n---\n";
        let _ = split(bomb);
    }
}
