//! grep: regex search over files with ripgrep's own libraries (grep-regex, grep-searcher, and
//! ignore's gitignore rules) over the confined walk (`confined_walk`). `.gitignore` respected,
//! binary files skipped, results sorted by path, at most `limit` (default 200) matches, files
//! or counts, with a marker when cut. Lines over 1 MiB are skipped with a note, so memory
//! stays bounded whatever the files hold. Every file is opened from its directory's handle
//! (regular files only, no symlink, never blocking), so no swap can bring outside content in.

use crate::sync::MutexExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::args::{lenient_bool, lenient_usize};
use super::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};
use crate::fs::confined::{Beneath, OpenError};
use crate::fs::confined_walk::{Problem, Walk, WalkEntry, WalkKind, WalkState};
use crate::fs::line_cap::LineCap;
use crate::fs::text::cut_chars;
use crate::fs::walk::{existing_root, problem_notes, shown_path, workspace_real};
use crate::tool_output::{GrepLine, GrepMode, Matches, ToolOutput};

pub const DEFAULT_LIMIT: usize = 200;
/// The most results a model may ask for: more would flood its context.
pub const MAX_LIMIT: usize = 2000;
/// Matched lines longer than this are cut.
const MAX_LINE_CHARS: usize = 500;
const MAX_CONTEXT: usize = 20;
/// Lines held in memory across all files, whatever the limit: the rest is only counted.
const MAX_HELD_LINES: usize = 20_000;
/// Longer lines are not searched (and the result says so): the searcher holds a whole line in
/// memory, and a 1.5 GB minified file is one line.
pub const MAX_SEARCH_LINE: usize = 1024 * 1024;

#[derive(Debug, Deserialize)]
struct GrepArgs {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default, alias = "-i", deserialize_with = "lenient_bool")]
    case_insensitive: Option<bool>,
    #[serde(default, alias = "-C", deserialize_with = "lenient_usize")]
    context: Option<usize>,
    #[serde(default)]
    output_mode: Option<String>,
    #[serde(default, alias = "head_limit", deserialize_with = "lenient_usize")]
    limit: Option<usize>,
}

/// A validated search.
pub struct GrepQuery {
    pub matcher: RegexMatcher,
    pub pattern: String,
    pub glob: Option<GlobMatcher>,
    /// True when the glob has no `/` and so matches file names at any depth.
    pub glob_on_name: bool,
    pub context: usize,
    pub mode: GrepMode,
    pub limit: usize,
}

pub struct Grep;

#[async_trait]
impl Tool for Grep {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "grep",
            description: "Search file contents by regex (ripgrep syntax), skipping binary and \
                          ignored files. output_mode: content (numbered lines, default), files or \
                          count; at most `limit` results (default 200).",
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string"},
                    "path": {"type": "string", "description": "File or directory (default .)"},
                    "glob": {"type": "string", "description": "File filter, e.g. *.rs"},
                    "case_insensitive": {"type": "boolean"},
                    "context": {"type": "integer"},
                    "output_mode": {"type": "string", "enum": ["content", "files", "count"]},
                    "limit": {"type": "integer"}
                },
                "required": ["pattern"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, cx: &ToolCx) -> Result<Access, ToolError> {
        let args: GrepArgs = parse_args(args)?;
        query(&args)?;
        cx.read_access(crate::fs::paths::dir_arg(args.path.as_deref()))
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: GrepArgs = parse_args(&args)?;
        let query = query(&args)?;
        let real = cx.resolve(crate::fs::paths::dir_arg(args.path.as_deref()))?;
        let display = real.display_in(cx.workspace());
        let place = cx.read_place(&real, &display)?;
        existing_root(&place, &display)?;
        let workspace = workspace_real(cx.workspace());
        let skip = cx.env.files.sensitive_below(real.as_path());
        let cancel = cx.cancel.clone();
        let matches = super::blocking("searching", move || {
            search(&place, &workspace, &skip, &query, &cancel)
        })
        .await?;
        Ok(ToolOutput::Matches(matches))
    }
}

fn query(args: &GrepArgs) -> Result<GrepQuery, ToolError> {
    if args.pattern.is_empty() {
        return Err(ToolError::InvalidArgs("`pattern` must not be empty".into()));
    }
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(args.case_insensitive.unwrap_or(false))
        .line_terminator(Some(b'\n'))
        .build(&args.pattern)
        .map_err(|err| {
            ToolError::InvalidArgs(format!(
                "invalid regex {:?}: {err}. Escape special characters such as ( [ {{ . with a backslash",
                args.pattern
            ))
        })?;
    let mode = match args.output_mode.as_deref().map(str::trim) {
        None | Some("") | Some("content") => GrepMode::Content,
        Some("files") | Some("files_with_matches") => GrepMode::Files,
        Some("count") => GrepMode::Count,
        Some(other) => {
            return Err(ToolError::InvalidArgs(format!(
                "output_mode {other:?} is not one of content, files, count"
            )));
        }
    };
    let glob = match args
        .glob
        .as_deref()
        .map(str::trim)
        .filter(|g| !g.is_empty())
    {
        None => None,
        Some(glob) => Some(
            GlobBuilder::new(glob.strip_prefix("./").unwrap_or(glob))
                .literal_separator(true)
                .build()
                .map_err(|err| ToolError::InvalidArgs(format!("bad glob {glob:?}: {err}")))?
                .compile_matcher(),
        ),
    };
    let glob_on_name = args.glob.as_deref().is_some_and(|g| !g.contains('/'));
    Ok(GrepQuery {
        matcher,
        pattern: args.pattern.clone(),
        glob,
        glob_on_name,
        context: args.context.unwrap_or(0).min(MAX_CONTEXT),
        mode,
        limit: args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT),
    })
}

/// The results of one file.
struct FileHits {
    path: String,
    lines: Vec<GrepLine>,
    count: u64,
}

/// Searches `place` (a file or a directory) and assembles the capped, path-sorted result.
/// Every file is opened from its directory's handle beneath the place's root with symlinks
/// refused, so a directory swapped for a symlink during the walk cannot bring outside content
/// in; `skip` (sensitive directories below) is never entered.
pub fn search(
    place: &Beneath,
    workspace: &Path,
    skip: &[PathBuf],
    query: &GrepQuery,
    cancel: &CancellationToken,
) -> Result<Matches, ToolError> {
    let root_path = place.root.join(&place.rel);
    let root = root_path.as_path();
    let hits: Mutex<Vec<FileHits>> = Mutex::new(Vec::new());
    let skipped: Mutex<Vec<(String, u64)>> = Mutex::new(Vec::new());
    let denied: Mutex<Vec<Problem>> = Mutex::new(Vec::new());
    let held = AtomicUsize::new(0);
    let context = if query.mode == GrepMode::Content {
        query.context
    } else {
        0
    };
    let walked = Walk::new(place, skip).run(|| {
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .before_context(context)
            .after_context(context)
            .build();
        let (hits, held, skipped, denied) = (&hits, &held, &skipped, &denied);
        move |entry: &WalkEntry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            if entry.kind() != WalkKind::File || !glob_allows(query, root, entry.path()) {
                return WalkState::Continue;
            }
            // Opened from its directory's handle: a regular file, not through a link, and
            // not blocking (a FIFO or device swapped in is refused, not waited on).
            let file = match entry.open() {
                Ok(file) => file,
                Err(OpenError::Io(err)) => {
                    if let Some(problem) = Problem::of(entry.path(), false, &err) {
                        denied.locked().push(problem);
                    }
                    return WalkState::Continue;
                }
                Err(_) => return WalkState::Continue,
            };
            let keep = if query.mode == GrepMode::Content
                && held.load(Ordering::Relaxed) < MAX_HELD_LINES
            {
                query.limit
            } else {
                0
            };
            let path = shown_path(workspace, entry.path());
            let mut sink = Collect {
                path: &path,
                keep,
                lines: Vec::new(),
                count: 0,
                binary: false,
            };
            // Lines past the cap are left out: the searcher holds a whole line in memory.
            let mut reader = LineCap::new(file, MAX_SEARCH_LINE);
            let searched = searcher
                .search_reader(&query.matcher, &mut reader, &mut sink)
                .is_ok();
            if searched && !sink.binary && reader.skipped() > 0 {
                let note = (path.clone(), reader.skipped());
                skipped.locked().push(note);
            }
            if searched && !sink.binary && sink.count > 0 {
                held.fetch_add(sink.lines.len(), Ordering::Relaxed);
                let (lines, count) = (sink.lines, sink.count);
                let found = FileHits { path, lines, count };
                hits.locked().push(found);
            }
            WalkState::Continue
        }
    });
    let display = shown_path(workspace, root);
    let mut problems = walked.map_err(|err| crate::fs::open_error(&display, "searching", err))?;
    if cancel.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    problems.extend(crate::sync::unpoisoned(denied.into_inner()));
    problems.sort();
    let mut hits = crate::sync::unpoisoned(hits.into_inner());
    hits.sort_by(|a, b| a.path.cmp(&b.path));
    let mut matches = assemble(query, hits);
    let mut skipped = crate::sync::unpoisoned(skipped.into_inner());
    skipped.sort();
    matches.long_lines_skipped = skipped;
    matches.unreadable = problem_notes(workspace, &problems);
    Ok(matches)
}

fn glob_allows(query: &GrepQuery, root: &Path, path: &Path) -> bool {
    let Some(glob) = &query.glob else { return true };
    if query.glob_on_name {
        return path.file_name().is_some_and(|name| glob.is_match(name));
    }
    // A single file given as the root has no relative path: match it by name.
    let rel = path
        .strip_prefix(root)
        .ok()
        .filter(|r| !r.as_os_str().is_empty());
    glob.is_match(rel.unwrap_or(path))
}

fn assemble(query: &GrepQuery, hits: Vec<FileHits>) -> Matches {
    let total_matches = hits.iter().map(|h| h.count).sum();
    let mut out = Matches {
        pattern: query.pattern.clone(),
        mode: query.mode,
        total_matches,
        ..Matches::default()
    };
    match query.mode {
        GrepMode::Content => {
            let mut shown = 0;
            let mut last: Option<(String, u64)> = None;
            'files: for file in hits {
                for line in file.lines {
                    if !line.is_context {
                        if shown == query.limit {
                            break 'files;
                        }
                        shown += 1;
                        last = Some((line.path.clone(), line.line));
                    }
                    out.lines.push(line);
                }
            }
            // Context kept only if it belongs after the last shown match, not before a cut one.
            if let Some((path, line)) = last {
                while out.lines.last().is_some_and(|l| {
                    l.is_context && (l.path != path || l.line > line + query.context as u64)
                }) {
                    out.lines.pop();
                }
            }
            out.truncated = total_matches > shown as u64;
        }
        GrepMode::Files | GrepMode::Count => {
            out.truncated = hits.len() > query.limit;
            out.files = hits
                .into_iter()
                .take(query.limit)
                .map(|h| (h.path, h.count))
                .collect();
        }
    }
    out
}

/// Collects one file's matching lines (up to `keep`) and context, and counts all matches.
struct Collect<'p> {
    path: &'p str,
    keep: usize,
    lines: Vec<GrepLine>,
    count: u64,
    binary: bool,
}

impl Collect<'_> {
    fn push(&mut self, line: Option<u64>, bytes: &[u8], is_context: bool) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        let (kept, cut) = cut_chars(text, MAX_LINE_CHARS);
        let text = if cut {
            format!("{kept} [line cut]")
        } else {
            kept.to_string()
        };
        self.lines.push(GrepLine {
            path: self.path.to_string(),
            line: line.unwrap_or(0),
            text,
            is_context,
        });
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.count += 1;
        if (self.count as usize) <= self.keep {
            self.push(mat.line_number(), mat.bytes(), false);
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, Self::Error> {
        let count = self.count as usize;
        let wanted = match ctx.kind() {
            SinkContextKind::Before => count < self.keep,
            SinkContextKind::After => count > 0 && count <= self.keep,
            SinkContextKind::Other => false,
        };
        if wanted {
            self.push(ctx.line_number(), ctx.bytes(), true);
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

#[cfg(test)]
#[path = "grep_tests.rs"]
mod tests;
