//! What a workspace-write command added to the protected set is removed after it: anything
//! not recorded inside a recorded directory (hooks, the project settings trees), a `.git`
//! file or link that was not there, and in a repository the command created, everything but
//! what `git init` writes (its config reduced to keys that run nothing).

use super::*;

impl ProtectedSet {
    /// Removes what the command added to the protected set; keeps what `git init` makes in a
    /// repository the command created.
    pub(super) fn remove_new(&self, done: &mut Vec<PutBack>) {
        // Inside recorded directories (hooks, .cairn): anything not recorded is new.
        let dirs: Vec<(&Path, bool)> = self
            .items
            .iter()
            .filter(|(_, item)| matches!(item.node, Node::Dir { .. }))
            .map(|(rel, item)| (Path::new(rel), item.owner.is_some()))
            .collect();
        for (dir, in_git) in dirs {
            if !is_real_dir(&self.workspace, dir) {
                continue;
            }
            // Only git skips `*.sample` hooks; `.claude/hooks/x.sample` runs if settings say so.
            let in_hooks = in_git && dir.components().any(|c| c.as_os_str() == "hooks");
            for (name, kind) in children(&self.abs(dir)) {
                let rel = dir.join(&name);
                if self.items.contains_key(rel.as_os_str()) {
                    continue;
                }
                if in_hooks && sample_named(&name, kind) {
                    continue;
                }
                if remove_any(&self.abs(&rel)) {
                    done.push(format!("{} (removed: new)", rel.display()));
                }
            }
        }
        // A `.cairn`, `.agents` or `.claude` the command made.
        for dir in crate::dirs::PROJECT_SETTINGS {
            let dir = Path::new(dir);
            if !self.items.contains_key(dir.as_os_str())
                && std::fs::symlink_metadata(self.abs(dir)).is_ok()
                && remove_any(&self.abs(dir))
            {
                done.push(format!("{} (removed: new)", dir.display()));
            }
        }
        // The top level of each git dir, recorded or new.
        if !is_real_dir(&self.workspace, Path::new(".git")) {
            return;
        }
        for dir in git_dirs(&self.workspace, Path::new(".git")) {
            let known = self.git_dirs.contains(&dir);
            for name in child_names(&self.abs(&dir)) {
                let rel = dir.join(&name);
                if self.items.contains_key(rel.as_os_str()) {
                    continue;
                }
                if name == "hooks" {
                    self.clean_new_hooks(&rel, done);
                } else if !protected_name(&name) {
                } else if !known && name == "config" {
                    self.clean_new_config(&rel, done);
                } else if !known && name == "commondir" && self.is_plain_commondir(&rel) {
                } else if remove_any(&self.abs(&rel)) {
                    done.push(format!("{} (removed: new)", rel.display()));
                }
            }
        }
    }

    /// A new `hooks` dir keeps only sample hooks.
    fn clean_new_hooks(&self, rel: &Path, done: &mut Vec<PutBack>) {
        let path = self.abs(rel);
        let is_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if !is_dir {
            if remove_any(&path) {
                done.push(format!("{} (removed: new)", rel.display()));
            }
            return;
        }
        for name in child_names(&path) {
            let child = path.join(&name);
            if !is_sample(&child) && remove_any(&child) {
                done.push(format!("{} (removed: new)", rel.join(name).display()));
            }
        }
    }

    /// The config of a repository the command created keeps only keys that run nothing.
    fn clean_new_config(&self, rel: &Path, done: &mut Vec<PutBack>) {
        let path = self.abs(rel);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return;
        };
        let text = if meta.is_file() && meta.len() <= MAX_CONTENT {
            std::fs::read(&path).ok()
        } else {
            None
        };
        let Some(text) = text else {
            if remove_any(&path) {
                done.push(format!("{} (removed: new)", rel.display()));
            }
            return;
        };
        let (clean, dropped) = gitconfig::harmless(&String::from_utf8_lossy(&text));
        if dropped.is_empty() && clean.as_bytes() == text.as_slice() {
            return;
        }
        let mode = meta.mode() & 0o777 & !0o111;
        match write_new(&path, clean.as_bytes(), mode) {
            Ok(()) => {
                let what = if dropped.is_empty() {
                    "rewritten".to_owned()
                } else {
                    format!("dropped {}", dropped.join(", "))
                };
                done.push(format!("{} (new repository: {what})", rel.display()));
            }
            Err(err) => tracing::warn!("cleaning {}: {err}", rel.display()),
        }
    }

    /// A new worktree's `commondir` that names the main repository, as `git worktree add`
    /// writes it.
    fn is_plain_commondir(&self, rel: &Path) -> bool {
        let path = self.abs(rel);
        std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() < 64)
            && std::fs::read_to_string(&path).is_ok_and(|text| text.trim() == "../..")
            && rel.starts_with(".git/worktrees")
            && rel.components().count() == 4
    }
}
