//! The remembered trust decisions: one `HASH KEY` line per process, the key one line of JSON
//! (kind, workspace, config, name). A later decision for the same key replaces the earlier.

use std::io::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub(super) struct Store {
    path: PathBuf,
}

impl Store {
    pub fn new(path: PathBuf) -> Self {
        Self { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn entries(&self) -> Vec<(String, String)> {
        std::fs::read_to_string(&self.path)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.split_once(' '))
            .map(|(hash, key)| (hash.to_string(), key.to_string()))
            .collect()
    }

    /// The hash last trusted for `key`.
    pub fn hash_for(&self, key: &str) -> Option<String> {
        self.entries()
            .into_iter()
            .find(|(_, k)| k == key)
            .map(|(hash, _)| hash)
    }

    /// Remembers `hash` for `key`, replacing an older one. Written whole to a temporary file
    /// and renamed over, so a reader never sees half a file.
    pub fn remember(&self, key: &str, hash: &str) -> std::io::Result<()> {
        let mut lines: Vec<String> = self
            .entries()
            .into_iter()
            .filter(|(_, k)| k != key)
            .map(|(h, k)| format!("{h} {k}"))
            .collect();
        lines.push(format!("{hash} {key}"));
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let temp = self
            .path
            .with_extension(format!("tmp-{}", std::process::id()));
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(format!("{}\n", lines.join("\n")).as_bytes())?;
        drop(file);
        std::fs::rename(&temp, &self.path)
    }
}
