//! What the model sees of commands, listings, searches, todos and jobs: short text with the
//! business facts as markers (`[exit code: 1]`, `[timed out after 120000ms]`, truncation).

use super::{
    CANCELLED, CommandRun, GrepMode, ImageView, JobReport, Listing, MAX_TIMEOUT_MS, Matches,
    TodoItem, TodoStatus, ToolOutput,
};

/// Longest echo of the command; the model wrote it, so a long script is not sent back whole.
const COMMAND_ECHO: usize = 200;

pub fn command_text(run: &CommandRun) -> String {
    let mut out = format!("$ {}\n", command_echo(&run.command));
    if let Some(job) = &run.job_id
        && run.background
    {
        out.push_str(&format!(
            "[started in the background as {job}; read its output with job_output, stop it with job_kill]"
        ));
        return out;
    }
    push_streams(&mut out, &run.stdout, &run.stderr);
    let mut markers = Vec::new();
    if let Some(code) = run.exit_code.filter(|c| *c != 0) {
        markers.push(format!("[exit code: {code}]"));
    }
    if let Some(signal) = &run.signal {
        markers.push(format!("[killed by signal: {signal}]"));
    }
    match (run.timed_out_after_ms, &run.job_id) {
        (Some(ms), Some(job)) => markers.push(format!(
            "[timed out after {ms}ms; still running as background job {job}: job_output reads \
             its further output, job_kill stops it]"
        )),
        (Some(ms), None) => markers.push(format!("[timed out after {ms}ms]")),
        (None, _) => {}
    }
    if run.cancelled {
        markers.push(CANCELLED.to_owned());
    }
    if run.sandbox_denied {
        markers.push(
            "[sandbox: a write or a connection was refused; sandboxed commands write only in the workspace and temp dirs (background jobs not in .git/, .cairn/ or new top-level entries), read-only ones nowhere, with no network. Calling it again asks the user, who can run it without the sandbox]"
                .to_owned(),
        );
    }
    if !run.limits_hit.is_empty() {
        markers.push(limit_marker(run.limits_hit.items()));
    }
    if run.socket_denied() {
        markers.push(socket_marker(run.refused_sockets.items()));
    }
    if !run.put_back.is_empty() {
        markers.push(put_back_marker(run.put_back.items()));
    }
    if run.timeout_clamped {
        markers.push(format!(
            "[timeout_ms is above the maximum; clamped to {}ms]",
            MAX_TIMEOUT_MS
        ));
    }
    if run.stdout.is_empty() && run.stderr.is_empty() && markers.is_empty() {
        out.push_str("(no output)");
    }
    push_markers(&mut out, &markers);
    out
}

/// The limits a command (or a job) hit.
fn limit_marker(hit: &[String]) -> String {
    format!(
        "[limit: the command hit its limit of {}; a fork or an allocation beyond it failed or was killed. `[sandbox]` max_processes / max_memory_mb (read_only_* for commands run unasked) set the limits]",
        hit.join(" and ")
    )
}

/// Why a command that failed may have: the Unix sockets its sandbox refused.
fn socket_marker(refused: &[String]) -> String {
    format!(
        "[sandbox: refused Unix socket: {}. Sandboxed commands reach no local server (tmux, screen, Docker, a bus, an agent, an editor) outside the workspace and their temp dir, read-only ones none, unless `[sandbox] allow_unix_sockets` lists it. Calling it again asks the user, who can run it without the sandbox]",
        refused.join(", ")
    )
}

pub fn job_text(report: &JobReport) -> String {
    let mut out = format!("[{}] $ {}\n", report.job_id, command_echo(&report.command));
    push_streams(&mut out, &report.stdout, &report.stderr);
    let quiet = report.stdout.is_empty() && report.stderr.is_empty();
    let mut markers = Vec::new();
    if report.running {
        let secs = report.elapsed_ms / 1000;
        let news = if quiet { "no new output; " } else { "" };
        markers.push(format!("[{news}still running after {secs}s]"));
    } else {
        if quiet {
            markers.push("[no new output]".to_owned());
        }
        if report.stopped_by_user {
            markers.push("[stopped by the user]".to_owned());
        } else if report.killed {
            markers.push("[stopped by job_kill]".to_owned());
        }
        match (report.exit_code, &report.signal) {
            (_, Some(signal)) => markers.push(format!("[killed by signal: {signal}]")),
            (Some(0), None) => markers.push("[exited successfully]".to_owned()),
            (Some(code), None) => markers.push(format!("[exit code: {code}]")),
            (None, None) => markers.push("[ended]".to_owned()),
        }
    }
    if !report.limits_hit.is_empty() {
        markers.push(limit_marker(report.limits_hit.items()));
    }
    let failed = report.signal.is_some() || report.exit_code.is_some_and(|code| code != 0);
    if !report.refused_sockets.is_empty() && failed {
        markers.push(socket_marker(report.refused_sockets.items()));
    }
    if !report.put_back.is_empty() {
        markers.push(put_back_marker(report.put_back.items()));
    }
    push_markers(&mut out, &markers);
    out
}

fn command_echo(command: &str) -> String {
    let command = command.trim();
    let first_line = command.lines().next().unwrap_or_default();
    if first_line.len() == command.len() && command.len() <= COMMAND_ECHO {
        return command.to_owned();
    }
    let mut end = first_line.len().min(COMMAND_ECHO);
    while !first_line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} …", &first_line[..end])
}

fn push_streams(out: &mut String, stdout: &str, stderr: &str) {
    out.push_str(stdout);
    if !stderr.is_empty() {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("[stderr]\n");
        out.push_str(stderr);
    }
}

/// The text of a command's result about what was put back.
fn put_back_marker(put_back: &[String]) -> String {
    format!(
        "[cairn put back {}: sandboxed commands may not change git config, hooks or the agent settings (.cairn/, .agents/, .claude/); ask the user to run it without the sandbox]",
        put_back.join(", ")
    )
}

fn push_markers(out: &mut String, markers: &[String]) {
    for marker in markers {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(marker);
    }
}

pub fn listing_text(listing: &Listing) -> String {
    let mut out = String::new();
    for entry in &listing.entries {
        out.push_str(&entry.path);
        if entry.is_dir && !entry.path.ends_with('/') {
            out.push('/');
        }
        out.push('\n');
    }
    if listing.entries.is_empty() {
        out.push_str("(no entries)\n");
    }
    if listing.truncated {
        match listing.omitted {
            Some(n) => out.push_str(&format!(
                "[output truncated: {n} more entries not shown; narrow the path or pattern]\n"
            )),
            None => out.push_str("[output truncated: narrow the path or pattern]\n"),
        }
    }
    push_unreadable(&mut out, &listing.unreadable);
    out
}

/// The places a walk could not enter, one marker each.
fn push_unreadable(out: &mut String, unreadable: &[String]) {
    for place in unreadable {
        out.push_str(&format!("[not read: {place}]\n"));
    }
}

pub fn matches_text(matches: &Matches) -> String {
    let mut out = String::new();
    match matches.mode {
        GrepMode::Content => {
            for line in &matches.lines {
                let sep = if line.is_context { '-' } else { ':' };
                out.push_str(&format!(
                    "{}{sep}{}{sep}{}\n",
                    line.path, line.line, line.text
                ));
            }
        }
        GrepMode::Files => {
            for (path, _) in &matches.files {
                out.push_str(&format!("{path}\n"));
            }
        }
        GrepMode::Count => {
            for (path, count) in &matches.files {
                out.push_str(&format!("{path}:{count}\n"));
            }
        }
    }
    if out.is_empty() {
        out.push_str(&format!("No matches for `{}`\n", matches.pattern));
    }
    for (path, lines) in &matches.long_lines_skipped {
        let lines = if *lines == 1 {
            "1 line".to_owned()
        } else {
            format!("{lines} lines")
        };
        out.push_str(&format!(
            "[skipped {lines} longer than 1 MiB in {path}: not searched]\n"
        ));
    }
    push_unreadable(&mut out, &matches.unreadable);
    if matches.truncated {
        out.push_str(&format!(
            "[output truncated: {} matches in total; narrow the pattern, path or glob]\n",
            matches.total_matches
        ));
    }
    out
}

pub fn todos_text(todos: &[TodoItem]) -> String {
    if todos.is_empty() {
        return "Todo list cleared.\n".to_owned();
    }
    let count = |status| todos.iter().filter(|item| item.status == status).count();
    let (done, active) = (count(TodoStatus::Completed), count(TodoStatus::InProgress));
    let items = if todos.len() == 1 { "item" } else { "items" };
    let mut out = format!(
        "Todo list updated: {} {items}, {done} completed, {active} in progress, {} pending.\n",
        todos.len(),
        count(TodoStatus::Pending)
    );
    for item in todos {
        let mark = match item.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Completed => "[x]",
        };
        out.push_str(&format!("- {mark} {}\n", item.content));
    }
    if active > 1 {
        out.push_str(&format!(
            "Note: {active} items are in_progress; keep one in progress at a time.\n"
        ));
    }
    out
}

/// The model's text of each output, next to the values it projects, so the bus (which makes a
/// result's text from its output) depends only downward.
impl ToolOutput {
    /// The short text the model sees. Business facts appear here as markers.
    pub fn model_text(&self) -> String {
        match self {
            Self::Command(run) => command_text(run),
            Self::FileSlice(slice) => super::file_text::slice_text(slice),
            Self::FileChanged(change) => super::file_text::change_text(change),
            Self::Listing(listing) => listing_text(listing),
            Self::Matches(matches) => matches_text(matches),
            Self::Todos { todos } => todos_text(todos),
            Self::Job(report) => job_text(report),
            Self::Image(image) => image_text(image),
            Self::WebPage(page) => super::web_text::page_text(page),
            Self::WebSearch(search) => super::web_text::search_text(search),
            Self::Skill(load) => load.text.clone(),
            Self::Mcp(call) => call.text.clone(),
            Self::Answer(answer) => answer.text.clone(),
            Self::Subagent(run) => run.text.clone(),
        }
    }
}

/// What the model reads in the call's result; the image itself follows as an image part.
fn image_text(image: &ImageView) -> String {
    let scaled = if (image.width, image.height) != (image.original_width, image.original_height) {
        format!(
            ", downscaled from {}×{}",
            image.original_width, image.original_height
        )
    } else {
        String::new()
    };
    format!(
        "{}: {} image, {}×{}{scaled}; it follows as an image after the results of this step",
        image.path, image.media_type, image.width, image.height
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> CommandRun {
        CommandRun {
            command: "make test".into(),
            exit_code: Some(0),
            ..CommandRun::default()
        }
    }

    #[test]
    fn command_texts() {
        let cases = [
            (
                CommandRun {
                    stdout: "ok\n".into(),
                    ..run()
                },
                "$ make test\nok\n",
            ),
            (run(), "$ make test\n(no output)"),
            (
                CommandRun {
                    stdout: "a".into(),
                    stderr: "boom\n".into(),
                    exit_code: Some(2),
                    ..run()
                },
                "$ make test\na\n[stderr]\nboom\n[exit code: 2]",
            ),
            (
                CommandRun {
                    exit_code: None,
                    signal: Some("SIGTERM".into()),
                    timed_out_after_ms: Some(5000),
                    ..run()
                },
                "$ make test\n[killed by signal: SIGTERM]\n[timed out after 5000ms]",
            ),
            (
                CommandRun {
                    exit_code: None,
                    signal: Some("SIGKILL".into()),
                    cancelled: true,
                    ..run()
                },
                "$ make test\n[killed by signal: SIGKILL]\n[cancelled]",
            ),
            (
                CommandRun {
                    job_id: Some("job-3".into()),
                    background: true,
                    exit_code: None,
                    ..run()
                },
                "$ make test\n[started in the background as job-3; read its output with job_output, stop it with job_kill]",
            ),
            (
                CommandRun {
                    timeout_clamped: true,
                    ..run()
                },
                "$ make test\n[timeout_ms is above the maximum; clamped to 600000ms]",
            ),
            (
                CommandRun {
                    command: "cat <<EOF > f\nlots\nEOF".into(),
                    stderr: "cat: f: Permission denied\n".into(),
                    exit_code: Some(1),
                    sandbox_denied: true,
                    ..run()
                },
                "$ cat <<EOF > f …\n[stderr]\ncat: f: Permission denied\n[exit code: 1]\n[sandbox: a write or a connection was refused; sandboxed commands write only in the workspace and temp dirs (background jobs not in .git/, .cairn/ or new top-level entries), read-only ones nowhere, with no network. Calling it again asks the user, who can run it without the sandbox]",
            ),
        ];
        for (run, expected) in cases {
            assert_eq!(command_text(&run), expected);
        }
    }

    #[test]
    fn job_texts() {
        let base = JobReport {
            job_id: "job-1".into(),
            command: "npm run dev".into(),
            ..JobReport::default()
        };
        let cases = [
            (
                JobReport {
                    running: true,
                    stdout: "ready\n".into(),
                    elapsed_ms: 2500,
                    ..base.clone()
                },
                "[job-1] $ npm run dev\nready\n[still running after 2s]",
            ),
            (
                JobReport {
                    running: true,
                    elapsed_ms: 9000,
                    ..base.clone()
                },
                "[job-1] $ npm run dev\n[no new output; still running after 9s]",
            ),
            (
                JobReport {
                    exit_code: Some(0),
                    stdout: "done\n".into(),
                    ..base.clone()
                },
                "[job-1] $ npm run dev\ndone\n[exited successfully]",
            ),
            (
                JobReport {
                    killed: true,
                    signal: Some("SIGTERM".into()),
                    ..base.clone()
                },
                "[job-1] $ npm run dev\n[no new output]\n[stopped by job_kill]\n[killed by signal: SIGTERM]",
            ),
            (
                JobReport {
                    killed: true,
                    stopped_by_user: true,
                    signal: Some("SIGTERM".into()),
                    ..base.clone()
                },
                "[job-1] $ npm run dev\n[no new output]\n[stopped by the user]\n[killed by signal: SIGTERM]",
            ),
            (
                JobReport {
                    signal: Some("SIGKILL".into()),
                    limits_hit: crate::tool_output::RareList::new(vec!["256 processes".into()]),
                    refused_sockets: crate::tool_output::RareList::new(vec![
                        "/tmp/tmux-1000/default".into(),
                    ]),
                    ..base.clone()
                },
                "[job-1] $ npm run dev\n[no new output]\n[killed by signal: SIGKILL]\n[limit: the command hit its limit of 256 processes; a fork or an allocation beyond it failed or was killed. `[sandbox]` max_processes / max_memory_mb (read_only_* for commands run unasked) set the limits]\n[sandbox: refused Unix socket: /tmp/tmux-1000/default. Sandboxed commands reach no local server (tmux, screen, Docker, a bus, an agent, an editor) outside the workspace and their temp dir, read-only ones none, unless `[sandbox] allow_unix_sockets` lists it. Calling it again asks the user, who can run it without the sandbox]",
            ),
        ];
        for (report, expected) in cases {
            assert_eq!(job_text(&report), expected);
        }
    }

    #[test]
    fn the_put_back_marker_says_what_and_why() {
        let text = put_back_marker(&[".git/config (changed)".into()]);
        assert_eq!(
            text,
            "[cairn put back .git/config (changed): sandboxed commands may not change git config, hooks or the agent settings (.cairn/, .agents/, .claude/); ask the user to run it without the sandbox]"
        );
    }

    #[test]
    fn todo_texts() {
        let item = |content: &str, status| TodoItem {
            content: content.into(),
            status,
        };
        let todos = [
            item("read the code", TodoStatus::Completed),
            item("fix the bug", TodoStatus::InProgress),
            item("add a test", TodoStatus::Pending),
        ];
        assert_eq!(
            todos_text(&todos),
            "Todo list updated: 3 items, 1 completed, 1 in progress, 1 pending.\n\
             - [x] read the code\n- [~] fix the bug\n- [ ] add a test\n"
        );
        let two = [
            item("a", TodoStatus::InProgress),
            item("b", TodoStatus::InProgress),
        ];
        assert!(
            todos_text(&two)
                .ends_with("Note: 2 items are in_progress; keep one in progress at a time.\n")
        );
        assert_eq!(todos_text(&[]), "Todo list cleared.\n");
    }
}
