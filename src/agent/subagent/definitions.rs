//! Agent definitions: what a `subagent` call may name as its `agent`. The built-in `explore`,
//! then the user's (`agents/*.md` in cairn's config directory), then the project's
//! (`.cairn/agents/*.md`); a later one of the same name replaces an earlier one. A file's front
//! matter gives `name`, `description`, `tools`, `max_steps` and `model`; its body is the
//! child's system prompt.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::skills::front_matter::{self, AllowedTools};

/// The agent of a call that names none: the parent's tools (less `subagent` at the depth
/// limit), the standard system prompt.
pub const DEFAULT_AGENT: &str = "general";

/// The built-in read-only agent.
pub const EXPLORE: &str = "explore";

/// The tools `explore` has: reading, searching, and commands judged read-only.
const EXPLORE_TOOLS: &[&str] = &["read_file", "list_dir", "glob", "grep", "bash"];

const EXPLORE_PROMPT: &str = "You are explore, a read-only subagent of cairn, a coding agent. \
You were given one question about the codebase in the working directory. Find the answer by \
reading files (read_file, list_dir, glob, grep) and running read-only commands (bash: ls, \
rg, git log, ...). You cannot change anything: writes are not offered, and a command that is \
not judged read-only is refused. Be quick and focused. Your last message is handed to the \
agent that asked, so make it the answer itself: short, concrete, with the paths and line \
numbers that matter; no file dumps.";

/// One agent a `subagent` call may name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDef {
    pub name: String,
    pub description: String,
    /// The tools it is offered (None: the parent's).
    pub tools: Option<Vec<String>>,
    pub max_steps: Option<u32>,
    pub model: Option<String>,
    /// Its system prompt (None: the standard one).
    pub prompt: Option<String>,
    /// Everything it runs is judged read-only first (`explore`).
    pub read_only: bool,
    /// Where it was defined (None: built in).
    pub source: Option<PathBuf>,
}

impl AgentDef {
    fn general() -> Self {
        Self {
            name: DEFAULT_AGENT.into(),
            description: "the parent's tools (default)".into(),
            tools: None,
            max_steps: None,
            model: None,
            prompt: None,
            read_only: false,
            source: None,
        }
    }

    fn explore() -> Self {
        Self {
            name: EXPLORE.into(),
            description: "read-only search of the codebase".into(),
            tools: Some(EXPLORE_TOOLS.iter().map(|t| t.to_string()).collect()),
            max_steps: None,
            model: None,
            prompt: Some(EXPLORE_PROMPT.into()),
            read_only: true,
            source: None,
        }
    }

    /// Whether the agent is offered `tool`.
    pub fn offers(&self, tool: &str) -> bool {
        self.tools
            .as_ref()
            .is_none_or(|tools| tools.iter().any(|t| t == tool))
    }
}

/// The keys of an agent file's front matter (others are ignored, so files written for other
/// agents load).
#[derive(Debug, Default, Deserialize)]
struct AgentFrontMatter {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    tools: Option<AllowedTools>,
    #[serde(default, alias = "max-steps", alias = "maxTurns")]
    max_steps: Option<u32>,
    #[serde(default)]
    model: Option<String>,
}

/// The agents of a session, and what was wrong with the files that did not load.
#[derive(Debug, Clone)]
pub struct Definitions {
    agents: Vec<AgentDef>,
    pub warnings: Vec<String>,
}

impl Default for Definitions {
    fn default() -> Self {
        Self {
            agents: vec![AgentDef::general(), AgentDef::explore()],
            warnings: Vec::new(),
        }
    }
}

impl Definitions {
    /// The built-ins, then `user_dir`'s files, then `project_dir`'s (later names win).
    pub fn load(user_dir: &Path, project_dir: &Path) -> Self {
        let mut found = Self::default();
        for dir in [user_dir, project_dir] {
            for path in md_files(dir) {
                match read_def(&path) {
                    Ok(def) => found.put(def),
                    Err(why) => found
                        .warnings
                        .push(format!("agent definition {}: {why}", path.display())),
                }
            }
        }
        found
    }

    /// The agents of the workspace and cairn's config directory.
    pub fn for_workspace(workspace: &Path, dirs: &crate::dirs::Dirs) -> Self {
        Self::load(
            &dirs.config().join("agents"),
            &workspace.join(".cairn").join("agents"),
        )
    }

    fn put(&mut self, def: AgentDef) {
        match self.agents.iter_mut().find(|a| a.name == def.name) {
            Some(slot) => *slot = def,
            None => self.agents.push(def),
        }
    }

    /// The agent called `name` (None: the default), or the correctable error naming those
    /// there are.
    pub fn get(&self, name: Option<&str>) -> Result<&AgentDef, String> {
        let name = name.map(str::trim).filter(|n| !n.is_empty());
        let wanted = name.unwrap_or(DEFAULT_AGENT);
        self.agents
            .iter()
            .find(|a| a.name == wanted)
            .ok_or_else(|| {
                format!(
                    "no agent `{wanted}`; the agents are: {}",
                    self.names().join(", ")
                )
            })
    }

    pub fn names(&self) -> Vec<&str> {
        self.agents.iter().map(|a| a.name.as_str()).collect()
    }

    /// One line per agent, for the tool's description.
    pub fn listing(&self) -> String {
        self.agents
            .iter()
            .map(|a| format!("{}: {}", a.name, a.description))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn md_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && p.is_file())
        .collect();
    paths.sort();
    paths
}

/// Definitions are instructions, not documents: a larger file is refused.
const MAX_DEF_BYTES: u64 = 64 * 1024;

fn read_def(path: &Path) -> Result<AgentDef, String> {
    let size = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    if size > MAX_DEF_BYTES {
        return Err(format!("larger than {MAX_DEF_BYTES} bytes"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    parse(&text, path)
}

/// An agent from a file's text; its name defaults to the file's stem.
fn parse(text: &str, path: &Path) -> Result<AgentDef, String> {
    let (front, body) =
        front_matter::split_as::<AgentFrontMatter>(text).map_err(|e| e.to_string())?;
    let front = front.unwrap_or_default();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = front.name.unwrap_or(stem).trim().to_string();
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(format!(
            "the name `{name}` is not a plain name (letters, digits, - and _)"
        ));
    }
    let prompt = body.trim();
    Ok(AgentDef {
        description: front.description.unwrap_or_default().trim().to_string(),
        tools: front.tools.map(|t| t.entries()),
        max_steps: front.max_steps.filter(|n| *n > 0),
        model: front.model.filter(|m| !m.trim().is_empty()),
        prompt: (!prompt.is_empty()).then(|| prompt.to_string()),
        read_only: false,
        source: Some(path.to_path_buf()),
        name,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_project_file_defines_an_agent_and_replaces_a_user_one() {
        let user = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::write(
            user.path().join("reviewer.md"),
            "---\ndescription: old\n---\nold prompt\n",
        )
        .unwrap();
        std::fs::write(
            project.path().join("reviewer.md"),
            "---\nname: reviewer\ndescription: Reviews: the diff\ntools: read_file, grep\nmax_steps: 7\nmodel: small\n---\nReview it.\n",
        )
        .unwrap();
        std::fs::write(project.path().join("bad.md"), "---\nname: a b\n---\n").unwrap();
        let defs = Definitions::load(user.path(), project.path());
        let reviewer = defs.get(Some("reviewer")).unwrap();
        assert_eq!(reviewer.description, "Reviews: the diff");
        assert_eq!(
            reviewer.tools.as_deref(),
            Some(&["read_file".to_string(), "grep".to_string()][..])
        );
        assert_eq!(reviewer.max_steps, Some(7));
        assert_eq!(reviewer.model.as_deref(), Some("small"));
        assert_eq!(reviewer.prompt.as_deref(), Some("Review it."));
        assert!(reviewer.offers("grep") && !reviewer.offers("bash"));
        assert_eq!(defs.warnings.len(), 1, "{:?}", defs.warnings);
        assert_eq!(defs.get(None).unwrap().name, DEFAULT_AGENT);
        let explore = defs.get(Some("explore")).unwrap();
        assert!(explore.read_only && !explore.offers("write_file"));
        let err = defs.get(Some("nope")).unwrap_err();
        assert!(err.contains("explore") && err.contains("reviewer"), "{err}");
    }
}
