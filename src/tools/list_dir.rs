//! list_dir: the entries of a directory down to a depth, sorted, directories marked,
//! `.gitignore` respected. When capped, shallow entries win, so the top levels stay complete.
//! The walk is confined beneath the directory's place (`confined_walk`): a symlink is listed,
//! never entered.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::args::lenient_usize;
use super::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};
use crate::fs::confined::Beneath;
use crate::fs::confined_walk::{Walk, WalkKind, WalkState};
use crate::fs::walk::{RootKind, existing_root, problem_notes, shown_path, workspace_real};
use crate::sync::MutexExt;
use crate::tool_output::{ListEntry, Listing, ToolOutput};

pub const MAX_ENTRIES: usize = 500;
const DEFAULT_DEPTH: usize = 2;
const MAX_DEPTH: usize = 20;
/// Entries walked at most; beyond this the omitted count is unknown.
const MAX_WALKED: usize = 50_000;

#[derive(Debug, Deserialize)]
struct ListDirArgs {
    #[serde(default)]
    path: Option<String>,
    #[serde(default, deserialize_with = "lenient_usize")]
    depth: Option<usize>,
}

pub struct ListDir;

#[async_trait]
impl Tool for ListDir {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "list_dir",
            description: "List a directory (subdirectories end in /), sorted, skipping ignored \
                          files; at most 500 entries.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "default: workspace root"},
                    "depth": {"type": "integer", "description": "default 2"}
                }
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, cx: &ToolCx) -> Result<Access, ToolError> {
        let args: ListDirArgs = parse_args(args)?;
        cx.read_access(crate::fs::paths::dir_arg(args.path.as_deref()))
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: ListDirArgs = parse_args(&args)?;
        let depth = args.depth.unwrap_or(DEFAULT_DEPTH).clamp(1, MAX_DEPTH);
        let real = cx.resolve(crate::fs::paths::dir_arg(args.path.as_deref()))?;
        let display = real.display_in(cx.workspace());
        let place = cx.read_place(&real, &display)?;
        if existing_root(&place, &display)? != RootKind::Dir {
            return Err(ToolError::Failed(format!(
                "{display} is a file, not a directory; use read_file to read it"
            )));
        }
        let workspace = workspace_real(cx.workspace());
        let skip = cx.env.files.sensitive_below(real.as_path());
        let cancel = cx.cancel.clone();
        let listing = super::blocking("listing", move || {
            list(&place, &workspace, &skip, depth, MAX_ENTRIES, &cancel).map(|mut listing| {
                listing.root = display;
                listing
            })
        })
        .await?;
        Ok(ToolOutput::Listing(listing))
    }
}

/// Lists `place` down to `depth` levels, keeping at most `cap` entries, never entering `skip`.
pub fn list(
    place: &Beneath,
    workspace: &Path,
    skip: &[PathBuf],
    depth: usize,
    cap: usize,
    cancel: &CancellationToken,
) -> Result<Listing, ToolError> {
    let root = place.root.join(&place.rel);
    let display = shown_path(workspace, &root);
    let found: Mutex<Vec<(usize, String, bool)>> = Mutex::new(Vec::new());
    let walked = AtomicUsize::new(0);
    let cut = AtomicBool::new(false);
    // One thread, as before: listing is cheap per entry, so a second thread only adds
    // contention (measured: benches/walk.rs).
    let problems = Walk::new(place, skip)
        .max_depth(depth)
        .threads(1)
        .run(|| {
            |entry: &crate::fs::confined_walk::WalkEntry| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                if entry.depth() == 0 {
                    return WalkState::Continue;
                }
                if walked.fetch_add(1, Ordering::Relaxed) >= MAX_WALKED {
                    cut.store(true, Ordering::Relaxed);
                    return WalkState::Quit;
                }
                let shown = shown_path(workspace, entry.path());
                let is_dir = entry.kind() == WalkKind::Dir;
                found.locked().push((entry.depth(), shown, is_dir));
                WalkState::Continue
            }
        })
        .map_err(|err| crate::fs::open_error(&display, "listing", err))?;
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    let mut found = crate::sync::unpoisoned(found.into_inner());
    let complete = !cut.load(Ordering::Relaxed);
    let total = found.len();
    let truncated = total > cap || !complete;
    if total > cap {
        // Shallow entries first, so every level shown is complete up to the cut.
        found.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| Path::new(&a.1).cmp(Path::new(&b.1)))
        });
        found.truncate(cap);
    }
    found.sort_by(|a, b| Path::new(&a.1).cmp(Path::new(&b.1)));
    Ok(Listing {
        root: display,
        entries: found
            .into_iter()
            .map(|(_, path, is_dir)| ListEntry { path, is_dir })
            .collect(),
        truncated,
        omitted: complete
            .then(|| total.saturating_sub(cap))
            .filter(|_| truncated),
        unreadable: problem_notes(workspace, &problems),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::Builder::new()
            .tempdir_in(std::env::temp_dir().canonicalize().unwrap())
            .unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        dir
    }

    fn at(root: &Path) -> Beneath {
        Beneath::new(root, root).unwrap()
    }

    fn paths(listing: &Listing) -> Vec<String> {
        listing
            .entries
            .iter()
            .map(|e| format!("{}{}", e.path, if e.is_dir { "/" } else { "" }))
            .collect()
    }

    #[test]
    fn sorted_with_dirs_marked_down_to_the_depth() {
        let dir = tree(&["b.txt", "a/x.rs", "a/deep/er/z.rs", "c/y.rs"]);
        let root = dir.path();
        let listing = list(&at(root), root, &[], 2, 500, &CancellationToken::new()).unwrap();
        assert_eq!(
            paths(&listing),
            ["a/", "a/deep/", "a/x.rs", "b.txt", "c/", "c/y.rs"]
        );
        assert!(!listing.truncated);
        let one = list(&at(root), root, &[], 1, 500, &CancellationToken::new()).unwrap();
        assert_eq!(paths(&one), ["a/", "b.txt", "c/"]);
    }

    #[test]
    fn capped_listings_keep_the_top_level_complete() {
        let dir = tree(&["a/1", "a/2", "a/3", "b/1", "c"]);
        let root = dir.path();
        let listing = list(&at(root), root, &[], 2, 4, &CancellationToken::new()).unwrap();
        assert_eq!(paths(&listing), ["a/", "a/1", "b/", "c"]);
        assert!(listing.truncated);
        assert_eq!(listing.omitted, Some(3));
    }
}
