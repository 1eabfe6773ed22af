//! The prefix "approve for the session" (`a`) and "always allow in this project" (`p`)
//! offer: precise enough that the rule it becomes covers what the user saw and not more
//! (`python3 -m pytest`, not `python3`; `cat README.md`, not `cat`), and quoted so that it
//! parses back to the same words.

use crate::permissions::classify::CommandPart;

/// What "approve this prefix for the session" offers for `command`: the precise prefix of
/// the first simple command that is not read-only (so `cd x && cargo test` offers
/// `cargo test`). See `part_prefix`. (The gate offers `part_prefix` of the part it asks for;
/// this is how tests name what it offers for a whole command line.)
#[cfg(any(test, feature = "testing"))]
pub fn suggested_prefix(command: &str) -> String {
    use crate::permissions::classify::{Class, analyze};
    let analysis = analyze(command, std::path::Path::new("."));
    let part = analysis
        .parts
        .iter()
        .filter(|p| !p.words.is_empty())
        .find(|p| p.class != Class::ReadOnly)
        .or_else(|| analysis.parts.iter().find(|p| !p.words.is_empty()));
    match part {
        Some(part) => part_prefix(part),
        None => command.trim().to_string(),
    }
}

/// Tools whose first word is a subcommand (`cargo test`), and how many more words name
/// what runs after a script runner (`npm run build`, `uv run pytest`).
const SUBCOMMAND_TOOLS: &[&str] = &[
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "uv",
    "poetry",
    "pipenv",
    "pdm",
    "hatch",
    "go",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "terraform",
    "tofu",
    "pip",
    "pip3",
    "rustup",
    "gh",
    "dotnet",
    "mvn",
    "gradle",
    "./gradlew",
    "just",
    "task",
    "deno",
    "nix",
    "brew",
    "apt",
    "apt-get",
    "dnf",
    "systemctl",
    "mix",
    "rake",
    "bundle",
    "composer",
    "swift",
    "zig",
    "stack",
    "cabal",
    "opam",
    "dune",
    "flutter",
    "dart",
    "nx",
    "turbo",
    "lerna",
    "rails",
    "php",
];

/// The precise prefix a rule for this part should have: a tool and its subcommand
/// (`cargo test`, `npm run build`, `git -C sub push`), an interpreter and what it runs
/// (`python3 -m pytest`, `python3 script.py`), and for everything else the whole command
/// (`cat README.md`, `rm notes.txt`): never a bare program that would cover any use of it.
pub fn part_prefix(part: &CommandPart) -> String {
    let words = &part.words;
    let Some(program) = words.first() else {
        return String::new();
    };
    if program == "git" {
        let stripped = without_git_globals(words);
        let globals = words.len() - stripped.len();
        return match stripped.get(1) {
            Some(sub) if is_subcommand(sub) => join_words(&words[..globals + 2]),
            _ => join_words(words),
        };
    }
    let name = program.rsplit('/').next().unwrap_or(program);
    if crate::permissions::classify::commands::is_interpreter(name)
        || crate::permissions::classify::commands::is_shell(name)
    {
        return interpreter_prefix(words);
    }
    if matches!(name, "npx" | "pnpx" | "bunx") {
        return join_words(&words[..words.len().min(2)]);
    }
    if !SUBCOMMAND_TOOLS.contains(&program.as_str()) {
        return join_words(words);
    }
    let takes_script = matches!(
        name,
        "npm" | "pnpm" | "yarn" | "bun" | "uv" | "poetry" | "pipenv" | "pdm" | "hatch"
    );
    let mut prefix = vec![program.clone()];
    for word in words.iter().skip(1).take(if takes_script { 2 } else { 1 }) {
        if !is_subcommand(word) {
            break;
        }
        let script_runner = matches!(word.as_str(), "run" | "run-script" | "exec" | "x");
        prefix.push(word.clone());
        if !(takes_script && script_runner) {
            break;
        }
    }
    if prefix.len() == 1 {
        return join_words(words);
    }
    join_words(&prefix)
}

/// `python3 -m pytest`, `python3 script.py`, `bash scripts/build.sh`; inline code whole.
fn interpreter_prefix(words: &[String]) -> String {
    let mut i = 1;
    while i < words.len() {
        let w = words[i].as_str();
        if w == "-m" {
            return join_words(&words[..(i + 2).min(words.len())]);
        }
        if w.starts_with('-') {
            if matches!(w, "-c" | "-e" | "--eval")
                || (!w.starts_with("--") && w.contains(['c', 'e']))
            {
                return join_words(words);
            }
            i += 1;
            continue;
        }
        return join_words(&words[..=i]);
    }
    join_words(words)
}

/// The exact words of a part, quoted so that they parse back to the same words.
pub fn exact_prefix(part: &CommandPart) -> String {
    join_words(&part.words)
}

fn is_subcommand(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with('-')
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'))
        && word.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
}

fn join_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Quotes a word for the shell when it needs it.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '-' | '_' | '.' | '/' | ':' | '=' | '+' | ',' | '@' | '%')
        });
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `git -C sub -c k=v push` as `git push`, for deny and ask rules.
pub(crate) fn without_git_globals(words: &[String]) -> Vec<String> {
    if words.first().is_none_or(|w| w != "git") {
        return words.to_vec();
    }
    let as_words: Vec<crate::permissions::classify::Word> = words[1..]
        .iter()
        .map(|w| crate::permissions::classify::Word::literal(w.clone()))
        .collect();
    match crate::permissions::classify::git::git_subcommand_index(&as_words) {
        Some(at) => std::iter::once(words[0].clone())
            .chain(words[at + 1..].iter().cloned())
            .collect(),
        None => words.to_vec(),
    }
}
