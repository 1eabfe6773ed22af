//! Grants that leave the secret stores out. Landlock grants by hierarchy and cannot subtract,
//! so a root that holds a store (`/`, `/home`, the home directory, `~/.config`, a writable
//! `/tmp` when the home lives under it) is never granted as a whole: it is split into its
//! entries, an entry that holds a store is split again, and the stores themselves are left
//! out. What is left out cannot be read through any spelling, glob or walk, since Landlock
//! checks the file reached, not the path written (`~/.*/id_rsa`, `/proc/self/root`…, `..`).
//!
//! The directories that were split keep the right to be listed (Landlock has no "this
//! directory but not below it"): `ls ~/.ssh` shows the names in a store, never what they hold.
//! Symlinks among the entries are not granted: a rule on a symlink would grant its target,
//! and the target is granted (or not) where it really lives. Entries created after the scan
//! were not granted and stay unreadable until the next command's sandbox is built.

use std::path::{Path, PathBuf};

use crate::secret_stores::SecretStores;

/// How one root is granted once the stores are taken out of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    /// Granted with all the rights asked for, everything beneath included.
    pub whole: Vec<PathBuf>,
    /// Directories above a store: split into their entries, granted only the right to list.
    pub split: Vec<PathBuf>,
}

/// Splits `root` (an existing path, resolved to its real path) around the stores.
pub fn split(root: &Path, stores: &SecretStores) -> Split {
    let mut out = Split::default();
    let real = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    descend(&real, stores, &mut out);
    out
}

fn descend(dir: &Path, stores: &SecretStores, out: &mut Split) {
    if stores.store_at(dir).is_some() {
        return;
    }
    if !stores.holds_store(dir) {
        out.whole.push(dir.to_path_buf());
        return;
    }
    out.split.push(dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            continue;
        }
        let path = entry.path();
        if kind.is_dir() {
            descend(&path, stores, out);
        } else if stores.store_at(&path).is_none() {
            out.whole.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_home_is_split_around_its_stores_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap().join("h");
        for rel in [
            ".ssh",
            ".cargo/bin",
            ".cargo/registry",
            ".config/nvim",
            "src",
        ] {
            std::fs::create_dir_all(home.join(rel)).unwrap();
        }
        for rel in [".npmrc", ".cargo/credentials.toml", ".profile"] {
            std::fs::write(home.join(rel), "x").unwrap();
        }
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).unwrap();
        let stores = SecretStores::new(std::slice::from_ref(&home), &[]);
        let got = split(&home, &stores);
        let rel: Vec<String> = got
            .whole
            .iter()
            .map(|p| {
                p.strip_prefix(&home)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        for granted in [
            ".cargo/bin",
            ".cargo/registry",
            ".config/nvim",
            "src",
            ".profile",
        ] {
            assert!(rel.iter().any(|r| r == granted), "{granted} in {rel:?}");
        }
        for left_out in [
            ".ssh",
            ".npmrc",
            ".cargo/credentials.toml",
            "keys",
            ".cargo",
            ".config",
        ] {
            assert!(!rel.iter().any(|r| r == left_out), "{left_out} in {rel:?}");
        }
        assert!(got.split.contains(&home) && got.split.contains(&home.join(".cargo")));
        // Above the home: the parent is split too, its other entries granted whole.
        let above = split(dir.path(), &stores);
        assert!(above.split.contains(&home));
        assert!(!above.whole.iter().any(|p| home.starts_with(p)));
    }

    #[test]
    fn a_root_without_stores_is_granted_whole_and_a_store_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join("work")).unwrap();
        let stores = SecretStores::new(std::slice::from_ref(&home), &[]);
        assert_eq!(
            split(&home.join("work"), &stores).whole,
            [home.join("work")]
        );
        assert_eq!(split(&home.join(".ssh"), &stores), Split::default());
    }
}
