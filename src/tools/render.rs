//! What the model sees of commands, listings, searches, todos and jobs.

use super::{CommandRun, JobReport, Listing, Matches, TodoItem, TodoStatus};

pub fn command_text(run: &CommandRun) -> String {
    let mut out = format!("$ {}\n", run.command);
    out.push_str(&run.stdout);
    if !run.stderr.is_empty() {
        out.push_str("\n[stderr]\n");
        out.push_str(&run.stderr);
    }
    if let Some(code) = run.exit_code.filter(|c| *c != 0) {
        out.push_str(&format!("\n[exit code: {code}]"));
    }
    if let Some(signal) = &run.signal {
        out.push_str(&format!("\n[killed by signal: {signal}]"));
    }
    if let Some(ms) = run.timed_out_after_ms {
        out.push_str(&format!("\n[timed out after {ms}ms]"));
    }
    if run.cancelled {
        out.push_str("\n[cancelled]");
    }
    out
}

pub fn listing_text(listing: &Listing) -> String {
    let mut out = String::new();
    for entry in &listing.entries {
        out.push_str(&entry.path);
        if entry.is_dir {
            out.push('/');
        }
        out.push('\n');
    }
    if listing.truncated {
        out.push_str("[output truncated]\n");
    }
    out
}

pub fn matches_text(matches: &Matches) -> String {
    let mut out = String::new();
    for line in &matches.lines {
        let sep = if line.is_context { '-' } else { ':' };
        out.push_str(&format!("{}{sep}{}{sep}{}\n", line.path, line.line, line.text));
    }
    for (path, count) in &matches.files {
        out.push_str(&format!("{path}:{count}\n"));
    }
    if matches.truncated {
        out.push_str("[output truncated]\n");
    }
    out
}

pub fn todos_text(todos: &[TodoItem]) -> String {
    let mut out = String::new();
    for item in todos {
        let mark = match item.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Completed => "[x]",
        };
        out.push_str(&format!("- {mark} {}\n", item.content));
    }
    out
}

pub fn job_text(report: &JobReport) -> String {
    let mut out = format!("[job {}] {}\n", report.job_id, report.command);
    out.push_str(&report.stdout);
    if !report.stderr.is_empty() {
        out.push_str("\n[stderr]\n");
        out.push_str(&report.stderr);
    }
    if report.running {
        out.push_str("\n[still running]");
    } else if let Some(code) = report.exit_code {
        out.push_str(&format!("\n[exit code: {code}]"));
    }
    out
}
