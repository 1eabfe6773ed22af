//! What the store leaves out, fixed when the session starts: the workspace's `.gitignore`
//! files as they were then (read during the session's first scan, kept in the store so
//! `cairn undo` judges by the same rules), plus the store's own defaults (`.git`, dependency
//! and build directories, cairn's own `.cairn/`). A `.gitignore` written later (by the model:
//! `*`) changes nothing: it is recorded and listed like any file, and hides nothing.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Files larger than this are not recorded.
pub const MAX_FILE_BYTES: u64 = 5 * 1024 * 1024;

/// Dependency and build directories, skipped wherever they are.
pub const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    ".gradle",
    ".next",
    ".mypy_cache",
    ".pytest_cache",
];

const RULES_FILE: &str = "cairn-ignore.json";

#[derive(Debug, Default)]
pub(super) struct IgnoreRules {
    /// By directory (`""` for the top, else `a/b/`): its `.gitignore` and the matcher.
    by_dir: BTreeMap<Vec<u8>, (String, Gitignore)>,
    /// No more `.gitignore` files are read: the session's first scan is done.
    pub frozen: bool,
}

impl IgnoreRules {
    /// The rules a session started with, when the store kept them.
    pub fn load(git_dir: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(git_dir.join(RULES_FILE)).ok()?;
        let sources: Vec<(String, String)> = serde_json::from_str(&text).ok()?;
        let mut rules = IgnoreRules::default();
        for (dir, text) in sources {
            rules.add(dir.as_bytes(), &text);
        }
        rules.frozen = true;
        Some(rules)
    }

    pub fn save(&self, git_dir: &Path) -> std::io::Result<()> {
        let sources: Vec<(String, &String)> = self
            .by_dir
            .iter()
            .map(|(dir, (text, _))| (String::from_utf8_lossy(dir).into_owned(), text))
            .collect();
        let path = git_dir.join(RULES_FILE);
        let temp = path.with_extension("tmp");
        std::fs::write(&temp, serde_json::to_vec(&sources).unwrap_or_default())?;
        std::fs::rename(&temp, &path)
    }

    /// Adds the `.gitignore` of directory `dir` (read before the rules are frozen only).
    pub fn add(&mut self, dir: &[u8], text: &str) {
        if self.frozen {
            return;
        }
        let mut builder = GitignoreBuilder::new("");
        for line in text.lines() {
            // A line that does not parse is skipped, as git skips it.
            let _ = builder.add_line(None, line);
        }
        if let Ok(matcher) = builder.build() {
            self.by_dir
                .insert(dir.to_vec(), (text.to_string(), matcher));
        }
    }

    /// Whether `path` (relative, no trailing `/`) is left out, its parents being walked into
    /// (so not left out themselves).
    pub fn leaves_out(&self, path: &[u8], is_dir: bool) -> bool {
        let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
        if name == b".git" || (is_dir && SKIPPED_DIRS.iter().any(|d| d.as_bytes() == name)) {
            return true;
        }
        if path == b".cairn" {
            return true;
        }
        // The deepest `.gitignore` with a say decides (a `!` line re-includes).
        for (dir, (_, matcher)) in self.by_dir.iter().rev() {
            let Some(rel) = path.strip_prefix(dir.as_slice()) else {
                continue;
            };
            if !dir.is_empty() && !dir.ends_with(b"/") {
                continue;
            }
            let matched = matcher.matched(Path::new(OsStr::from_bytes(rel)), is_dir);
            if matched.is_ignore() {
                return true;
            }
            if matched.is_whitelist() {
                return false;
            }
        }
        false
    }

    /// Whether `path` or a directory above it is left out.
    pub fn leaves_out_with_parents(&self, path: &[u8], is_dir: bool) -> bool {
        let mut start = 0;
        while let Some(slash) = memchr::memchr(b'/', &path[start..]) {
            if self.leaves_out(&path[..start + slash], true) {
                return true;
            }
            start += slash + 1;
        }
        self.leaves_out(path, is_dir)
    }
}
