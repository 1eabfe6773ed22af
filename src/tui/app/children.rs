//! The subagents' transcripts: each child's events (`ToolEvent::ChildEvent`, live or read
//! back from its log) folded into a read-only `App` of its own, as a replay shows a session.
//! Enter on the child's card opens it over the whole screen; Esc (or q) comes back. While it
//! runs, what the child has used counts in the parent's status line.

use std::collections::HashMap;

use crossterm::event::{Event, KeyCode, KeyEventKind};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::bus::{AgentEvent, CallId, Usage};
use crate::tool_output::ToolOutput;
use crate::tui::app::App;
use crate::tui::options::TuiOptions;
use crate::tui::panes::cards::{CardState, ToolCard};
use crate::tui::{theme, wrap};
use crate::visible;

/// The children's transcripts, by the parent's call that runs each, and the one open.
#[derive(Debug, Default)]
pub(crate) struct Children {
    apps: HashMap<CallId, Box<App>>,
    open: Option<CallId>,
    /// In a child's own App: what was typed or pasted into its read-only view, which goes on
    /// to the parent's input (nothing typed is lost).
    for_parent: Vec<Event>,
}

impl Children {
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }
}

impl App {
    /// Text typed into this App when it is a child's read-only transcript: kept for the
    /// parent's input; true when it was (a replay's text goes nowhere).
    pub(crate) fn pass_to_parent(&mut self, event: Event) -> bool {
        if !self.status.child {
            return false;
        }
        self.children.for_parent.push(event);
        true
    }
}

impl App {
    /// One of the child's events, into its transcript.
    pub(super) fn fold_child(&mut self, call: &CallId, inner: &AgentEvent) {
        let now = self.now;
        let status = &self.status;
        let child = self.children.apps.entry(call.clone()).or_insert_with(|| {
            let options =
                TuiOptions::read_only(status.provider.clone(), status.model.clone(), status.mode);
            let mut child = Box::new(App::new(&options, now));
            child.status.child = true;
            child
        });
        child.set_now(now);
        child.apply(inner);
        self.count_running_children();
    }

    /// What the running children have used so far joins the status line's counts; a finished
    /// one's figures are in the session's own (its result brought them).
    pub(super) fn count_running_children(&mut self) {
        let running = |call: &CallId| {
            self.transcript
                .card(call)
                .is_some_and(|card| card.is_running())
        };
        self.status.children = self
            .children
            .apps
            .iter()
            .filter(|(call, _)| running(call))
            .fold(Usage::default(), |sum, (_, child)| {
                sum + child.status.totals
            });
    }

    /// Enter on the selected card: a subagent's opens its transcript. False when the card is
    /// no subagent's.
    pub(crate) fn open_selected_child(&mut self) -> bool {
        let Some(card) = self.transcript.selected_card() else {
            return false;
        };
        let Some(Delegated { session, .. }) = delegated(card) else {
            return false;
        };
        let call = card.call.clone();
        if self.children.apps.contains_key(&call) {
            self.children.open = Some(call);
        } else {
            self.flash(format!(
                "no transcript of this subagent here: `cairn replay {}` opens its log",
                visible::name(&session)
            ));
        }
        true
    }

    /// The open child's transcript takes the keys and the mouse, but for Ctrl+C (the
    /// parent's) and Esc, which comes back (or closes what is open inside the child first).
    /// False when none is open or a prompt of the parent's (an approval) is on top.
    pub(crate) fn child_input(&mut self, event: &Event) -> bool {
        if !self.layers.is_empty() {
            return false;
        }
        let Some(call) = self.children.open.clone() else {
            return false;
        };
        let Some(child) = self.children.apps.get_mut(&call) else {
            self.children.open = None;
            return false;
        };
        if let Event::Key(key) = event {
            if key.kind == KeyEventKind::Release {
                return true;
            }
            if key
                .modifiers
                .contains(crossterm::event::KeyModifiers::CONTROL)
                && key.code == KeyCode::Char('c')
            {
                return false;
            }
            // What the user types here counts as typing for the parent's prompts too: an
            // approval that opens under a burst does not take its keys.
            if crate::tui::stand_alone::is_printable(key) {
                self.keys.typed(self.now);
            }
            if key.code == KeyCode::Esc && child.layers.is_empty() && !child.children.is_open() {
                self.children.open = None;
                return true;
            }
        }
        child.set_now(self.now);
        child.handle_input(event);
        self.settle_child();
        true
    }

    /// After the open child took a key (now, or one it held back to see whether it stands
    /// alone): `q`, which quits a replay, comes back to the parent here; what it asks of the
    /// terminal (a copy, the mouse) is the parent's to do; it sends nothing.
    pub(crate) fn settle_child(&mut self) {
        let Some(call) = self.children.open.clone() else {
            return;
        };
        let Some(child) = self.children.apps.get_mut(&call) else {
            return;
        };
        if child.quit.requested() {
            child.quit = Default::default();
            self.children.open = None;
        }
        self.intents.append(&mut child.intents);
        child.commands.clear();
        // Typing there is a message being written: the view closes and the text goes on
        // into the input, in order.
        let typed = std::mem::take(&mut child.children.for_parent);
        if !typed.is_empty() {
            self.children.open = None;
            for event in typed {
                match event {
                    Event::Key(key) => self.type_key(key),
                    Event::Paste(text) => self.handle_paste(&text),
                    _ => {}
                }
            }
        }
    }

    /// The frame clock reaches the open transcript (its spinners, a key it holds back).
    pub(crate) fn open_child_mut(&mut self) -> Option<&mut App> {
        let call = self.children.open.as_ref()?;
        self.children.apps.get_mut(call).map(|child| &mut **child)
    }

    pub(crate) fn open_child(&self) -> Option<&App> {
        let call = self.children.open.as_ref()?;
        self.children.apps.get(call).map(|child| &**child)
    }

    /// Draws the open child's transcript over the whole screen under a line that says whose
    /// it is; false when none is open.
    pub(crate) fn render_child(&self, frame: &mut Frame) -> bool {
        let Some(child) = self.open_child() else {
            return false;
        };
        let area = frame.area();
        let [banner, body] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
        let title = self
            .children
            .open
            .as_ref()
            .and_then(|call| self.transcript.card(call))
            .and_then(delegated)
            .map_or_else(
                || "subagent".to_string(),
                |child| {
                    format!(
                        "subagent {} ({})",
                        visible::name(child.agent),
                        visible::name(child.description)
                    )
                },
            );
        let text = format!(" {title} · read-only · Esc: back ");
        frame.render_widget(
            Paragraph::new(Line::from(Span::styled(
                wrap::truncate(&text, usize::from(area.width).max(1)),
                theme::accent(),
            ))),
            banner,
        );
        child.render_in(frame, body);
        true
    }
}

/// Who a `subagent` card ran: from its result once finished, from its live status before.
struct Delegated<'a> {
    agent: &'a str,
    description: &'a str,
    session: String,
}

fn delegated(card: &ToolCard) -> Option<Delegated<'_>> {
    if let CardState::Finished { result, .. } = &card.state
        && let Some(ToolOutput::Subagent(run)) = &result.output
    {
        return Some(Delegated {
            agent: &run.agent,
            description: &run.description,
            session: run.session.clone(),
        });
    }
    card.subagent.as_ref().map(|status| Delegated {
        agent: &status.agent,
        description: &status.description,
        session: status.session.clone(),
    })
}
