//! Tool cards in the transcript: one per call, from `ToolEvent::Requested` to `Finished`.
//! A card shows the tool, a one-line summary of its arguments, a spinner with the elapsed time
//! while it runs, the live tail of command output, then the exit code, error or a compact diff.

use std::time::{Duration, Instant};

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::bus::{CallId, Decision, ToolResult};
use crate::tool_output::{CommandRun, FileChange, ToolOutput};
use crate::tui::figures::format_elapsed;
use crate::tui::{highlight, theme, wrap};
use crate::visible;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Live tail kept in memory per running command, in bytes.
const TAIL_BYTES: usize = 16 * 1024;
const TAIL_LINES: usize = 5;
const OUTPUT_LINES: usize = 6;
const DIFF_LINES: usize = 10;

#[derive(Debug, Clone, PartialEq)]
pub enum CardState {
    /// Requested, not started yet (waiting for approval's end or for earlier calls).
    Queued,
    Running,
    AwaitingApproval,
    Finished {
        result: Box<ToolResult>,
        took: Duration,
    },
}

#[derive(Debug, Clone)]
pub struct ToolCard {
    pub call: CallId,
    pub name: String,
    pub summary: String,
    pub started: Instant,
    pub state: CardState,
    pub decision: Option<Decision>,
    /// Output received so far while running (escape sequences stripped).
    pub tail: String,
    /// Position of this call's edit in the diff pane, when it made one.
    pub diff_index: Option<usize>,
    /// What the user should know although the call ran unasked (`ToolEvent::Warned`).
    pub warnings: Vec<String>,
    /// A web card opened to its whole content (Enter on the selected card).
    pub expanded: bool,
    /// The job a command went on as (started in the background or past its timeout), as
    /// last heard: the card says "running as job-1" and then how it ended.
    pub job: Option<crate::bus::JobLine>,
    /// A subagent's progress, as last heard (`ToolEvent::Subagent`).
    pub subagent: Option<crate::bus::SubagentStatus>,
}

impl ToolCard {
    pub fn new(call: CallId, name: String, args: &Value, now: Instant) -> Self {
        let summary = summarize_args(&name, args);
        Self {
            call,
            name,
            summary,
            started: now,
            state: CardState::Queued,
            decision: None,
            tail: String::new(),
            diff_index: None,
            warnings: Vec::new(),
            expanded: false,
            job: None,
            subagent: None,
        }
    }

    /// Whether Enter opens the card to its whole content: a fetched page, a search, a
    /// command with more output than the card shows.
    pub fn is_expandable(&self) -> bool {
        let CardState::Finished { result, .. } = &self.state else {
            return false;
        };
        match &result.output {
            Some(ToolOutput::WebPage(_) | ToolOutput::WebSearch(_)) => true,
            Some(ToolOutput::Command(run)) => {
                run.truncated
                    || run.stdout.lines().count() + run.stderr.lines().count() > OUTPUT_LINES
            }
            _ => false,
        }
    }

    pub fn is_running(&self) -> bool {
        !matches!(self.state, CardState::Finished { .. })
    }

    pub fn push_tail(&mut self, chunk: &str) {
        let clean = strip_ansi_escapes::strip_str(chunk);
        self.tail.push_str(&clean);
        if self.tail.len() > TAIL_BYTES {
            let mut cut = self.tail.len() - TAIL_BYTES;
            while !self.tail.is_char_boundary(cut) {
                cut += 1;
            }
            self.tail.drain(..cut);
        }
    }

    pub fn finish(&mut self, result: ToolResult, now: Instant) {
        let took = match &result.output {
            Some(ToolOutput::Command(run)) => Duration::from_millis(run.duration_ms),
            _ => now.saturating_duration_since(self.started),
        };
        self.state = CardState::Finished {
            result: Box::new(result),
            took,
        };
        self.tail.clear();
    }

    /// The card as plain text, for the clipboard.
    pub fn copy_text(&self) -> String {
        let mut out = format!("{} {}\n", self.name, self.summary);
        match &self.state {
            CardState::Finished { result, .. } => out.push_str(&result.text),
            _ => out.push_str(&self.tail),
        }
        out
    }

    /// The card's lines at `width`; `now` drives the spinner and elapsed time.
    pub fn lines(&self, width: usize, now: Instant) -> Vec<Line<'static>> {
        let mut out = vec![self.header(width, now)];
        let bar = [Span::styled("  │ ", theme::dim())];
        for warning in &self.warnings {
            out.extend(wrap::wrap(
                &[Span::styled(visible::shown(warning).text, theme::warning())],
                width,
                &[bar[0].clone(), Span::styled("⚠ ", theme::warning())],
                &[bar[0].clone(), Span::raw("  ")],
            ));
        }
        match &self.state {
            CardState::Running => {
                if let Some(status) = &self.subagent {
                    out.push(super::subagent_cards::live_line(status, width));
                }
                let lines: Vec<&str> = self.tail.lines().collect();
                for line in &lines[lines.len().saturating_sub(TAIL_LINES)..] {
                    out.push(clip(&bar, last_redraw(line), theme::dim(), width));
                }
            }
            CardState::Queued => {}
            CardState::AwaitingApproval => {
                out.push(Line::from(vec![
                    bar[0].clone(),
                    Span::styled("waiting for your approval", theme::warning()),
                ]));
            }
            CardState::Finished { result, .. } => self.result_lines(result, width, &mut out),
        }
        out
    }

    fn header(&self, width: usize, now: Instant) -> Line<'static> {
        let (icon, icon_style, status) = match &self.state {
            CardState::Running => {
                let elapsed = now.saturating_duration_since(self.started);
                let frame = SPINNER[(elapsed.as_millis() / 100) as usize % SPINNER.len()];
                (frame, theme::accent(), format_elapsed(elapsed))
            }
            CardState::AwaitingApproval => ("⏸", theme::warning(), "approval".to_string()),
            CardState::Queued => ("·", theme::dim(), "queued".to_string()),
            CardState::Finished { result, .. } if was_cancelled(result) => {
                ("⊘", theme::warning(), "cancelled".to_string())
            }
            CardState::Finished { result, .. }
                if let Some(ToolOutput::Command(run)) = &result.output
                    && let Some(job) =
                        crate::tui::panes::job_cards::header(run, self.job.as_ref()) =>
            {
                job
            }
            CardState::Finished { result, took } => {
                let failed = result.is_error || command_failed(result);
                let icon = if failed { "✗" } else { "✓" };
                let style = if failed { theme::error() } else { theme::ok() };
                // Instant tools (reads, edits) show no time: only the ones that take a while.
                let is_command = matches!(result.output, Some(ToolOutput::Command(_)));
                let time = if is_command || *took >= Duration::from_millis(500) {
                    format_elapsed(*took)
                } else {
                    String::new()
                };
                (icon, style, time)
            }
        };
        let status = if status.is_empty() {
            status
        } else {
            format!("  {status}")
        };
        let fixed = 2 + wrap::width(&self.name) + 2 + wrap::width(&status);
        let summary = wrap::truncate(&self.summary, width.saturating_sub(fixed).max(1));
        Line::from(vec![
            Span::styled(format!("{icon} "), icon_style),
            Span::styled(wrap::clean(&self.name).into_owned(), theme::tool_name()),
            Span::raw("  "),
            Span::raw(summary),
            Span::styled(status, theme::dim()),
        ])
    }

    fn result_lines(&self, result: &ToolResult, width: usize, out: &mut Vec<Line<'static>>) {
        if result.output.is_none() && was_cancelled(result) {
            let text = if result.text == crate::tool_output::CANCELLED {
                "cancelled: it did not run to the end"
            } else {
                "interrupted: cairn stopped before this call finished"
            };
            out.push(clip(
                &[Span::styled("  │ ", theme::dim())],
                text,
                theme::warning(),
                width,
            ));
            return;
        }
        let bar = [Span::styled("  │ ", theme::dim())];
        if let Some(Decision::Deny { message }) = &self.decision {
            // A plan answered with a message is feedback (planning goes on), not a denial.
            let plan = self.name == crate::bus::EXIT_PLAN_MODE;
            let (text, style) = match message {
                Some(m) if plan => (format!("your feedback: {m}"), theme::warning()),
                Some(m) => (format!("denied by you: {m}"), theme::error()),
                None if plan => ("plan rejected by you".to_string(), theme::error()),
                None => ("denied by you".to_string(), theme::error()),
            };
            out.push(clip(&bar, &text, style, width));
            return;
        }
        if self.decision == Some(Decision::ApproveUnsandboxed) {
            let text = "ran outside the sandbox (you approved it with u)";
            out.push(clip(&bar, text, theme::warning(), width));
        }
        match &result.output {
            Some(ToolOutput::Command(run)) => {
                command_lines(run, self.job.as_ref(), width, self.expanded, out)
            }
            Some(ToolOutput::FileChanged(change)) => self.change_lines(change, width, out),
            Some(ToolOutput::WebPage(page)) => {
                crate::tui::panes::web_cards::page_lines(page, width, self.expanded, out)
            }
            Some(ToolOutput::WebSearch(search)) => {
                crate::tui::panes::web_cards::search_lines(search, width, self.expanded, out)
            }
            Some(other) => out.push(clip(&bar, &output_summary(other), theme::dim(), width)),
            None => {
                let style = if result.is_error {
                    theme::error()
                } else {
                    theme::dim()
                };
                for line in result.text.lines().take(4) {
                    out.push(clip(&bar, line, style, width));
                }
            }
        }
    }

    fn change_lines(&self, change: &FileChange, width: usize, out: &mut Vec<Line<'static>>) {
        let bar = Span::styled("  │ ", theme::dim());
        let verb = if change.created { "created" } else { "edited" };
        out.push(Line::from(vec![
            bar.clone(),
            Span::raw(format!("{verb} {} ", visible::name(&change.path))),
            Span::styled(format!("+{}", change.added), theme::added()),
            Span::raw(" "),
            Span::styled(format!("-{}", change.removed), theme::removed()),
        ]));
        let body: Vec<&str> = change
            .diff
            .lines()
            .filter(|l| !l.starts_with("---") && !l.starts_with("+++") && !l.starts_with("diff "))
            .collect();
        let lang = highlight::token_for_path(&change.path);
        for line in body.iter().take(DIFF_LINES) {
            out.push(diff_line(&bar, line, lang, width));
        }
        let more = body.len().saturating_sub(DIFF_LINES);
        let hint = match (more, self.diff_index) {
            (0, Some(i)) => format!("edit #{} · Enter on this card or /diff to review", i + 1),
            (n, Some(i)) => format!(
                "… {n} more lines · edit #{} · Enter on this card or /diff",
                i + 1
            ),
            (n, None) if n > 0 => format!("… {n} more lines"),
            _ => return,
        };
        out.push(clip(&[bar], &hint, theme::dim(), width));
    }
}

fn diff_line(bar: &Span<'static>, line: &str, lang: &str, width: usize) -> Line<'static> {
    let (style, body) = match line.chars().next() {
        Some('+') => (theme::added(), &line[1..]),
        Some('-') => (theme::removed(), &line[1..]),
        Some('@') => return clip(std::slice::from_ref(bar), line, theme::hunk_header(), width),
        _ => (theme::dim(), line.get(1..).unwrap_or("")),
    };
    let sign = line.get(..1).unwrap_or(" ").to_string();
    let mut spans = vec![bar.clone(), Span::styled(sign, style)];
    let highlighted = highlight::highlight(body, lang);
    match highlighted.into_iter().next() {
        Some(code) if !matches!(line.chars().next(), Some(' ') | None) => spans.extend(code),
        Some(code) => spans.extend(
            code.into_iter()
                .map(|s| Span::styled(s.content, theme::dim())),
        ),
        None => {}
    }
    let mut lines = wrap::hard_wrap(&spans, width, &[], &[]);
    lines.truncate(1);
    lines.pop().unwrap_or_default()
}

/// A command's card: its last lines (all it kept, `expanded`), then its facts.
fn command_lines(
    run: &CommandRun,
    job: Option<&crate::bus::JobLine>,
    width: usize,
    expanded: bool,
    out: &mut Vec<Line<'static>>,
) {
    let bar = [Span::styled("  │ ", theme::dim())];
    let mut lines: Vec<(&str, Style)> = run.stdout.lines().map(|l| (l, theme::base())).collect();
    lines.extend(run.stderr.lines().map(|l| (l, theme::error())));
    let skipped = if expanded {
        0
    } else {
        lines.len().saturating_sub(OUTPUT_LINES)
    };
    if skipped > 0 {
        out.push(clip(
            &bar,
            &format!("… {skipped} earlier lines (select the card, Enter shows them)"),
            theme::dim(),
            width,
        ));
    }
    for (line, style) in &lines[skipped..] {
        out.push(clip(
            &bar,
            last_redraw(&strip_ansi_escapes::strip_str(line)),
            *style,
            width,
        ));
    }
    let mut facts = Vec::new();
    match (run.exit_code, &run.signal) {
        (_, Some(signal)) => facts.push((format!("killed by {signal}"), theme::error())),
        (Some(0), None) => facts.push(("exit 0".to_string(), theme::ok())),
        (Some(code), None) => facts.push((format!("exit code {code}"), theme::error())),
        (None, None) => {}
    }
    if let Some(ms) = run.timed_out_after_ms
        && run.job_id.is_none()
    {
        facts.push((
            format!(
                "timed out after {}",
                format_elapsed(Duration::from_millis(ms))
            ),
            theme::error(),
        ));
    }
    if run.cancelled {
        facts.push(("cancelled".to_string(), theme::warning()));
    }
    if run.truncated {
        // Its middle was cut: the whole of it is in the spill file, when it was spilled.
        let fact = match &run.spill_path {
            Some(path) => format!("output truncated; all of it: {}", path.display()),
            None => "output truncated".to_string(),
        };
        facts.push((fact, theme::warning()));
    }
    facts.extend(crate::tui::panes::job_cards::facts(run, job));
    if run.sandboxed {
        facts.push(("sandboxed".to_string(), theme::dim()));
    }
    if run.sandbox_denied {
        facts.push(("refused by the sandbox".to_string(), theme::error()));
    }
    if !run.runs_later.is_empty() {
        let names: Vec<String> = run
            .runs_later
            .items()
            .iter()
            .map(|p| visible::name(p))
            .collect();
        facts.push((
            format!("⚠ changed files your tools run later: {}", names.join(", ")),
            theme::warning(),
        ));
    }
    if !run.put_back.is_empty() {
        facts.push((
            format!("cairn put back {}", run.put_back.items().join(", ")),
            theme::warning(),
        ));
    }
    if !facts.is_empty() {
        let mut spans = vec![bar[0].clone()];
        for (i, (text, style)) in facts.into_iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled(" · ", theme::dim()));
            }
            spans.push(Span::styled(text, style));
        }
        out.push(Line::from(spans));
    }
}

/// A call stopped by the user (or by cairn stopping): neither a success nor a failure.
fn was_cancelled(result: &ToolResult) -> bool {
    result.text == crate::tool_output::CANCELLED
        || result.text == "[interrupted]"
        || matches!(&result.output, Some(ToolOutput::Command(run)) if run.cancelled)
}

fn command_failed(result: &ToolResult) -> bool {
    match &result.output {
        Some(ToolOutput::Command(run)) => {
            run.exit_code.is_some_and(|c| c != 0)
                || run.signal.is_some()
                || run.timed_out_after_ms.is_some()
                || run.cancelled
        }
        _ => false,
    }
}

fn output_summary(output: &ToolOutput) -> String {
    match output {
        ToolOutput::FileSlice(s) => {
            let last = s.offset + s.lines.len().saturating_sub(1);
            format!(
                "read {} lines {}-{last} of {}",
                visible::name(&s.path),
                s.offset,
                s.total_lines
            )
        }
        ToolOutput::Listing(l) => {
            let more = if l.truncated { " (capped)" } else { "" };
            format!(
                "{} entries in {}{more}",
                l.entries.len(),
                visible::name(&l.root)
            )
        }
        ToolOutput::Matches(m) => {
            let more = if m.truncated { " (capped)" } else { "" };
            format!(
                "{} matches for `{}`{more}",
                m.total_matches,
                visible::name(&m.pattern)
            )
        }
        ToolOutput::Todos { todos } => {
            let done = todos
                .iter()
                .filter(|t| t.status == crate::tool_output::TodoStatus::Completed)
                .count();
            format!("todo list updated: {done}/{} done", todos.len())
        }
        ToolOutput::Job(job) => {
            let state = if job.running {
                "running"
            } else if job.killed {
                "killed"
            } else {
                "finished"
            };
            format!("job {} {state}", job.job_id)
        }
        ToolOutput::Command(run) => visible::shown(&run.command).text.replace('\n', " ⏎ "),
        ToolOutput::FileChanged(c) => {
            format!("{} +{} -{}", visible::name(&c.path), c.added, c.removed)
        }
        ToolOutput::Image(i) => format!(
            "image {} ({}, {}×{})",
            visible::name(&i.path),
            crate::content::human_bytes(i.bytes),
            i.width,
            i.height
        ),
        ToolOutput::WebPage(page) => crate::tui::panes::web_cards::page_summary(page),
        ToolOutput::WebSearch(search) => crate::tui::panes::web_cards::search_summary(search),
        ToolOutput::Skill(load) => format!("skill {} loaded ({})", load.name, load.dir),
        ToolOutput::Mcp(call) => format!(
            "{} · {} ({} ms)",
            visible::name(&call.server),
            visible::name(&call.tool),
            call.duration_ms
        ),
        ToolOutput::Answer(answer) => visible::shown(&answer.summary).text,
        ToolOutput::Subagent(run) => super::subagent_cards::summary(run),
    }
}

/// What a terminal would show of a line redrawn with carriage returns (progress bars): the
/// text after the last one.
fn last_redraw(line: &str) -> &str {
    let line = line.trim_end_matches('\r');
    line.rsplit('\r').next().unwrap_or(line)
}

/// One line, cut to `width`, after a prefix.
fn clip(prefix: &[Span<'static>], text: &str, style: Style, width: usize) -> Line<'static> {
    let used: usize = prefix.iter().map(|s| wrap::width(&s.content)).sum();
    let mut spans = prefix.to_vec();
    spans.push(Span::styled(
        wrap::truncate(text, width.saturating_sub(used).max(1)),
        style,
    ));
    Line::from(spans)
}

/// The argument a user recognises a call by.
pub fn summarize_args(name: &str, args: &Value) -> String {
    let field = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_string);
    let summary = match name {
        "bash" | "!" | "!!" => field("command"),
        "read_file" | "write_file" | "edit_file" | "list_dir" => field("path"),
        "glob" => field("pattern"),
        "grep" => field("pattern").map(|p| match field("path") {
            Some(path) => format!("{p}  in {path}"),
            None => p,
        }),
        "todo_write" => args
            .get("todos")
            .and_then(Value::as_array)
            .map(|t| format!("{} items", t.len())),
        "job_output" | "job_kill" => field("job_id"),
        "web_fetch" => field("url").map(|url| match args.get("offset").and_then(Value::as_u64) {
            Some(offset) if offset > 0 => format!("{url}  from {offset}"),
            _ => url,
        }),
        "web_search" => field("query"),
        "subagent" => field("description").map(|d| match field("agent") {
            Some(agent) => format!("{agent}: {d}"),
            None => d,
        }),
        _ => None,
    };
    // What the card shows is what runs: characters that would not show are `<U+…>`.
    let text = summary.unwrap_or_else(|| args.to_string());
    visible::shown(&text).text.replace('\n', " ⏎ ")
}

#[cfg(test)]
#[path = "cards_tests.rs"]
mod tests;
