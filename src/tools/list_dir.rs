//! list_dir: the entries of a directory down to a depth, sorted, directories marked,
//! `.gitignore` respected. When capped, shallow entries win, so the top levels stay complete.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::text::lenient_usize;
use super::walk::{RootKind, existing_root, shown_path, walker, workspace_real};
use super::{
    Access, ListEntry, Listing, Tool, ToolCx, ToolError, ToolOutput, ToolSpec, parse_args,
};

pub const MAX_ENTRIES: usize = 500;
const DEFAULT_DEPTH: usize = 2;
const MAX_DEPTH: usize = 20;
/// Entries walked at most; beyond this the omitted count is unknown.
const MAX_WALKED: usize = 50_000;

#[derive(Debug, Deserialize)]
struct Args {
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
            description: "List a directory's files and subdirectories (marked with /), sorted, \
                          skipping what .gitignore ignores. At most 500 entries.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Directory (default: workspace root)"},
                    "depth": {"type": "integer", "description": "Levels to descend (default 2)"}
                }
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, cx: &ToolCx) -> Result<Access, ToolError> {
        let args: Args = parse_args(args)?;
        cx.read_access(root_arg(&args))
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(&args)?;
        let depth = args.depth.unwrap_or(DEFAULT_DEPTH).clamp(1, MAX_DEPTH);
        let real = cx.resolve(root_arg(&args))?;
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
            let root = real.as_path();
            list(root, &workspace, &skip, depth, MAX_ENTRIES, &cancel).map(|mut listing| {
                listing.root = display;
                listing
            })
        })
        .await?;
        Ok(ToolOutput::Listing(listing))
    }
}

fn root_arg(args: &Args) -> &str {
    args.path
        .as_deref()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or(".")
}

/// Lists `root` down to `depth` levels, keeping at most `cap` entries, never entering `skip`.
pub fn list(
    root: &Path,
    workspace: &Path,
    skip: &[PathBuf],
    depth: usize,
    cap: usize,
    cancel: &CancellationToken,
) -> Result<Listing, ToolError> {
    let mut found: Vec<(usize, String, bool)> = Vec::new();
    let mut complete = true;
    for entry in walker(root, skip).max_depth(Some(depth)).build() {
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 {
            continue;
        }
        if found.len() >= MAX_WALKED {
            complete = false;
            break;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        found.push((entry.depth(), shown_path(workspace, entry.path()), is_dir));
    }
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
        root: shown_path(workspace, root),
        entries: found
            .into_iter()
            .map(|(_, path, is_dir)| ListEntry { path, is_dir })
            .collect(),
        truncated,
        omitted: complete
            .then(|| total.saturating_sub(cap))
            .filter(|_| truncated),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        dir
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
        let listing = list(root, root, &[], 2, 500, &CancellationToken::new()).unwrap();
        assert_eq!(
            paths(&listing),
            ["a/", "a/deep/", "a/x.rs", "b.txt", "c/", "c/y.rs"]
        );
        assert!(!listing.truncated);
        let one = list(root, root, &[], 1, 500, &CancellationToken::new()).unwrap();
        assert_eq!(paths(&one), ["a/", "b.txt", "c/"]);
    }

    #[test]
    fn capped_listings_keep_the_top_level_complete() {
        let dir = tree(&["a/1", "a/2", "a/3", "b/1", "c"]);
        let root = dir.path();
        let listing = list(root, root, &[], 2, 4, &CancellationToken::new()).unwrap();
        assert_eq!(paths(&listing), ["a/", "a/1", "b/", "c"]);
        assert!(listing.truncated);
        assert_eq!(listing.omitted, Some(3));
    }
}
