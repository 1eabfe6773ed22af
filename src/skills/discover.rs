//! Where skills and commands are found, and the walk that finds them.
//!
//! Project places, from the workspace up to its repository root (closest first): `.cairn/`,
//! `.agents/` and `.claude/` each with `skills/` (and `commands/` for commands). The user's:
//! `skills/` (`commands/`) in cairn's config directory, `~/.agents/skills`, `~/.claude/skills`
//! (`~/.claude/commands`). The first place holding a name wins (project before user).
//!
//! The walk never leaves its place through a symlink: a link is followed only when its target
//! stays inside the repository (project places) or inside the place itself (the user's), and
//! never into a secret store. A place that is itself a link is judged the same way.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::front_matter::{FrontMatter, split};
use super::{MAX_DESCRIPTION, SKILL_FILE, Skill, SkillScope, one_line, shorten, valid_name};
use crate::secret_stores::SecretStores;

/// A `SKILL.md` or command file larger than this is skipped: instructions, not data.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// How deep the walk goes below a place (skills grouped in folders).
const MAX_DEPTH: usize = 6;
/// Directories visited per place at most (a link farm or a huge tree stops here).
const MAX_DIRS: usize = 4096;

/// What discovery found, and what it skipped or doubted (one warning per problem, naming the
/// file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found<T> {
    pub items: Vec<T>,
    pub warnings: Vec<String>,
}

impl<T> Default for Found<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// Where to look: the workspace, the home directory and cairn's config directory.
#[derive(Debug, Clone)]
pub struct Sources {
    pub workspace: PathBuf,
    pub home: Option<PathBuf>,
    /// cairn's config directory (`skills/`, `commands/` inside).
    pub config_dir: Option<PathBuf>,
    pub secrets: SecretStores,
}

/// One place to look in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub path: PathBuf,
    pub scope: SkillScope,
    /// How people say it: `.cairn/skills`, `../.agents/skills`, `~/.claude/skills`.
    pub label: String,
}

impl Sources {
    /// From this process's environment: `$HOME`, `$CAIRN_CONFIG_DIR` or the platform's config
    /// directory, the default secret stores.
    #[cfg(any(test, feature = "testing"))]
    pub fn from_env(workspace: &Path) -> Self {
        Self::with_dirs(workspace, &crate::dirs::Dirs::from_env())
    }

    /// As `from_env`, with cairn's directories given.
    pub fn with_dirs(workspace: &Path, dirs: &crate::dirs::Dirs) -> Self {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        let config_dir = Some(dirs.config().to_path_buf()).filter(|d| d.is_absolute());
        Self {
            workspace: workspace.to_path_buf(),
            home,
            config_dir,
            secrets: SecretStores::new(&crate::secret_stores::known_homes(), &dirs.own()),
        }
    }

    /// Nothing but the workspace (tests, and runs that want no user places).
    pub fn workspace_only(workspace: &Path) -> Self {
        Self {
            workspace: workspace.to_path_buf(),
            home: None,
            config_dir: None,
            secrets: SecretStores::new(&[], &[]),
        }
    }

    /// The workspace and its parents up to the repository root (the nearest directory with a
    /// `.git`); the workspace alone outside a repository. Closest first.
    pub fn project_dirs(&self) -> Vec<PathBuf> {
        let workspace = real_or_same(&self.workspace);
        let mut dirs = Vec::new();
        for dir in workspace.ancestors() {
            dirs.push(dir.to_path_buf());
            if dir.join(".git").exists() {
                return dirs;
            }
        }
        vec![workspace]
    }

    /// Where the repository (or the workspace) ends: project links must stay inside it.
    fn project_bound(&self) -> PathBuf {
        self.project_dirs()
            .last()
            .cloned()
            .unwrap_or_else(|| real_or_same(&self.workspace))
    }

    /// The places for `kind` (`skills` or `commands`), in precedence order.
    pub fn places(&self, kind: &str) -> Vec<Place> {
        let workspace = real_or_same(&self.workspace);
        let mut places = Vec::new();
        for dir in self.project_dirs() {
            let up = up_label(&workspace, &dir);
            for hidden in [".cairn", ".agents", ".claude"] {
                places.push(Place {
                    path: dir.join(hidden).join(kind),
                    scope: SkillScope::Project,
                    label: format!("{up}{hidden}/{kind}"),
                });
            }
        }
        if let Some(config) = &self.config_dir {
            places.push(Place {
                path: config.join(kind),
                scope: SkillScope::User,
                label: format!("cairn config {kind}"),
            });
        }
        if let Some(home) = &self.home {
            let mut hidden = vec![".agents", ".claude"];
            if kind == "commands" {
                // `~/.agents/commands` is nobody's convention.
                hidden.retain(|h| *h == ".claude");
            }
            for h in hidden {
                places.push(Place {
                    path: home.join(h).join(kind),
                    scope: SkillScope::User,
                    label: format!("~/{h}/{kind}"),
                });
            }
        }
        places
    }

    /// The real path of `place` and the bound its links must stay within; `None` (with a
    /// warning when it exists but leads elsewhere) when it is not to be read.
    pub(super) fn open_place(&self, place: &Place, warnings: &mut Vec<String>) -> Option<Bound> {
        let real = std::fs::canonicalize(&place.path).ok()?;
        if !real.is_dir() {
            return None;
        }
        let within = match place.scope {
            SkillScope::Project => self.project_bound(),
            SkillScope::User => real.clone(),
        };
        let bound = Bound {
            secret_ok: self.secrets.store_at(&real).is_some(),
            within,
            secrets: self.secrets.clone(),
        };
        if !bound.admits(&real) {
            warnings.push(format!(
                "{} leads to {}, outside the repository or into a secret store; not read",
                place.path.display(),
                real.display()
            ));
            return None;
        }
        Some(bound)
    }
}

/// What a walk may enter.
pub(super) struct Bound {
    /// Links must resolve beneath this.
    within: PathBuf,
    secrets: SecretStores,
    /// The place itself lies in a secret store (cairn's own config directory): what is
    /// beneath it is not refused for that.
    secret_ok: bool,
}

impl Bound {
    fn admits(&self, real: &Path) -> bool {
        real.starts_with(&self.within) && (self.secret_ok || self.secrets.store_at(real).is_none())
    }
}

fn real_or_same(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `""` for the workspace, `../` for its parent, and so on.
fn up_label(workspace: &Path, dir: &Path) -> String {
    let depth = workspace
        .strip_prefix(dir)
        .map(|rest| rest.components().count())
        .unwrap_or(0);
    "../".repeat(depth)
}

/// Every valid skill of `sources`, in precedence order; a name already found is skipped with
/// a warning naming both files.
pub fn discover_skills(sources: &Sources) -> Found<Skill> {
    let mut found: Found<Skill> = Found::default();
    let mut seen_dirs: HashSet<PathBuf> = HashSet::new();
    for place in sources.places("skills") {
        let Some(bound) = sources.open_place(&place, &mut found.warnings) else {
            continue;
        };
        let Ok(root) = std::fs::canonicalize(&place.path) else {
            continue;
        };
        let mut dirs = Vec::new();
        let mut visited = HashSet::new();
        skill_dirs(
            &root,
            &bound,
            0,
            &mut visited,
            &mut dirs,
            &mut found.warnings,
        );
        for dir in dirs {
            // The same directory through two places (`.claude/skills` linked to
            // `.agents/skills`) is one skill.
            if !seen_dirs.insert(dir.clone()) {
                continue;
            }
            match read_skill(&dir, &place, &bound) {
                Ok((skill, notes)) => {
                    found.warnings.extend(notes);
                    if let Some(first) = found.items.iter().find(|s| s.name == skill.name) {
                        found.warnings.push(format!(
                            "skill {}: the name `{}` is taken by {}; skipped",
                            skill.file.display(),
                            skill.name,
                            first.file.display()
                        ));
                        continue;
                    }
                    found.items.push(skill);
                }
                Err(problem) => found.warnings.push(problem),
            }
        }
    }
    found
}

/// The directories under `dir` that hold a `SKILL.md` (a skill's own subdirectories are its
/// files, not more skills).
fn skill_dirs(
    dir: &Path,
    bound: &Bound,
    depth: usize,
    visited: &mut HashSet<PathBuf>,
    out: &mut Vec<PathBuf>,
    warnings: &mut Vec<String>,
) {
    if visited.len() >= MAX_DIRS || !visited.insert(dir.to_path_buf()) {
        return;
    }
    if depth > 0 && dir.join(SKILL_FILE).exists() {
        out.push(dir.to_path_buf());
        return;
    }
    if depth >= MAX_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        let real = if kind.is_symlink() {
            let Ok(real) = std::fs::canonicalize(&path) else {
                continue;
            };
            if !real.is_dir() {
                continue;
            }
            if !bound.admits(&real) {
                warnings.push(format!(
                    "{} links to {}, outside the repository or into a secret store; not followed",
                    path.display(),
                    real.display()
                ));
                continue;
            }
            real
        } else if kind.is_dir() {
            path
        } else {
            continue;
        };
        skill_dirs(&real, bound, depth + 1, visited, out, warnings);
    }
}

/// Reads `path` (a regular file within `bound`, at most `MAX_FILE_BYTES`) as text.
pub(super) fn read_bounded(path: &Path, bound: &Bound) -> Result<(Vec<u8>, PathBuf), String> {
    let real = std::fs::canonicalize(path).map_err(|err| format!("cannot be read ({err})"))?;
    if !bound.admits(&real) {
        return Err(format!(
            "links to {}, outside the repository or into a secret store",
            real.display()
        ));
    }
    let meta = std::fs::metadata(&real).map_err(|err| format!("cannot be read ({err})"))?;
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "is {} bytes, more than the {MAX_FILE_BYTES} a skill or command may have",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&real)
        .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|err| format!("cannot be read ({err})"))?;
    Ok((bytes, real))
}

/// One skill, with the warnings it deserves (a bad name, a long description); `Err` says why
/// it is skipped.
fn read_skill(dir: &Path, place: &Place, bound: &Bound) -> Result<(Skill, Vec<String>), String> {
    let path = dir.join(SKILL_FILE);
    let shown = path.display().to_string();
    let (bytes, file) =
        read_bounded(&path, bound).map_err(|why| format!("skill {shown} {why}; skipped"))?;
    let text = String::from_utf8(bytes.clone())
        .map_err(|_| format!("skill {shown} is not UTF-8 text; skipped"))?;
    let (front, body) = split(&text).map_err(|err| format!("skill {shown}: {err}; skipped"))?;
    let front: FrontMatter = front.ok_or_else(|| {
        format!(
            "skill {shown}: no front matter (a `---` block with `name` and `description`); skipped"
        )
    })?;
    let mut notes = Vec::new();
    if front.repaired {
        notes.push(format!(
            "skill {shown}: a front matter value holds `: ` without quotes (invalid YAML); it was read as if quoted: quote it"
        ));
    }
    let dir_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let description = one_line(front.description.as_deref().unwrap_or(""));
    if description.is_empty() {
        return Err(format!(
            "skill {shown}: no `description` (required: it tells the model when to use the skill); skipped"
        ));
    }
    let name = match front.name.as_deref().map(str::trim) {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => {
            notes.push(format!(
                "skill {shown}: no `name`; it is called `{dir_name}` after its directory"
            ));
            dir_name.clone()
        }
    };
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "skill {shown}: the name `{}` holds spaces or control characters (use lowercase letters, digits and hyphens); skipped",
            one_line(&name)
        ));
    }
    if !valid_name(&name) {
        notes.push(format!(
            "skill {shown}: the name `{name}` breaks the naming rule (1-64 lowercase letters, digits and single hyphens); it is used as written"
        ));
    } else if name != dir_name {
        notes.push(format!(
            "skill {shown}: the name `{name}` differs from its directory `{dir_name}`; `{name}` is used"
        ));
    }
    if description.chars().count() > MAX_DESCRIPTION {
        notes.push(format!(
            "skill {shown}: the description is longer than {MAX_DESCRIPTION} characters; it is cut"
        ));
    }
    Ok((
        Skill {
            name,
            description: shorten(&description, MAX_DESCRIPTION),
            dir: dir.to_path_buf(),
            file,
            scope: place.scope,
            origin: place.label.clone(),
            body: body.trim().to_string(),
            argument_hint: front.argument_hint.map(|h| one_line(&h)),
            model_invocable: !front.disable_model_invocation.unwrap_or(false),
            user_invocable: front.user_invocable.unwrap_or(true),
            allowed_tools: front.allowed_tools.map(|a| a.entries()).unwrap_or_default(),
        },
        notes,
    ))
}
