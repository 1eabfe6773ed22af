//! `cairn undo [SESSION] [--redo] [--yes]`: finds the session, shows what would change, asks,
//! and prints what was done (as text or JSON). The undo itself is `time_travel::undo`'s.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use color_eyre::eyre::{Result, WrapErr};

use crate::cli::UsageError;
use crate::dirs::Dirs;
use crate::exec::status;
use crate::session_log;
use crate::time_travel::undo::{self, PendingUndo, PreparedUndo, UndoReport};
use crate::visible;

/// `cairn undo [SESSION] [--redo] [--yes]`: shows what would change (on stderr) and asks
/// y/N on a terminal; `--yes` does it without asking. Without `--yes` and with no terminal to
/// ask on it refuses, having changed nothing. Returns the report to print and the status.
pub fn undo(
    dirs: &Dirs,
    session: Option<&str>,
    json: bool,
    redo: bool,
    yes: bool,
) -> Result<(String, i32)> {
    let cwd = std::env::current_dir().and_then(std::fs::canonicalize)?;
    let (log_path, data_dir) = session_paths(dirs, session, &cwd)?;
    let pending = match undo::prepare(&log_path, &data_dir, redo)? {
        PreparedUndo::Nothing(report) => return report_output(&report, json, redo),
        PreparedUndo::Ready(pending) => pending,
    };
    if !yes {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{}", visible::terminal::clean(&preview(&pending)));
        let verb = if redo { "redo" } else { "undo" };
        if !std::io::stdin().is_terminal() {
            return Err(UsageError(format!(
                "cairn {verb} asks before it changes files, and standard input is not a terminal: \
                 nothing was changed; run `cairn undo{} --yes` to do the above without asking",
                if redo { " --redo" } else { "" }
            ))
            .into());
        }
        let _ = write!(err, "{}? [y/N] ", capitalised(verb));
        let _ = err.flush();
        let mut answer = String::new();
        std::io::stdin()
            .read_line(&mut answer)
            .wrap_err("reading the answer")?;
        if !matches!(answer.trim().to_lowercase().as_str(), "y" | "yes") {
            let text = if json {
                "{\"cancelled\":true}\n".to_string()
            } else {
                format!("{verb} cancelled: nothing was changed\n")
            };
            return Ok((text, status::FAILED));
        }
    }
    let report = undo::finish(*pending)?;
    report_output(&report, json, redo)
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// What it would do, for the user to read before confirming: the turn (its prompt), the
/// checkpoint the files go to, then each file and what happens to it. Names are escaped.
fn preview(pending: &PendingUndo) -> String {
    let target = if pending.redo {
        &pending.turn.after
    } else {
        &pending.turn.before
    };
    let short = &target.0[..target.0.len().min(12)];
    let what = if pending.redo {
        "put back the last undone turn"
    } else {
        "take back the last turn"
    };
    let prompt = pending
        .prompt
        .as_deref()
        .map(|p| {
            let line: String = p.trim().chars().take(60).collect();
            let more = if p.trim().chars().count() > 60 {
                "…"
            } else {
                ""
            };
            format!(" (\"{}{more}\")", visible::name(&line))
        })
        .unwrap_or_default();
    let mut out = format!(
        "cairn undo will {what} of session {}{prompt}, to checkpoint {short}:\n",
        visible::name(&pending.session)
    );
    for change in &pending.changes {
        let verb = match change.action {
            "removed" => "remove",
            "recreated" => "recreate",
            _ => "restore",
        };
        out.push_str(&format!("  {verb:<9} {}\n", visible::name(&change.path)));
    }
    if pending.changes.is_empty() {
        out.push_str("  no file would change\n");
    }
    for c in &pending.conflicts {
        out.push_str(&format!(
            "  leave     {}: {}\n",
            visible::name(&c.path),
            visible::name(&c.why)
        ));
    }
    out
}

/// The log of the session `cairn undo [SESSION]` works on: the named one, or the latest of
/// `cwd`; and the directory of the checkpoint stores.
pub fn session_paths(dirs: &Dirs, session: Option<&str>, cwd: &Path) -> Result<(PathBuf, PathBuf)> {
    let log_path = match session {
        Some(id) => session_log::find_session(dirs.sessions(), id)?,
        None => session_log::latest_in(dirs.sessions(), cwd)?,
    };
    Ok((log_path, dirs.data().to_path_buf()))
}

/// What `cairn undo` prints for a report, and its exit status (1 when there was nothing to
/// undo or a file was left alone).
pub fn report_output(report: &UndoReport, json: bool, redo: bool) -> Result<(String, i32)> {
    let code = i32::from(report.checkpoint.is_none() || !report.conflicts.is_empty());
    if json {
        return Ok((format!("{}\n", serde_json::to_string(report)?), code));
    }
    Ok((report_text(report, redo), code))
}

fn report_text(report: &UndoReport, redo: bool) -> String {
    let Some(checkpoint) = &report.checkpoint else {
        if redo {
            return format!(
                "nothing to redo in session {}: no undo to take back (or a later turn changed files)\n",
                report.session
            );
        }
        return format!(
            "nothing to undo in session {}: no turn changed files (or all were undone)\n",
            report.session
        );
    };
    let short = &checkpoint[..checkpoint.len().min(12)];
    let mut out = if redo {
        format!(
            "redid the last undone turn of session {} (forward to checkpoint {short})\n",
            report.session
        )
    } else {
        format!(
            "undid the last turn of session {} (back to checkpoint {short})\n",
            report.session
        )
    };
    // Names escaped one by one: a name holding a newline or an escape sequence cannot forge
    // a line of this report or drive the terminal.
    for r in &report.reverted {
        out.push_str(&format!("  {:<9} {}\n", r.action, visible::name(&r.path)));
    }
    if report.reverted.is_empty() {
        out.push_str("  no file was changed\n");
    }
    for c in &report.conflicts {
        out.push_str(&format!(
            "  conflict  {}: {}\n",
            visible::name(&c.path),
            visible::name(&c.why)
        ));
    }
    out
}
