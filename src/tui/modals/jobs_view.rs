//! The `/jobs` view, a modal layer: the session's background jobs (command, age, state), Enter
//! opens one's output tail, `k` kills the chosen job after a y/n confirmation, Esc goes back
//! and closes. It asks the agent again every `REFRESH` while open, so ages, states and the
//! output follow; the kill is a `UserCommand`: the agent owns the processes.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::bus::{JobEnd, JobLine, UserCommand};
use crate::tui::jobs::{JobList, age};
use crate::tui::keymap::{self, Action, Scope};
use crate::tui::modals::modal::{self, LayerOutcome};
use crate::tui::{theme, wrap};
use crate::visible;

/// How often the open view asks for fresh state and output.
pub const REFRESH: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, PartialEq, Eq)]
enum JobsStage {
    List,
    /// The output of this job.
    Output {
        job: String,
    },
    /// Kill this job? (y/n); `from_output` returns there on n.
    ConfirmKill {
        job: String,
        from_output: bool,
    },
}

/// The last output the agent sent for the job shown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Output {
    job: String,
    stdout: String,
    stderr: String,
}

#[derive(Debug)]
pub struct JobsView {
    selected: usize,
    stage: JobsStage,
    output: Option<Output>,
    /// When to ask the agent again.
    due: Instant,
}

impl JobsView {
    /// Opened now: the caller sends the first `ListJobs`.
    pub fn new(now: Instant) -> Self {
        Self {
            selected: 0,
            stage: JobsStage::List,
            output: None,
            due: now + REFRESH,
        }
    }

    /// Which step the view is at (the list, an output, a kill to confirm): a new step takes
    /// no key for the stand-alone rule's dead time.
    pub fn step(&self) -> u8 {
        match self.stage {
            JobsStage::List => 0,
            JobsStage::Output { .. } => 1,
            JobsStage::ConfirmKill { .. } => 2,
        }
    }

    /// Whether `c` is one of the view's keys now (other characters are text for the input).
    pub fn takes_char(&self, c: char) -> bool {
        match self.stage {
            JobsStage::ConfirmKill { .. } => matches!(c, 'y' | 'n'),
            JobsStage::List | JobsStage::Output { .. } => matches!(c, 'k' | 'q'),
        }
    }

    /// When the view wants fresh state.
    pub fn due(&self) -> Instant {
        self.due
    }

    /// The commands that refresh what is shown, when due; the next refresh is set.
    pub fn refresh(&mut self, now: Instant) -> Vec<UserCommand> {
        if now < self.due {
            return Vec::new();
        }
        self.due = now + REFRESH;
        let mut out = vec![UserCommand::ListJobs];
        if let JobsStage::Output { job } = &self.stage {
            out.push(UserCommand::ShowJobOutput { job: job.clone() });
        }
        out
    }

    /// The agent's answer to `ShowJobOutput`; kept only for the job still shown.
    pub fn show_output(&mut self, job: &JobLine, stdout: &str, stderr: &str) {
        if matches!(&self.stage, JobsStage::Output { job: shown } if *shown == job.id) {
            self.output = Some(Output {
                job: job.id.clone(),
                stdout: stdout.to_string(),
                stderr: stderr.to_string(),
            });
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent, jobs: &JobList) -> LayerOutcome {
        let count = jobs.len();
        self.selected = self.selected.min(count.saturating_sub(1));
        let chosen = jobs.iter().nth(self.selected).map(|job| job.id.clone());
        match self.stage.clone() {
            JobsStage::ConfirmKill { job, from_output } => {
                let back = if from_output {
                    JobsStage::Output { job: job.clone() }
                } else {
                    JobsStage::List
                };
                match key.code {
                    KeyCode::Char('y') | KeyCode::Enter => {
                        self.stage = back;
                        LayerOutcome::Send {
                            command: UserCommand::KillJob { job },
                            close: false,
                        }
                    }
                    KeyCode::Char('n') | KeyCode::Esc => {
                        self.stage = back;
                        LayerOutcome::Open
                    }
                    _ => LayerOutcome::Open,
                }
            }
            JobsStage::Output { job } => match keymap::action(Scope::Jobs, &key) {
                Some(Action::Close) => {
                    self.stage = JobsStage::List;
                    LayerOutcome::Open
                }
                Some(Action::KillJob) => self.ask_kill(job, true, jobs),
                _ => LayerOutcome::Open,
            },
            JobsStage::List => match keymap::action(Scope::Jobs, &key) {
                Some(Action::Close) => LayerOutcome::Closed,
                Some(action @ (Action::SelectPrev | Action::SelectNext)) => {
                    modal::move_selection(&mut self.selected, count, action);
                    LayerOutcome::Open
                }
                Some(Action::Choose) => match chosen {
                    Some(job) => {
                        self.stage = JobsStage::Output { job: job.clone() };
                        self.output = None;
                        LayerOutcome::Send {
                            command: UserCommand::ShowJobOutput { job },
                            close: false,
                        }
                    }
                    None => LayerOutcome::Open,
                },
                Some(Action::KillJob) => match chosen {
                    Some(job) => self.ask_kill(job, false, jobs),
                    None => LayerOutcome::Open,
                },
                _ => LayerOutcome::Open,
            },
        }
    }

    /// Only a running job can be killed; for an ended one the key does nothing.
    fn ask_kill(&mut self, job: String, from_output: bool, jobs: &JobList) -> LayerOutcome {
        if jobs.get(&job).is_some_and(JobLine::running) {
            self.stage = JobsStage::ConfirmKill { job, from_output };
        }
        LayerOutcome::Open
    }

    pub fn render(&self, jobs: &JobList, area: Rect, buf: &mut Buffer) {
        match &self.stage {
            JobsStage::Output { job } => self.render_output(jobs, job, area, buf),
            JobsStage::ConfirmKill {
                job,
                from_output: true,
            } => {
                self.render_output(jobs, job, area, buf);
                self.render_confirm(jobs, job, area, buf);
            }
            JobsStage::ConfirmKill { job, .. } => {
                self.render_list(jobs, area, buf);
                self.render_confirm(jobs, job, area, buf);
            }
            JobsStage::List => self.render_list(jobs, area, buf),
        }
    }

    fn render_list(&self, jobs: &JobList, area: Rect, buf: &mut Buffer) {
        let width = area.width.saturating_sub(4).min(110);
        let rows = jobs.len().max(2) as u16;
        let height = (rows + 2).min(area.height);
        let inner = modal::modal_frame(
            area,
            width,
            height,
            Span::styled(" Background jobs ", theme::bold()),
            Line::styled(
                " ↑↓ choose · Enter output · k kill · Esc close ",
                theme::dim(),
            ),
            theme::border_focused(),
            buf,
        );
        if jobs.is_empty() {
            let lines = [
                "No background jobs in this session.",
                "The model starts them with bash background: true; a command past its timeout goes on as one.",
            ];
            for (i, text) in lines.iter().enumerate().take(usize::from(inner.height)) {
                let text = wrap::truncate(text, usize::from(inner.width));
                buf.set_line(
                    inner.x,
                    inner.y + i as u16,
                    &Line::styled(text, theme::dim()),
                    inner.width,
                );
            }
            return;
        }
        let visible_rows = usize::from(inner.height);
        let first = (self.selected + 1).saturating_sub(visible_rows);
        let id_width = jobs.iter().map(|j| wrap::width(&j.id)).max().unwrap_or(5);
        let state_width = jobs
            .iter()
            .map(|j| wrap::width(&state_words(j).0))
            .max()
            .unwrap_or(7)
            .min(32);
        for (i, job) in jobs.iter().enumerate().skip(first).take(visible_rows) {
            let (state, state_style) = state_words(job);
            let base = if i == self.selected {
                theme::selected()
            } else {
                theme::base()
            };
            let head = format!(
                "{:<id_width$}  {:<state_width$}  {:>7}  ",
                job.id,
                wrap::truncate(&state, state_width),
                age(job.elapsed_ms)
            );
            let room = usize::from(inner.width).saturating_sub(wrap::width(&head));
            let command = wrap::truncate(&shown(&job.command), room.max(1));
            let line = Line::from(vec![
                Span::styled(format!("{:<id_width$}  ", job.id), base),
                Span::styled(
                    format!("{:<state_width$}  ", wrap::truncate(&state, state_width)),
                    state_style.patch(base),
                ),
                Span::styled(format!("{:>7}  ", age(job.elapsed_ms)), base),
                Span::styled(command, base),
            ]);
            buf.set_line(inner.x, inner.y + (i - first) as u16, &line, inner.width);
        }
    }

    fn render_output(&self, jobs: &JobList, id: &str, area: Rect, buf: &mut Buffer) {
        let width = area.width.saturating_sub(4).min(120);
        let height = area.height.saturating_sub(2).max(3).min(area.height);
        let (state, _) = jobs.get(id).map(state_words).unwrap_or_default();
        let command = jobs.get(id).map(|j| shown(&j.command)).unwrap_or_default();
        let title_room = usize::from(width).saturating_sub(8);
        let title = wrap::truncate(&format!(" {id} · {state} · {command} "), title_room);
        let inner = modal::modal_frame(
            area,
            width,
            height,
            Span::styled(title, theme::bold()),
            Line::styled(" k kill · Esc back to the list ", theme::dim()),
            theme::border_focused(),
            buf,
        );
        let output = self.output.as_ref().filter(|o| o.job == id);
        let mut lines: Vec<(String, Style)> = Vec::new();
        match output {
            None => lines.push(("reading its output…".into(), theme::dim())),
            Some(o) if o.stdout.is_empty() && o.stderr.is_empty() => {
                lines.push(("(no output yet)".into(), theme::dim()))
            }
            Some(o) => {
                lines.extend(o.stdout.lines().map(|l| (l.to_string(), theme::base())));
                if !o.stderr.is_empty() {
                    lines.push(("[stderr]".into(), theme::dim()));
                    lines.extend(o.stderr.lines().map(|l| (l.to_string(), theme::error())));
                }
            }
        }
        // The end is what matters: the last lines that fit.
        let rows = usize::from(inner.height);
        let skip = lines.len().saturating_sub(rows);
        for (i, (text, style)) in lines.iter().skip(skip).enumerate() {
            let text = wrap::truncate(&shown(text), usize::from(inner.width));
            buf.set_line(
                inner.x,
                inner.y + i as u16,
                &Line::styled(text, *style),
                inner.width,
            );
        }
    }

    fn render_confirm(&self, jobs: &JobList, id: &str, area: Rect, buf: &mut Buffer) {
        let command = jobs.get(id).map(|j| shown(&j.command)).unwrap_or_default();
        let width = area.width.saturating_sub(8).min(80);
        let inner = modal::modal_frame(
            area,
            width,
            4,
            Span::styled(" Kill this job? ", theme::warning()),
            Line::styled(" y kill · n keep it ", theme::dim()),
            theme::modal_border(),
            buf,
        );
        let text = wrap::truncate(
            &format!("{id} `{command}` and everything it started"),
            usize::from(inner.width),
        );
        buf.set_line(
            inner.x,
            inner.y,
            &Line::styled(text, theme::base()),
            inner.width,
        );
        let note = wrap::truncate("the model is told you stopped it", usize::from(inner.width));
        if inner.height > 1 {
            buf.set_line(
                inner.x,
                inner.y + 1,
                &Line::styled(note, theme::dim()),
                inner.width,
            );
        }
    }
}

/// The command as the user should see it: one line, nothing hidden.
fn shown(text: &str) -> String {
    visible::shown(text).text.replace('\n', " ⏎ ")
}

/// A job's state in words and colour.
fn state_words(job: &JobLine) -> (String, Style) {
    match &job.end {
        None => ("running".into(), theme::accent()),
        Some(end) => {
            let style = match end {
                _ if end.failed() => theme::error(),
                JobEnd::Exited { .. } => theme::ok(),
                JobEnd::Killed { .. } | JobEnd::Gone => theme::warning(),
            };
            (end.describe(), style)
        }
    }
}
