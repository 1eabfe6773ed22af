//! The panes: the transcript and the cards in it (tool, job, web, hook, `/cost`), the diff browser
//! and the diff lines it shares with the prompts, the todo pane, the status line and the
//! first screen.

pub mod cards;
pub mod cost;
pub(super) mod diff_body;
pub(super) mod diff_lines;
pub(super) mod diff_model;
pub mod diffs;
pub(super) mod hook_card;
pub(super) mod job_cards;
pub mod status;
pub(super) mod subagent_cards;
pub mod todos;
pub mod transcript;
pub(super) mod web_cards;
pub mod welcome;
