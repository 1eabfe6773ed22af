//! The canonical values tools produce. The session log stores them verbatim; the model's text
//! (`model_text`) and the UI's cards and diffs are projections of the same value.

mod file_text;
pub mod model_text;
mod web_text;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The one marker for a call stopped because the user interrupted: the result of a cancelled
/// call, and the marker a cancelled command run carries after its output.
pub const CANCELLED: &str = "[cancelled]";

/// Longest timeout a model may ask for a command (`bash`'s `timeout_ms`); a longer one is
/// clamped and the result says so.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// A finished (or cancelled, or timed-out) shell command.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandRun {
    pub command: String,
    /// What the model sees of stdout: head and tail when cut, escape sequences stripped.
    pub stdout: String,
    pub stderr: String,
    pub exit_code: Option<i32>,
    /// Name of the signal that ended it (`SIGKILL`), if any.
    pub signal: Option<String>,
    /// The timeout that fired, in ms.
    pub timed_out_after_ms: Option<u64>,
    pub cancelled: bool,
    /// Bytes produced on each stream, including what was cut.
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// True when the shown output is only a head and a tail of the whole.
    pub truncated: bool,
    /// Where the full stdout was spilled, when it did not fit in memory. A spilled stderr is
    /// named in the truncation marker inside `stderr`.
    pub spill_path: Option<PathBuf>,
    pub duration_ms: u64,
    pub sandboxed: bool,
    /// The command failed in a way that looks like the sandbox refused it.
    pub sandbox_denied: bool,
    /// Set when the command runs (or now runs) as a background job.
    pub job_id: Option<String>,
    /// Started with `background: true`: the run returned at once with `job_id`.
    #[serde(default)]
    pub background: bool,
    /// The model asked for a `timeout_ms` above the maximum; the maximum was used.
    #[serde(default)]
    pub timeout_clamped: bool,
    /// The files the command created, changed or deleted, from the checkpoints around it;
    /// `changes_note` says when there were more than are kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FileChange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes_note: Option<String>,
    /// What of the protected set (git config and hooks, `.cairn/`) the command changed and
    /// cairn put back, like `.git/config (changed)`.
    #[serde(default, skip_serializing_if = "PutBack::is_empty")]
    pub put_back: PutBack,
    /// The Unix sockets the sandbox kept the command from (paths, or kinds of socket).
    #[serde(default, skip_serializing_if = "RareList::is_empty")]
    pub refused_sockets: RareList,
    /// The per-command limits it hit, like `256 processes` or `1024 MiB of memory`.
    #[serde(default, skip_serializing_if = "RareList::is_empty")]
    pub limits_hit: RareList,
    /// Files it created or changed that the user's own tools run or obey later (`.envrc`,
    /// `.vscode/tasks.json`, a repository's `config`), from `changes`.
    #[serde(default, skip_serializing_if = "RareList::is_empty")]
    pub runs_later: RareList,
}

impl CommandRun {
    /// It failed, and the sandbox had refused it a Unix socket: likely why.
    pub fn socket_denied(&self) -> bool {
        !self.refused_sockets.is_empty()
            && (self.exit_code.is_some_and(|code| code != 0) || self.signal.is_some())
    }
}

/// What cairn put back after a sandboxed command (see `process::protect`): almost
/// always empty, and every result carries it.
pub type PutBack = RareList;

/// A list that is almost always empty, boxed so that every result does not carry its room.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RareList(Option<Box<[String]>>);

impl RareList {
    pub fn new(items: Vec<String>) -> Self {
        Self((!items.is_empty()).then(|| items.into_boxed_slice()))
    }

    pub fn is_empty(&self) -> bool {
        self.items().is_empty()
    }

    pub fn items(&self) -> &[String] {
        self.0.as_deref().unwrap_or_default()
    }
}

/// Lines of a file, as `read_file` returned them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSlice {
    pub path: String,
    /// 1-based number of the first line shown.
    pub offset: usize,
    pub lines: Vec<String>,
    pub total_lines: usize,
    /// Lines that were cut because they were too long.
    pub long_lines_cut: usize,
    /// The file's encoding when it is not UTF-8 (`windows-1252`, `UTF-16LE`): the lines are
    /// shown decoded, and writes and edits keep it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// The line that ends `FileChange::diff` when the diff was cut for size: a note, not part of
/// the file. The diff builder writes it; the diff pane recognises it.
pub const DIFF_TRUNCATED: &str = "[diff truncated]";

/// A write or edit: what changed in which file. Large files keep only the hunks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// The path as shown to the user (relative to the workspace when inside it).
    pub path: String,
    /// True when the file did not exist before.
    pub created: bool,
    /// Unified diff (3 lines of context) of before → after.
    pub diff: String,
    pub added: usize,
    pub removed: usize,
    /// 1-based first and last line of the new file that the change touched.
    pub first_line: usize,
    pub last_line: usize,
    /// Number of replacements made (edits), or 1 for a write.
    pub replacements: usize,
}

impl FileChange {
    /// The path, with `(created)` or `(deleted)` when it is either: how a list of changes
    /// names it to the model.
    pub fn label(&self) -> String {
        if self.created {
            format!("{} (created)", self.path)
        } else if self.diff.contains("+++ /dev/null") {
            format!("{} (deleted)", self.path)
        } else {
            self.path.clone()
        }
    }
}

/// One entry of a listing or a glob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListEntry {
    pub path: String,
    pub is_dir: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listing {
    pub root: String,
    pub entries: Vec<ListEntry>,
    /// Set when the listing was capped; the number of entries not shown, when known.
    pub truncated: bool,
    pub omitted: Option<usize>,
    /// Directories the walk could not enter (`path/ (why)`): permission denied, or replaced
    /// while walking. Their entries are missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrepMode {
    #[default]
    Content,
    Files,
    Count,
}

/// One line of grep output: a match, or a context line around one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrepLine {
    pub path: String,
    pub line: u64,
    pub text: String,
    pub is_context: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Matches {
    pub pattern: String,
    pub mode: GrepMode,
    pub lines: Vec<GrepLine>,
    /// Files with matches (files mode), or (path, count) for count mode.
    pub files: Vec<(String, u64)>,
    pub total_matches: u64,
    pub truncated: bool,
    /// Files with lines too long to search (path, number of such lines); they were skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub long_lines_skipped: Vec<(String, u64)>,
    /// Directories and files the search could not enter or open (`path (why)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    pub content: String,
    pub status: TodoStatus,
}

/// State of a background job, as `job_output` / `job_kill` report it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobReport {
    pub job_id: String,
    pub command: String,
    /// New output since the last read.
    pub stdout: String,
    pub stderr: String,
    pub running: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    pub killed: bool,
    /// Stopped by the user (from `/jobs`), not by `job_kill`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopped_by_user: bool,
    pub truncated: bool,
    pub spill_path: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_spill_path: Option<PathBuf>,
    /// Milliseconds since the job started.
    #[serde(default)]
    pub elapsed_ms: u64,
    /// What of the protected set the job (a command promoted from the foreground) changed
    /// and cairn put back.
    #[serde(default, skip_serializing_if = "PutBack::is_empty")]
    pub put_back: PutBack,
    /// Once it ended: the Unix sockets its sandbox refused it, and the limits it hit.
    #[serde(default, skip_serializing_if = "RareList::is_empty")]
    pub refused_sockets: RareList,
    #[serde(default, skip_serializing_if = "RareList::is_empty")]
    pub limits_hit: RareList,
}

/// The canonical value of a successful tool run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolOutput {
    Command(CommandRun),
    FileSlice(FileSlice),
    FileChanged(FileChange),
    Listing(Listing),
    Matches(Matches),
    Todos {
        todos: Vec<TodoItem>,
    },
    Job(JobReport),
    Image(ImageView),
    WebPage(WebPage),
    WebSearch(WebSearch),
    /// A skill the `skill` tool loaded: `text` is what the model reads.
    Skill(SkillLoad),
    /// A call of a tool of an MCP server.
    Mcp(McpCall),
    /// A tool's plain answer (the `lsp` tool's locations, hover text, symbols).
    Answer(ToolAnswer),
    /// What a subagent did: its answer and figures (`text` is what the model reads).
    Subagent(SubagentRun),
}

/// A subagent's run as its parent sees it: the child's final text with one line of figures
/// (`text`), how it ended, and the figures on their own for the card, the status line and
/// the parent's cost.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubagentRun {
    pub agent: String,
    pub description: String,
    /// The child's own session (its log, openable with `cairn replay`).
    pub session: String,
    /// `completed`, or how it did not finish (`step limit`, `stalled`, `cancelled`, ...).
    pub ended: String,
    pub finished: bool,
    pub steps: u64,
    /// The child's tokens (its own requests and its children's).
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    pub requests: u64,
    pub files_changed: u64,
    /// Its calls whose changes its file tools' count misses (commands, its own subagents that
    /// changed files): while there are none, `files_changed` is exact.
    #[serde(default)]
    pub uncounted: u64,
    pub duration_ms: u64,
    pub text: String,
    /// What it changed, as the parent's checkpoints around it saw it (when it ran alone in
    /// its reply): its diffs in the parent's diff pane.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FileChange>,
}

/// What an MCP server's tool answered: `text` is what the model reads (capped head and tail,
/// the whole of it in `spill_path`), `structured` its `structuredContent` as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpCall {
    pub server: String,
    pub tool: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<serde_json::Value>,
    /// Where the whole answer was kept when `text` had to be cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill_path: Option<PathBuf>,
    pub duration_ms: u64,
}

/// A tool's plain answer: what the model reads, and one line for the call's card.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolAnswer {
    pub summary: String,
    pub text: String,
}

/// A loaded skill: its name, directory and what the model is given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillLoad {
    pub name: String,
    pub dir: String,
    pub text: String,
}

/// An image a tool read for the model to see. The log keeps what it is; the bytes go to the
/// session's image store (named by `hash`) and reach the model as an image part right after
/// the call's results.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageView {
    pub path: String,
    pub media_type: String,
    pub width: u32,
    pub height: u32,
    /// The size of the file before it was downscaled (the same when it was not).
    pub original_width: u32,
    pub original_height: u32,
    /// Bytes sent (after any re-encoding).
    pub bytes: u64,
    /// SHA-256 of the bytes sent, once stored.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hash: String,
    /// The bytes, between the tool and the store; never logged.
    #[serde(skip)]
    pub data: Vec<u8>,
}

/// A redirect a fetch went through (or did not follow).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebHop {
    pub status: u16,
    pub to: String,
}

/// A part of a fetched page, as `web_fetch` returned it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebPage {
    /// The URL asked for, normalised.
    pub url: String,
    /// Where the content came from after redirects.
    pub final_url: String,
    pub status: u16,
    pub content_type: Option<String>,
    /// Bytes downloaded.
    pub bytes: u64,
    /// The download stopped at `[web] max_bytes`: the page is longer than what was kept.
    pub capped: bool,
    /// `markdown`, `text` or `raw`.
    pub format: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redirects: Vec<WebHop>,
    /// A redirect that was not followed (its host is not allowed yet): nothing of it was fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unfollowed: Option<WebHop>,
    /// Character offset of `content` in the whole converted text.
    pub offset: usize,
    /// Characters of the whole converted text.
    pub total_chars: usize,
    /// The part shown (at most `max_chars` characters from `offset`).
    pub content: String,
    /// Why the page is not in the format asked for (past a size cap, too slow to convert).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Served from the copy fetched earlier in this session (no download).
    #[serde(default)]
    pub cached: bool,
    pub duration_ms: u64,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// What `web_search` found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebSearch {
    pub query: String,
    /// `searxng`, `brave` or `tavily`.
    pub backend: String,
    pub hits: Vec<SearchHit>,
    /// Results the domain filters removed.
    #[serde(default)]
    pub filtered: usize,
    pub duration_ms: u64,
}
