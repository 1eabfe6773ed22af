//! The modal layers over the panes (helix's compositor in small): the help overlay, the session
//! picker and the approval prompt sit on a stack in the order they opened. A key goes to the top
//! layer first and falls through to the one below, then to the global keys and the focused pane,
//! only when the layer does not consume it. Every layer draws inside the one `modal::modal_frame`.

use crate::tui::modals::choice::ChoicePicker;
use crate::tui::modals::jobs_view::JobsView;
use crate::tui::modals::picker::SessionPicker;
use crate::tui::modals::revert::RevertModal;
use crate::tui::modals::rewind::{RestoreConfirm, RewindPicker};
use crate::tui::modals::trust::TrustPrompt;

/// One layer. The approval prompt's state (its queue of held calls) lives in `App.approval`,
/// fed by events whether or not it is on top; its layer is on the stack while calls are held.
#[derive(Debug)]
pub enum Layer {
    /// The key overlay, scrolled by this many rows.
    Help {
        scroll: usize,
    },
    Picker(SessionPicker),
    Approval,
    /// The project's untrusted rules, asked about at start-up.
    Trust(TrustPrompt),
    /// `/rewind`: pick a message, then what to restore.
    Rewind(RewindPicker),
    /// An undo, redo or rewind shown to confirm.
    Confirm(RestoreConfirm),
    /// The confirmation of a revert from the diff pane.
    Revert(RevertModal),
    /// `/jobs`: the background jobs, one's output, a kill to confirm.
    Jobs(JobsView),
    /// `/mode` or `/model` with no argument.
    Choice(ChoicePicker),
}

/// The stack, bottom first.
#[derive(Debug, Default)]
pub struct Layers {
    stack: Vec<Layer>,
}

impl Layers {
    /// The start-up stack: the trust prompt when project rules wait for the user's word.
    pub fn from_trust(trust: Option<crate::bus::UntrustedRules>) -> Self {
        Self {
            stack: trust
                .map(|pending| Layer::Trust(TrustPrompt::new(pending)))
                .into_iter()
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.stack.is_empty()
    }

    pub fn len(&self) -> usize {
        self.stack.len()
    }

    pub fn push(&mut self, layer: Layer) {
        self.stack.push(layer);
    }

    pub fn get(&self, index: usize) -> Option<&Layer> {
        self.stack.get(index)
    }

    pub fn get_mut(&mut self, index: usize) -> Option<&mut Layer> {
        self.stack.get_mut(index)
    }

    pub fn remove(&mut self, index: usize) {
        if index < self.stack.len() {
            self.stack.remove(index);
        }
    }

    /// The layer on top, which takes the keys first.
    pub fn top(&self) -> Option<&Layer> {
        self.stack.last()
    }

    /// Bottom to top, the order they are drawn in.
    pub fn iter(&self) -> impl Iterator<Item = &Layer> {
        self.stack.iter()
    }

    pub fn help_open(&self) -> bool {
        self.stack.iter().any(|l| matches!(l, Layer::Help { .. }))
    }

    pub fn picker(&self) -> Option<&SessionPicker> {
        self.stack.iter().find_map(|l| match l {
            Layer::Picker(p) => Some(p),
            _ => None,
        })
    }

    /// Opens the help unless it is open already.
    pub fn open_help(&mut self) {
        if !self.help_open() {
            self.stack.push(Layer::Help { scroll: 0 });
        }
    }

    /// Replaces an open picker (a second `/resume`) or opens one.
    pub fn open_picker(&mut self, picker: SessionPicker) {
        self.stack.retain(|l| !matches!(l, Layer::Picker(_)));
        self.stack.push(Layer::Picker(picker));
    }

    /// Opens the mode or model picker (replacing one open).
    pub fn open_choice(&mut self, picker: ChoicePicker) {
        self.stack.retain(|l| !matches!(l, Layer::Choice(_)));
        self.stack.push(Layer::Choice(picker));
    }

    /// The open model picker, if any.
    pub fn model_picker_mut(&mut self) -> Option<&mut ChoicePicker> {
        self.stack.iter_mut().find_map(|l| match l {
            Layer::Choice(p) if p.is_model_picker() => Some(p),
            _ => None,
        })
    }

    /// Replaces an open rewind picker or confirmation with `layer`.
    pub fn open_restore(&mut self, layer: Layer) {
        self.stack
            .retain(|l| !matches!(l, Layer::Rewind(_) | Layer::Confirm(_)));
        self.stack.push(layer);
    }

    /// The message a rewind picker waits for the plan of, if one does.
    pub fn rewind_waiting(&self) -> Option<&crate::bus::RewindPoint> {
        self.stack.iter().find_map(|l| match l {
            Layer::Rewind(p) => p.waiting_for(),
            _ => None,
        })
    }

    /// The open revert confirmation of `target`, if any.
    pub fn revert_mut(&mut self, target: &crate::bus::RevertTarget) -> Option<&mut RevertModal> {
        self.stack.iter_mut().find_map(|l| match l {
            Layer::Revert(modal) if modal.target() == target => Some(modal),
            _ => None,
        })
    }

    /// Closes the revert confirmation of `target`.
    pub fn close_revert(&mut self, target: &crate::bus::RevertTarget) {
        self.stack
            .retain(|l| !matches!(l, Layer::Revert(modal) if modal.target() == target));
    }

    /// Opens a revert confirmation (replacing one already open).
    pub fn open_revert(&mut self, modal: RevertModal) {
        self.stack.retain(|l| !matches!(l, Layer::Revert(_)));
        self.stack.push(Layer::Revert(modal));
    }

    /// Opens the jobs view unless it is open already; true when it was opened now.
    pub fn open_jobs(&mut self, view: JobsView) -> bool {
        if self.jobs_mut().is_some() {
            return false;
        }
        self.stack.push(Layer::Jobs(view));
        true
    }

    /// The open jobs view, if any.
    pub fn jobs_mut(&mut self) -> Option<&mut JobsView> {
        self.stack.iter_mut().find_map(|l| match l {
            Layer::Jobs(view) => Some(view),
            _ => None,
        })
    }

    /// When the open jobs view wants fresh state.
    pub fn jobs_due(&self) -> Option<std::time::Instant> {
        self.stack.iter().find_map(|l| match l {
            Layer::Jobs(view) => Some(view.due()),
            _ => None,
        })
    }

    /// Closes a rewind picker that waits for a plan.
    pub fn close_waiting_rewind(&mut self) {
        self.stack
            .retain(|l| !matches!(l, Layer::Rewind(p) if p.waiting_for().is_some()));
    }

    /// Keeps the approval layer on the stack exactly while calls are held.
    pub fn sync_approval(&mut self, open: bool) {
        let on = self.stack.iter().any(|l| matches!(l, Layer::Approval));
        if open && !on {
            self.stack.push(Layer::Approval);
        } else if !open && on {
            self.stack.retain(|l| !matches!(l, Layer::Approval));
        }
    }
}
