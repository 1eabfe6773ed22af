//! Custom commands: Markdown files under the `commands/` places (`.cairn/commands/**/*.md`,
//! `.claude/commands`, the config directory's `commands/`, `~/.claude/commands`) become
//! `/name`, `/dir:name` for one in a subdirectory; every skill a user may invoke is one too.
//! Front matter `description` and `argument-hint` are what the `/` palette shows; in the body
//! `$ARGUMENTS` is replaced by the whole argument text and `$1`…`$9` by its words.
//!
//! A project command shadows the user's of the same name (marked); no command shadows a
//! built-in one (a clash is skipped with a warning). The set is read from disk each time
//! it is used (the palette opening, a command being run), so edits apply without a restart.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::discover::{Bound, Found, Place, Sources, read_bounded};
use super::front_matter::split;
use super::{Skill, SkillScope, discover_skills, one_line, shorten};

/// The built-in slash commands (the TUI's; a test there checks the lists agree). User
/// commands never take these names.
pub const BUILT_IN: &[&str] = &[
    "new", "resume", "mode", "model", "diff", "diffs", "compact", "continue", "undo", "redo",
    "rewind", "cost", "help", "quit", "exit", "skills", "jobs", "init", "retry", "lsp",
];

/// Files per place at most.
const MAX_COMMANDS: usize = 1000;
/// Longest description shown when the file has none (its first line).
const FIRST_LINE_CHARS: usize = 80;

/// One `/name` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashCommand {
    /// Without the `/`: `review`, `git:commit`.
    pub name: String,
    pub description: String,
    pub argument_hint: String,
    pub scope: SkillScope,
    /// Where it was found (`.cairn/commands`, `~/.claude/skills`, …).
    pub origin: String,
    /// A project command that hides a user one of the same name.
    pub shadows_user: bool,
    pub source: Source,
}

/// What a command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A command file: its body is the template.
    File { path: PathBuf, body: String },
    /// A skill invoked by the user.
    Skill(Box<Skill>),
}

/// Every command of `sources`: command files and user-invocable skills, project first.
pub fn discover_commands(sources: &Sources) -> Found<SlashCommand> {
    let mut found: Found<SlashCommand> = Found::default();
    let files = command_files(sources, &mut found.warnings);
    let skills = discover_skills(sources);
    found.warnings.extend(skills.warnings);
    let skills = skills
        .items
        .into_iter()
        .filter(|s| s.user_invocable)
        .map(|skill| SlashCommand {
            name: skill.name.clone(),
            description: skill.description.clone(),
            argument_hint: skill.argument_hint.clone().unwrap_or_default(),
            scope: skill.scope,
            origin: skill.origin.clone(),
            shadows_user: false,
            source: Source::Skill(Box::new(skill)),
        });
    // Project before user; within a scope, command files before skills.
    let (project_files, user_files): (Vec<_>, Vec<_>) = files
        .into_iter()
        .partition(|c| c.scope == SkillScope::Project);
    let (project_skills, user_skills): (Vec<_>, Vec<_>) =
        skills.partition(|c| c.scope == SkillScope::Project);
    let ordered = project_files
        .into_iter()
        .chain(project_skills)
        .chain(user_files)
        .chain(user_skills);
    for command in ordered {
        if BUILT_IN.contains(&command.name.as_str()) {
            found.warnings.push(format!(
                "command /{} ({}) has the name of a built-in command; skipped",
                command.name,
                command.where_from()
            ));
            continue;
        }
        match found.items.iter_mut().find(|c| c.name == command.name) {
            Some(first)
                if first.scope == SkillScope::Project && command.scope == SkillScope::User =>
            {
                first.shadows_user = true;
            }
            Some(first) => {
                // The same skill reached as a skill and a command file is no clash worth
                // a word only when both are one file; otherwise say which one wins.
                found.warnings.push(format!(
                    "command /{} ({}) is also defined by {}; the latter is used",
                    command.name,
                    command.where_from(),
                    first.where_from()
                ));
            }
            None => found.items.push(command),
        }
    }
    found
}

impl SlashCommand {
    /// The file it comes from, for warnings.
    pub fn where_from(&self) -> String {
        match &self.source {
            Source::File { path, .. } => path.display().to_string(),
            Source::Skill(skill) => skill.file.display().to_string(),
        }
    }

    /// How the palette shows its origin: `project`, `user`, `project, shadows user`.
    pub fn origin_label(&self) -> String {
        let kind = match self.source {
            Source::File { .. } => "",
            Source::Skill(_) => " skill",
        };
        let shadow = if self.shadows_user {
            ", shadows user's"
        } else {
            ""
        };
        format!("{}{kind}{shadow}", self.scope.as_str())
    }
}

/// The command files of every `commands/` place.
fn command_files(sources: &Sources, warnings: &mut Vec<String>) -> Vec<SlashCommand> {
    let mut out = Vec::new();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    for place in sources.places("commands") {
        let Some(bound) = sources.open_place(&place, warnings) else {
            continue;
        };
        let Ok(root) = std::fs::canonicalize(&place.path) else {
            continue;
        };
        let mut files = Vec::new();
        markdown_files(&root, &root, 0, &mut files);
        for (relative, path) in files.into_iter().take(MAX_COMMANDS) {
            if !seen.insert(path.clone()) {
                continue;
            }
            match read_command(&relative, &path, &place, &bound) {
                Ok(command) => out.push(command),
                Err(problem) => warnings.push(problem),
            }
        }
    }
    out
}

/// `.md` files under `dir` (not through links; hidden entries skipped), with their path
/// relative to the place.
fn markdown_files(root: &Path, dir: &Path, depth: usize, out: &mut Vec<(PathBuf, PathBuf)>) {
    const MAX_DEPTH: usize = 4;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.len() >= MAX_COMMANDS || entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() && depth < MAX_DEPTH {
            markdown_files(root, &path, depth + 1, out);
        } else if (kind.is_file() || kind.is_symlink())
            && path.extension().is_some_and(|e| e == "md")
            && let Ok(relative) = path.strip_prefix(root)
        {
            out.push((relative.to_path_buf(), path.clone()));
        }
    }
}

fn read_command(
    relative: &Path,
    path: &Path,
    place: &Place,
    bound: &Bound,
) -> Result<SlashCommand, String> {
    let shown = path.display().to_string();
    let name = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(":");
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "command {shown}: its name `/{}` holds spaces or control characters; skipped",
            one_line(&name)
        ));
    }
    let (bytes, real) =
        read_bounded(path, bound).map_err(|why| format!("command {shown} {why}; skipped"))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("command {shown} is not UTF-8 text; skipped"))?;
    let (front, body) = split(&text).map_err(|err| format!("command {shown}: {err}; skipped"))?;
    let front = front.unwrap_or_default();
    let body = body.trim().to_string();
    let description = match front.description.as_deref().map(one_line) {
        Some(d) if !d.is_empty() => d,
        _ => shorten(
            &one_line(body.lines().find(|l| !l.trim().is_empty()).unwrap_or("")),
            FIRST_LINE_CHARS,
        ),
    };
    Ok(SlashCommand {
        name,
        description: shorten(&description, super::MAX_DESCRIPTION),
        argument_hint: front
            .argument_hint
            .map(|h| one_line(&h))
            .unwrap_or_default(),
        scope: place.scope,
        origin: place.label.clone(),
        shadows_user: false,
        source: Source::File { path: real, body },
    })
}

/// A typed `/name args` line: the name (without `/`) and the argument text; `None` when the
/// line is no command invocation.
pub fn parse_invocation(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_start();
    let rest = line.strip_prefix('/')?;
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(at) => (&rest[..at], rest[at..].trim()),
        None => (rest, ""),
    };
    (!name.is_empty() && !name.contains('/')).then_some((name, args))
}

/// The words of an argument text: split on whitespace, with `"…"` and `'…'` grouping.
pub fn words(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            (None, c) => {
                current.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(current);
    }
    out
}

/// The template with `$ARGUMENTS` and `$1`…`$9` replaced (a missing word is empty). A
/// template that uses none of them gets the arguments appended, so they are never lost.
pub fn expand(template: &str, args: &str) -> String {
    let positional = words(args);
    let mut out = String::with_capacity(template.len() + args.len());
    let mut used = false;
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
        } else if let Some(digit) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
            let index = digit as usize - '1' as usize;
            out.push_str(positional.get(index).map_or("", String::as_str));
            used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !args.is_empty() {
        out.push_str("\n\nArguments: ");
        out.push_str(args);
    }
    out
}
