//! The config a sandboxed command may leave in a repository it created (`git init`, a new
//! submodule's git dir): only keys that make git run nothing, re-written in a plain form git
//! reads exactly as written. Everything else (`core.fsmonitor`, `core.hooksPath`, aliases,
//! filters, `include.path`, …) is dropped. This never reads an existing repository's config:
//! that is put back byte for byte (see `protect`).

/// `(section, has a subsection, key)` kept, all lower case: `remote "origin"` has one.
const KEPT: &[(&str, bool, &str)] = &[
    ("core", false, "repositoryformatversion"),
    ("core", false, "filemode"),
    ("core", false, "bare"),
    ("core", false, "logallrefupdates"),
    ("core", false, "ignorecase"),
    ("core", false, "precomposeunicode"),
    ("core", false, "symlinks"),
    ("extensions", false, "objectformat"),
    ("extensions", false, "refstorage"),
    ("remote", true, "url"),
    ("remote", true, "fetch"),
    ("branch", true, "remote"),
    ("branch", true, "merge"),
    ("submodule", true, "url"),
    ("submodule", true, "active"),
];

/// One `key = value` of a config, as git would read it from the plain forms we accept.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ConfigEntry {
    section: String,
    subsection: Option<String>,
    key: String,
    value: String,
}

/// The harmless part of `text` in a plain form, and the names of what was dropped.
pub fn harmless(text: &str) -> (String, Vec<String>) {
    let mut kept: Vec<ConfigEntry> = Vec::new();
    let mut dropped = Vec::new();
    let mut section: Option<(String, Option<String>)> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if line.starts_with('[') {
            section = parse_section(line);
            if section.is_none() {
                dropped.push(format!("the line `{}`", cut(line)));
            }
            continue;
        }
        let Some((section, subsection)) = &section else {
            dropped.push(format!("the line `{}`", cut(line)));
            continue;
        };
        let (key, value) = match line.split_once('=') {
            Some((key, value)) => (key.trim().to_ascii_lowercase(), value.trim()),
            None => (line.to_ascii_lowercase(), "true"),
        };
        let name = match subsection {
            Some(sub) => format!("{section}.{sub}.{key}"),
            None => format!("{section}.{key}"),
        };
        let allowed = KEPT.iter().any(|(s, needs_sub, k)| {
            s == section && *needs_sub == subsection.is_some() && *k == key
        });
        if allowed && plain_value(value) && subsection.as_deref().is_none_or(plain_value) {
            kept.push(ConfigEntry {
                section: section.clone(),
                subsection: subsection.clone(),
                key,
                value: value.to_owned(),
            });
        } else {
            dropped.push(name);
        }
    }
    (render(&kept), dropped)
}

/// `[core]` or `[remote "origin"]`, lower-casing the section; None for anything else.
fn parse_section(line: &str) -> Option<(String, Option<String>)> {
    let inner = line.strip_prefix('[')?.strip_suffix(']')?;
    let (name, sub) = match inner.split_once(' ') {
        Some((name, rest)) => {
            let sub = rest.trim().strip_prefix('"')?.strip_suffix('"')?;
            (name, Some(sub.to_owned()))
        }
        None => (inner, None),
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return None;
    }
    Some((name.to_ascii_lowercase(), sub))
}

/// A value git reads the same whether quoted or not, and that no transport helper
/// (`ext::sh -c …`) or option (`--upload-pack=…`) hides in.
fn plain_value(value: &str) -> bool {
    !value.is_empty()
        && !value.starts_with('-')
        && !value.contains("::")
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/:@+~=*^%,-".contains(c))
}

fn render(entries: &[ConfigEntry]) -> String {
    let mut out = String::new();
    let mut current: Option<(&str, Option<&str>)> = None;
    for entry in entries {
        let this = (entry.section.as_str(), entry.subsection.as_deref());
        if current != Some(this) {
            match this.1 {
                Some(sub) => out.push_str(&format!("[{} \"{sub}\"]\n", this.0)),
                None => out.push_str(&format!("[{}]\n", this.0)),
            }
            current = Some(this);
        }
        out.push_str(&format!("\t{} = {}\n", entry.key, entry.value));
    }
    out
}

fn cut(line: &str) -> String {
    line.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_git_init_writes_stays_as_it_is() {
        let init = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";
        assert_eq!(harmless(init), (init.to_owned(), Vec::new()));
        let clone = "[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n";
        assert_eq!(harmless(clone), (clone.to_owned(), Vec::new()));
    }

    #[test]
    fn keys_that_run_code_are_dropped_in_every_spelling() {
        let planted = "[core]\n\tbare = false\n\tfsmonitor = touch PWNED\n[CORE]\n\tFsMonitor=x\n[core]hooksPath = h\n[include]\n\tpath = ../evil\n[alias]\n\tst = !sh\n[remote \"o\"]\n\turl = ext::sh -c touch% PWNED\n\tuploadpack = evil\n[core.x]\n\tbare = true\n[core]\n\tbare = false \\\n\tfsmonitor = y\n";
        let (clean, dropped) = harmless(planted);
        assert_eq!(clean, "[core]\n\tbare = false\n");
        for name in [
            "core.fsmonitor",
            "include.path",
            "alias.st",
            "remote.o.url",
            "remote.o.uploadpack",
        ] {
            assert!(dropped.iter().any(|d| d == name), "{name}: {dropped:?}");
        }
        assert!(!clean.contains("PWNED") && !clean.contains("evil"));
    }
}
