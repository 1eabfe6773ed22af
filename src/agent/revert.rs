//! Reverting a change from the diff pane: `PreviewRevert` computes the reverse patch against
//! the files as they are now (`plan`) and answers with `RevertPreview`; `Revert` computes it
//! again under the paths' write-queue turns and applies it only when the files are still what
//! the preview showed. The change is found in the session log (the truth, also after a
//! resume); whole contents (a deleted file, a diff cut for size) come from the checkpoints
//! around it. A revert is logged (`Record::Revert`), shown as a change of its own (so it can
//! be reverted again), and the model is told in its next request what is gone.
//!
//! The agent serves commands one at a time, so a revert never runs while the model's turn
//! does: the TUI refuses the keys while a turn runs (the model may be editing the same file,
//! and a queued revert would apply to a state nobody previewed).

use crate::bus::{ReportEvent, TimeTravelEvent};
use std::sync::Arc;

use super::Agent;
use crate::bus::{AgentEvent, RevertPlan, RevertTarget};
use crate::checkpoint::{CheckpointId, CheckpointStore};
use crate::session_log::{self, Record};
use crate::time_travel::TimeTravelError;
use crate::time_travel::locate::{Located, locate};
use crate::time_travel::notes::note_for_model;
use crate::time_travel::revert_files::FileToRevert;
use crate::time_travel::revert_plan::{PartialRevert, Plan, plan};

impl Agent {
    /// Answers `PreviewRevert`: what reverting `target` would do now.
    pub(super) async fn preview_revert(&mut self, target: RevertTarget) {
        let (what, plan) = match self.compute(&target).await {
            Ok((located, plan)) => (located.what(&target), plan.to_plan()),
            Err(err) => (
                String::new(),
                RevertPlan::Refused {
                    reason: err.to_string(),
                },
            ),
        };
        self.emit(AgentEvent::TimeTravel(TimeTravelEvent::RevertPreview {
            target,
            what,
            plan,
            moved: false,
        }));
    }

    /// Applies `target` when the files are still what the preview (`stamp`) showed; else the
    /// new preview is sent back and nothing changes.
    pub(super) async fn apply_revert(&mut self, target: RevertTarget, stamp: String) {
        let located = match self.locate(&target) {
            Ok(located) => located,
            Err(err) => return self.refuse(target, String::new(), err.to_string()),
        };
        let what = located.what(&target);
        let env = Arc::clone(&self.engine.tool_env);
        // The paths' write turns, in a fixed order, held from the last look until written.
        let mut files: Vec<FileToRevert> = Vec::new();
        for change in located.chosen(&target) {
            match FileToRevert::resolve(&env, &change.path) {
                Ok(file) => files.push(file),
                Err(err) => return self.refuse(target, what, err.to_string()),
            }
        }
        files.sort_by_key(|f| f.real.key());
        let mut turns = Vec::with_capacity(files.len());
        for file in &files {
            turns.push(env.writes.lock(&file.real).await);
        }
        // Background jobs stand still from the last look at the files until the revert and
        // its checkpoints are written (they go on after, however it ends).
        let paused = env.jobs.pause_all().await;
        let store = self.checkpoint_store();
        let planned = self.plan_blocking(&located, &target, store.clone()).await;
        let planned = match planned {
            Ok(planned) => planned,
            Err(err) => return self.refuse(target, what, err.to_string()),
        };
        if planned.stamp() != stamp || !planned.is_clean() {
            self.emit(AgentEvent::TimeTravel(TimeTravelEvent::RevertPreview {
                target,
                what,
                plan: planned.to_plan(),
                moved: true,
            }));
            return;
        }
        let before = snapshot(store.clone()).await;
        let applied = tokio::task::spawn_blocking(move || planned.apply())
            .await
            .unwrap_or_else(|err| {
                Err(PartialRevert {
                    done: Vec::new(),
                    error: err.into(),
                })
            });
        let after = snapshot(store).await;
        drop(paused);
        drop(turns);
        let changes = match applied {
            Ok(changes) => changes,
            Err(PartialRevert { done, error }) if done.is_empty() => {
                // The confirmation says "Nothing was changed" itself.
                return self.refuse(target, what, error.to_string());
            }
            Err(PartialRevert { done, error: err }) => {
                self.emit(AgentEvent::Report(ReportEvent::Warning {
                    message: format!(
                        "the revert stopped part way: {err}; {} of its files were changed",
                        done.len()
                    ),
                }));
                done
            }
        };
        self.finish_revert(target, what, changes, before, after);
    }

    fn finish_revert(
        &mut self,
        target: RevertTarget,
        what: String,
        changes: Vec<crate::tool_output::FileChange>,
        before: Option<CheckpointId>,
        after: Option<CheckpointId>,
    ) {
        let id = format!("revert-{}", self.revert_count() + 1);
        self.record(&Record::Revert {
            id: id.clone(),
            target: target.clone(),
            what: what.clone(),
            changes: changes.clone(),
            before,
            after,
        });
        self.tell_model(note_for_model(&what, &changes));
        self.emit(AgentEvent::TimeTravel(TimeTravelEvent::Reverted {
            id,
            target,
            what,
            changes,
        }));
    }

    fn refuse(&self, target: RevertTarget, what: String, reason: String) {
        self.emit(AgentEvent::TimeTravel(TimeTravelEvent::RevertPreview {
            target,
            what,
            plan: RevertPlan::Refused { reason },
            moved: false,
        }));
    }

    fn locate(&self, target: &RevertTarget) -> Result<Located, TimeTravelError> {
        let loaded = session_log::read_log(self.session.log.path())?;
        locate(&loaded.records, target)
    }

    fn revert_count(&self) -> usize {
        session_log::read_log(self.session.log.path())
            .map(|l| {
                l.records
                    .iter()
                    .filter(|r| matches!(r, Record::Revert { .. }))
                    .count()
            })
            .unwrap_or(0)
    }

    async fn compute(&mut self, target: &RevertTarget) -> Result<(Located, Plan), TimeTravelError> {
        let located = self.locate(target)?;
        let store = self.checkpoint_store();
        let plan = self.plan_blocking(&located, target, store).await?;
        Ok((located, plan))
    }

    async fn plan_blocking(
        &self,
        located: &Located,
        target: &RevertTarget,
        store: Option<Arc<CheckpointStore>>,
    ) -> Result<Plan, TimeTravelError> {
        let env = Arc::clone(&self.engine.tool_env);
        let (located, target) = (located.clone(), target.clone());
        tokio::task::spawn_blocking(move || plan(&env, store.as_deref(), &located, &target)).await?
    }
}

/// A checkpoint of the workspace now, so a later revert of this revert finds whole contents.
async fn snapshot(store: Option<Arc<CheckpointStore>>) -> Option<CheckpointId> {
    let store = store?;
    match tokio::task::spawn_blocking(move || store.snapshot()).await {
        Ok(Ok(snap)) => Some(snap.id),
        Ok(Err(err)) => {
            tracing::warn!("checkpoint around a revert: {err}");
            None
        }
        Err(_) => None,
    }
}
