//! `/undo`, `/redo` and `/rewind`: the files of the workspace go back (or forward) between
//! checkpoints where they are still what cairn left, and the conversation forks back to just
//! before an earlier user message. The plan is published first for the user to confirm, and
//! judged again when it is applied. Everything is logged (`Checkpoint` records as `cairn undo`
//! writes them, `Fork`), so a resume and `cairn undo` agree with what happened here, and the
//! model is told what changed under it.
//!
//! After a conversation rewind the read stamps of files the dropped part read or wrote are
//! forgotten (unless the kept conversation shows a read of them): the model must not edit a
//! file whose content it no longer has. Stamps need nothing after a file restore: they hold
//! the content seen, and a restored file no longer matches. Todos come back with the
//! conversation; session rules stay (they are the user's approvals, not the model's state).

use crate::bus::{ConversationEvent, ReportEvent, TimeTravelEvent};
use std::collections::HashSet;
use std::sync::Arc;

use super::Agent;
use super::{history, local_time};
use crate::bus::{AgentEvent, Restore, RestorePlan, RewindPoint};
use crate::checkpoint::CheckpointStore;
use crate::llm::ChatMessage;
use crate::session_log::{self, Record};
use crate::time_travel::TimeTravelError;
use crate::time_travel::ledger::Ledger;
use crate::time_travel::notes::note_for;
use crate::time_travel::restore::FileMove;

/// What a restore does, worked out from the log.
struct RestoreWork {
    files: Option<FileMove>,
    /// Fork the conversation to just before this user record, whose text this is.
    fork: Option<(usize, String)>,
}

impl Agent {
    fn records(&self) -> Option<Vec<Record>> {
        match session_log::read_log(self.session.log.path()) {
            Ok(loaded) => Some(loaded.records),
            Err(err) => {
                self.warn(&format!("cannot read the session log: {err}"));
                None
            }
        }
    }

    /// Publishes the current branch's user messages, newest first.
    pub(super) fn list_rewind_points(&mut self) {
        let Some(records) = self.records() else {
            return;
        };
        let ledger = Ledger::of(&records);
        let now = std::time::SystemTime::now();
        let points = history::rebuild(&records)
            .users
            .into_iter()
            .rev()
            .map(|u| RewindPoint {
                changes: ledger.changes_from(u.at),
                when: u.time.as_deref().and_then(|t| local_time::label(t, now)),
                at: u.at,
                step: u.step,
                text: u.text,
            })
            .collect();
        self.emit(AgentEvent::TimeTravel(TimeTravelEvent::RewindPoints {
            points,
        }));
    }

    /// Plans (`apply` false) or does an undo, redo or rewind.
    pub(super) async fn restore(&mut self, what: Restore, apply: bool) {
        let Some(records) = self.records() else {
            return;
        };
        let Some(work) = self.work_of(&what, &records) else {
            return;
        };
        let store = match &work.files {
            Some(_) => match self.checkpoint_store() {
                Some(store) => Some(store),
                None => {
                    return self
                        .warn("checkpoints are off in this session: no file can be restored");
                }
            },
            None => None,
        };
        let moved = match (&work.files, store) {
            (Some(m), Some(store)) => {
                // Background jobs stand still while files are put back (and go on after,
                // whether the restore worked or not).
                let _paused = match apply {
                    true => Some(self.engine.tool_env.jobs.pause_all().await),
                    false => None,
                };
                let outcome = run_move(store, m, apply).await;
                match outcome {
                    Ok(plan) => plan,
                    Err(err) => {
                        return self.warn(&format!("the files could not be restored: {err}"));
                    }
                }
            }
            _ => RestorePlan::default(),
        };
        if !apply {
            self.emit(AgentEvent::TimeTravel(TimeTravelEvent::RestorePlan {
                what,
                plan: moved,
            }));
            return;
        }
        if let Some(m) = &work.files {
            for (commit, kind) in &m.log {
                self.record(&Record::Checkpoint {
                    commit: commit.clone(),
                    kind: *kind,
                });
            }
        }
        if let Some((at, text)) = &work.fork {
            self.fork(*at, text);
        }
        let note = note_for(&what, &moved);
        self.record(&Record::Restored {
            what: what.clone(),
            done: moved.clone(),
        });
        self.emit(AgentEvent::TimeTravel(TimeTravelEvent::Restored {
            what,
            done: moved,
        }));
        if let Some(note) = note {
            self.tell_model(note);
        }
        self.report_context();
    }

    /// What `what` comes to in this session; None (said as a warning) when there is nothing
    /// to do.
    fn work_of(&self, what: &Restore, records: &[Record]) -> Option<RestoreWork> {
        let ledger = Ledger::of(records);
        match what {
            Restore::Undo => {
                let Some(files) = FileMove::undo(&ledger) else {
                    self.warn("nothing to undo: no turn of this session changed files (or all were undone)");
                    return None;
                };
                Some(RestoreWork {
                    files: Some(files),
                    fork: None,
                })
            }
            Restore::Redo => {
                let Some(files) = FileMove::redo(&ledger) else {
                    self.warn("nothing to redo: no undo to take back (or files changed since)");
                    return None;
                };
                Some(RestoreWork {
                    files: Some(files),
                    fork: None,
                })
            }
            Restore::Rewind {
                at,
                files,
                conversation,
            } => {
                let Some(user) = history::rebuild(records)
                    .users
                    .into_iter()
                    .find(|u| u.at == *at)
                else {
                    self.warn("that message is not in the conversation any more");
                    return None;
                };
                let moves = match files {
                    true => FileMove::rewind(&ledger, *at),
                    false => None,
                };
                if !conversation && moves.is_none() {
                    self.warn("nothing to restore: no file changed since that message (or the changes were undone)");
                    return None;
                }
                Some(RestoreWork {
                    files: moves,
                    fork: conversation.then_some((*at, user.text)),
                })
            }
        }
    }

    /// Forks the conversation back to just before the user record `at`: logged, rebuilt from
    /// the log exactly as a resume would, and shown again from the start.
    fn fork(&mut self, at: usize, text: &str) {
        self.record(&Record::Fork { at });
        let Some(records) = self.records() else {
            return;
        };
        let store = self.image_store();
        let rebuilt = history::rebuild_loading(&records, &|image| store.get(&image.hash).ok());
        // The next request starts a new prefix, as after a compaction.
        let dropped = self.session.conversation.replace(rebuilt.messages);
        self.forget_dropped_reads(&dropped);
        self.session.todos = rebuilt.todos;
        if let Some(told) = rebuilt.told {
            self.session.told = told;
        }
        self.session.request_text = rebuilt.request_text;
        self.emit(AgentEvent::Conversation(ConversationEvent::Reset));
        for event in rebuilt.events {
            self.emit(event);
        }
        // The history replays the branch's old mode and model; what applies now is ours.
        self.emit(AgentEvent::Report(ReportEvent::ModeChanged {
            mode: self.shared.mode(),
        }));
        self.emit(AgentEvent::Report(ReportEvent::ModelChanged {
            model: self.engine.model.model(),
        }));
        self.emit(AgentEvent::TimeTravel(TimeTravelEvent::Rewound {
            at,
            text: text.to_string(),
        }));
    }

    /// Forgets the read stamps of files the dropped conversation read or wrote, unless the
    /// kept one shows their content.
    fn forget_dropped_reads(&self, dropped: &[ChatMessage]) {
        let workspace = &self.engine.tool_env.workspace;
        let resolve = |raw: &str| crate::fs::paths::resolve(workspace, raw).ok();
        let seen: HashSet<_> = super::compact::visible_reads(self.session.conversation.messages())
            .into_iter()
            .filter_map(|p| resolve(&p))
            .map(|p| p.key())
            .collect();
        for (_, raw) in super::compact::calls_of(dropped, &["read_file", "write_file", "edit_file"])
        {
            if let Some(real) = resolve(&raw)
                && !seen.contains(&real.key())
            {
                self.engine.tool_env.reads.forget(&real);
            }
        }
    }
}

/// Plans the move (and with `apply`, does it) off the async threads.
async fn run_move(
    store: Arc<CheckpointStore>,
    m: &FileMove,
    apply: bool,
) -> Result<RestorePlan, TimeTravelError> {
    let m = m.clone();
    Ok(tokio::task::spawn_blocking(move || m.run(&store, apply)).await??)
}
