//! glob: paths matching a glob pattern under a directory, newest first (by modification
//! time), `.gitignore` respected, capped. The pattern's literal leading directories narrow
//! the walk (`src/**/*.rs` only walks `src`). The walk is confined beneath the place of that
//! directory (`confined_walk`): paths come from names listed through directory handles, so
//! `..` or a symlink swapped in can never make a match name something outside.

use crate::sync::MutexExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use globset::GlobBuilder;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};

use crate::fs::confined::Beneath;
use crate::fs::confined_walk::{Walk, WalkEntry, WalkKind, WalkState};
use crate::fs::walk::{RootKind, existing_root, problem_notes, shown_path, workspace_real};
use crate::tool_output::{ListEntry, Listing, ToolOutput};

pub const MAX_RESULTS: usize = 500;

#[derive(Debug, Deserialize)]
struct GlobArgs {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
}

pub struct Glob;

#[async_trait]
impl Tool for Glob {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "glob",
            description: "Find files by glob, newest first (at most 500): `**/*.rs` matches at \
                          any depth, `*` within one directory. Skips ignored files.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string"},
                    "path": {"type": "string", "description": "default: workspace root"}
                },
                "required": ["pattern"]
            }),
        }
    }

    /// The walk's root is the directory plus the pattern's literal leading directories, so
    /// `../../**` or `/home/u/.ssh/*` is checked as the place it reaches.
    fn access(&self, args: &serde_json::Value, cx: &ToolCx) -> Result<Access, ToolError> {
        let args: GlobArgs = parse_args(args)?;
        let (base, _) = split_pattern(&args.pattern)?;
        cx.read_access(&walk_root(&args, &base))
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: GlobArgs = parse_args(&args)?;
        let (base, pattern) = split_pattern(&args.pattern)?;
        let real = cx.resolve(&walk_root(&args, &base))?;
        let display = real.display_in(cx.workspace());
        let place = cx.read_place(&real, &display)?;
        match existing_root(&place, &display) {
            Ok(RootKind::Dir) => {}
            Ok(RootKind::File) => {
                return Err(ToolError::Failed(format!(
                    "{display} is a file; glob searches directories (use read_file to read it)"
                )));
            }
            // A literal directory in the pattern that does not exist simply matches nothing,
            // as long as the directory searched exists.
            Err(err)
                if !base.as_os_str().is_empty()
                    && std::fs::symlink_metadata(real.as_path()).is_err() =>
            {
                let dir = crate::fs::paths::dir_arg(args.path.as_deref());
                let dir_real = cx.resolve(dir)?;
                if !dir_real.as_path().is_dir() {
                    return Err(err.into());
                }
            }
            Err(err) => return Err(err.into()),
        }
        let workspace = workspace_real(cx.workspace());
        let skip = cx.env.files.sensitive_below(real.as_path());
        let cancel = cx.cancel.clone();
        let listing = super::blocking("globbing", move || {
            let mut listing = find(&place, &pattern, &workspace, &skip, MAX_RESULTS, &cancel)?;
            listing.root = display;
            Ok::<_, ToolError>(listing)
        })
        .await?;
        Ok(ToolOutput::Listing(listing))
    }
}

/// The directory argument joined with the pattern's literal base.
fn walk_root(args: &GlobArgs, base: &Path) -> String {
    let dir = crate::fs::paths::dir_arg(args.path.as_deref());
    if base.as_os_str().is_empty() {
        dir.to_string()
    } else {
        Path::new(dir).join(base).to_string_lossy().into_owned()
    }
}

/// Splits a pattern into its literal leading directories and the glob proper:
/// `./src/**/*.rs` → (`src`, `**/*.rs`). An absolute pattern keeps its absolute base.
fn split_pattern(raw: &str) -> Result<(PathBuf, String), ToolError> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err(ToolError::InvalidArgs("`pattern` must not be empty".into()));
    }
    let trimmed = trimmed.strip_prefix("./").unwrap_or(trimmed);
    let is_glob = |part: &str| part.contains(['*', '?', '[', '{']);
    let parts: Vec<&str> = trimmed.split('/').collect();
    let literal = parts
        .iter()
        .take_while(|p| !is_glob(p))
        .count()
        .min(parts.len() - 1);
    let mut base = PathBuf::from(if trimmed.starts_with('/') { "/" } else { "" });
    for part in &parts[..literal] {
        base.push(part);
    }
    let pattern = parts[literal..].join("/");
    GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map_err(|err| ToolError::InvalidArgs(format!("bad glob pattern {raw:?}: {err}")))?;
    Ok((base, pattern))
}

/// Entries under `place` whose path relative to it matches `pattern`, newest first. A place
/// that does not exist matches nothing.
pub fn find(
    place: &Beneath,
    pattern: &str,
    workspace: &Path,
    skip: &[PathBuf],
    cap: usize,
    cancel: &CancellationToken,
) -> Result<Listing, ToolError> {
    let matcher = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|err| ToolError::InvalidArgs(format!("bad glob pattern {pattern:?}: {err}")))?
        .compile_matcher();
    let root_path = place.root.join(&place.rel);
    let root = root_path.as_path();
    let display = shown_path(workspace, root);
    let found: Mutex<Vec<(SystemTime, String, bool)>> = Mutex::new(Vec::new());
    let walked = Walk::new(place, skip).run(|| {
        let (matcher, found) = (&matcher, &found);
        move |entry: &WalkEntry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(rel) = entry.path().strip_prefix(root) else {
                return WalkState::Continue;
            };
            if entry.depth() > 0 && matcher.is_match(rel) {
                let modified = entry
                    .stat()
                    .ok()
                    .flatten()
                    .map_or(SystemTime::UNIX_EPOCH, |stat| modified(&stat));
                let shown = shown_path(workspace, entry.path());
                let is_dir = entry.kind() == WalkKind::Dir;
                found.locked().push((modified, shown, is_dir));
            }
            WalkState::Continue
        }
    });
    let problems = match walked {
        Ok(problems) => problems,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => return Err(crate::fs::open_error(&display, "globbing", err).into()),
    };
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    let mut found = crate::sync::unpoisoned(found.into_inner());
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    found.truncate(cap);
    Ok(Listing {
        root: display,
        entries: found
            .into_iter()
            .map(|(_, path, is_dir)| ListEntry { path, is_dir })
            .collect(),
        truncated: total > cap,
        omitted: (total > cap).then(|| total - cap),
        unreadable: problem_notes(workspace, &problems),
    })
}

/// A stat's modification time.
fn modified(stat: &nix::sys::stat::FileStat) -> SystemTime {
    let nanos = u32::try_from(stat.st_mtime_nsec).unwrap_or(0);
    match u64::try_from(stat.st_mtime) {
        Ok(secs) => SystemTime::UNIX_EPOCH + Duration::new(secs, nanos),
        Err(_) => SystemTime::UNIX_EPOCH,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn patterns_split_into_literal_base_and_glob() {
        let cases = [
            ("**/*.rs", "", "**/*.rs"),
            ("./src/**/*.rs", "src", "**/*.rs"),
            ("src/tools/*.rs", "src/tools", "*.rs"),
            ("Cargo.toml", "", "Cargo.toml"),
            ("docs/README.md", "docs", "README.md"),
            ("/abs/dir/*.txt", "/abs/dir", "*.txt"),
        ];
        for (raw, base, pattern) in cases {
            assert_eq!(
                split_pattern(raw).unwrap(),
                (PathBuf::from(base), pattern.to_string()),
                "{raw}"
            );
        }
        assert!(split_pattern("").is_err());
        assert!(split_pattern("src/[a").is_err());
    }

    #[test]
    fn matches_newest_first_and_star_stays_in_one_directory() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        let root = real.as_path();
        let place = Beneath::new(root, root).unwrap();
        let now = SystemTime::now();
        for (i, file) in ["old.rs", "src/mid.rs", "src/deep/new.rs", "notes.txt"]
            .iter()
            .enumerate()
        {
            let path = root.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "").unwrap();
            let when = now - Duration::from_secs(1000 - i as u64 * 100);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        let cancel = CancellationToken::new();
        let all = find(&place, "**/*.rs", root, &[], 500, &cancel).unwrap();
        let names: Vec<_> = all.entries.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(names, ["src/deep/new.rs", "src/mid.rs", "old.rs"]);
        let top = find(&place, "*.rs", root, &[], 500, &cancel).unwrap();
        assert_eq!(
            top.entries
                .iter()
                .map(|e| e.path.as_str())
                .collect::<Vec<_>>(),
            ["old.rs"]
        );
        let capped = find(&place, "**/*.rs", root, &[], 2, &cancel).unwrap();
        assert_eq!(
            (capped.entries.len(), capped.truncated, capped.omitted),
            (2, true, Some(1))
        );
    }
}
