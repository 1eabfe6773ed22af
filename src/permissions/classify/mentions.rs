//! What an argument names by its spelling alone, for commands whose effect the classifier
//! cannot follow: a protected path named inside inline code or an editor command
//! (`python3 -c "open('.git/config','a')"`, `vim -c 'w ~/.bashrc'`), a secret store named
//! through a glob (`~/.config/cai*/*`) or through a directory above it (`grep -r k ~/.config`),
//! and `ps` printing other processes' environments.

/// Spellings that name a protected path when they appear anywhere in an argument of a
/// command that is not read-only: whatever the command does with them, it may write there.
const PROTECTED_MENTIONS: &[&str] = &[".git/config", ".git/hooks", ".config/fish/", ".ssh/"];

/// Why a word of a command that can write or run things names a protected path, or `None`.
pub(crate) fn mentions_protected(text: &str) -> Option<&'static str> {
    // Every spelling below has a dot; most words have none.
    if !text.contains('.') {
        return None;
    }
    if let Some(m) = PROTECTED_MENTIONS.iter().find(|m| text.contains(**m)) {
        return Some(m);
    }
    // A `.git` or project settings directory as a whole (`cp -r evil/.git .`, `unzip x -d
    // .cairn`, `cp -r x .claude`).
    let component = text
        .split(|c: char| c == '/' || c.is_whitespace() || "'\"=(),;<>|&:`".contains(c))
        .find_map(|c| {
            std::iter::once(".git")
                .chain(crate::dirs::PROJECT_SETTINGS.iter().copied())
                .find(|p| c == *p)
        });
    if component.is_some() {
        return component;
    }
    crate::fs::places::HOME_PROTECTED
        .iter()
        .filter(|name| !name.contains('/'))
        .find(|name| {
            text.match_indices(**name).any(|(at, _)| {
                let after = text[at + name.len()..].chars().next();
                // `.profile` but not `.profiles`; `~/.bashrc'` and `.bashrc")` still count.
                !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            })
        })
        .copied()
}

/// One path component of an argument, possibly a glob (`cai*`, `.[c]onfig`, `?ession*`),
/// analysed once so that matching it against many names stays cheap.
pub(crate) enum Component<'a> {
    Plain(&'a str),
    Glob(&'a str),
    /// `.*` and `*` alone are too common in regular expressions (`s/.*/x/`) to count.
    Never,
}

impl<'a> Component<'a> {
    pub(crate) fn new(pattern: &'a str) -> Self {
        if !pattern.contains(['*', '?', '[']) {
            return Component::Plain(pattern);
        }
        let literal = pattern
            .split(['*', '?', '[', ']'])
            .any(|piece| piece.chars().any(|c| c.is_ascii_alphanumeric()));
        if literal {
            Component::Glob(pattern)
        } else {
            Component::Never
        }
    }

    /// Whether it could name a listed store component, which may be a glob itself
    /// (`credentials*`). Leading dots are matched like any character: `dotglob` may be on.
    pub(crate) fn matches_listed(&self, listed: &str) -> bool {
        match self {
            Component::Plain(p) | Component::Glob(p) => {
                crate::secret_stores::component_matches(p, listed)
            }
            Component::Never => false,
        }
    }
}

/// Why reading `path` exposes another process's secrets (its environment, memory or
/// arguments, where API keys live), or `None`.
pub(crate) fn reads_secrets(path: &str) -> Option<String> {
    if matches!(path, "/dev/mem" | "/dev/kmem" | "/dev/port") {
        return Some(format!("reads the machine's memory ({path})"));
    }
    let rest = path.split_once("/proc/")?.1;
    let own = rest.starts_with("self/") || rest.starts_with("thread-self/");
    let leaf = rest.rsplit('/').next().unwrap_or(rest);
    let secret = match leaf {
        "environ" | "mem" => true,
        "cmdline" | "maps" | "auxv" | "stack" | "syscall" => !own,
        _ => false,
    };
    secret.then(|| {
        format!("reads a process's environment, memory or arguments, where secrets live ({path})")
    })
}

#[cfg(test)]
fn component_matches(pattern: &str, name: &str) -> bool {
    Component::new(pattern).matches_listed(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_components_like_bash() {
        assert!(component_matches("cai*", "cairn"));
        assert!(component_matches("[c]airn", "cairn"));
        assert!(component_matches(".[a-z]onfig", ".config"));
        assert!(component_matches("?airn", "cairn"));
        assert!(!component_matches("[!c]airn", "cairn"));
        assert!(!component_matches("cain*", "cairn"));
        assert!(!component_matches("*", "cairn"));
        assert!(!component_matches(".*", ".ssh"));
    }

    #[test]
    fn protected_spellings_are_found_inside_code() {
        assert!(mentions_protected("open('.git/config','a')").is_some());
        assert!(mentions_protected("File.write(\".cairn/config.toml\")").is_some());
        assert!(mentions_protected("w! ~/.bashrc").is_some());
        assert!(mentions_protected("evil/.git").is_some());
        assert_eq!(mentions_protected(".gitignore"), None);
        assert_eq!(mentions_protected("x.profiles"), None);
        assert_eq!(mentions_protected("print(1)"), None);
    }
}
