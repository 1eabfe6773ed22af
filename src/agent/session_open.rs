//! Opening a session: a new log, or one read back with its conversation, rules, mode and jobs
//! rebuilt; and the user's trust in the project's rules carried out.

use crate::bus::AgentEvent;
use crate::bus::ReportEvent;
use crate::permissions::PermissionGate;
use crate::session_log::{self, LogError, Record, SessionLog, ToldState};

use super::conversation::Conversation;
use super::prompt::WorkspaceFacts;
use super::{AgentSettings, Engine, Session, StartFrom, history, jobs, prompt, skills};

/// Creates a new session log, or reads one back and rebuilds its state.
pub(super) fn open_session(
    settings: &AgentSettings,
    engine: &Engine,
    facts: &WorkspaceFacts,
    from: &StartFrom,
    mut skills: skills::SessionSkills,
) -> Result<(Session, Vec<AgentEvent>), LogError> {
    let told_now = ToldState {
        mode: settings.mode,
        git_branch: facts.git_branch.clone(),
    };
    match from {
        StartFrom::New => {
            let id = session_log::new_session_id();
            let mut log = SessionLog::create(settings.dirs.sessions(), &id)?;
            log.append(&Record::Meta {
                id: id.clone(),
                cwd: settings.workspace.display().to_string(),
                provider: settings.provider.clone(),
                model: engine.model.model(),
                version: env!("CARGO_PKG_VERSION").to_string(),
                started: humantime::format_rfc3339_seconds(std::time::SystemTime::now())
                    .to_string(),
                parent: settings.child.as_ref().map(|child| child.parent.clone()),
            })?;
            let system = match &settings.child {
                Some(child) => {
                    prompt::child_system_prompt(child.prompt.as_deref(), facts, &told_now)
                }
                None => prompt::system_prompt(facts, &told_now),
            };
            log.append(&Record::System {
                prompt: system.clone(),
                told: told_now.clone(),
            })?;
            Ok((
                Session {
                    id,
                    log,
                    told: told_now,
                    conversation: Conversation::new(system, Vec::new()),
                    todos: Vec::new(),
                    costs: Vec::new(),
                    request_text: String::new(),
                    seen_images: Vec::new(),
                    skills,
                },
                Vec::new(),
            ))
        }
        StartFrom::Resume(path) => {
            let loaded = session_log::read_log(path)?;
            let id = match loaded.records.first() {
                Some(Record::Meta { id, .. }) => id.clone(),
                _ => return Err(LogError::NoMeta { path: path.clone() }),
            };
            let store = session_log::images::ImageStore::beside(path);
            let rebuilt =
                history::rebuild_loading(&loaded.records, &|image| store.get(&image.hash).ok());
            let mut log = SessionLog::open_append(path.clone())?;
            // The prompt the session was started with goes out again unchanged. A log from
            // before prompts were recorded gets one now, so later resumes agree with this one.
            let (system, told) = match (rebuilt.system, rebuilt.told) {
                (Some(system), Some(told)) => (system, told),
                _ => {
                    let system = prompt::system_prompt(facts, &told_now);
                    log.append(&Record::System {
                        prompt: system.clone(),
                        told: told_now.clone(),
                    })?;
                    (system, told_now)
                }
            };
            for prefix in &rebuilt.session_rules {
                engine.gate.allow_for_session(prefix);
            }
            // What the model read before counts the same after a resume.
            for record in &loaded.records {
                if let Record::ToolResult { name, result, .. } = record {
                    engine.gate.note_read(name, &result.text);
                }
            }
            // Jobs do not survive a restart: the model is told which of its jobs are gone.
            let (left, highest) = jobs::left_behind(&loaded.records);
            engine.tool_env.jobs.continue_after_restart(left, highest);
            // Resumed in another mode or with another model: the log says so from here on, so
            // a replay shows what the rest ran in.
            if rebuilt.mode.is_some_and(|mode| mode != settings.mode) {
                log.append(&Record::Mode {
                    mode: settings.mode,
                })?;
            }
            let model = engine.model.model();
            if rebuilt
                .model
                .as_ref()
                .is_some_and(|logged| *logged != model)
            {
                log.append(&Record::Model { model })?;
            }
            let mut events: Vec<AgentEvent> = loaded
                .warnings
                .into_iter()
                .map(|message| AgentEvent::Report(ReportEvent::Warning { message }))
                .collect();
            // Each subagent's transcript opens from its card, as it did live.
            let sessions = path.parent().unwrap_or(std::path::Path::new("."));
            events.extend(super::subagent::replayed::with_children(
                sessions,
                &id,
                rebuilt.events,
            ));
            skills.loaded = rebuilt.skills;
            Ok((
                Session {
                    id,
                    log,
                    told,
                    conversation: Conversation::new(system, rebuilt.messages),
                    todos: rebuilt.todos,
                    costs: rebuilt.costs,
                    request_text: rebuilt.request_text,
                    seen_images: Vec::new(),
                    skills,
                },
                events,
            ))
        }
    }
}

/// Carries out the user's trust in the project's rules (once: a second answer finds none).
pub(super) fn trust_project_rules(
    untrusted: Option<crate::permissions::trust::PendingTrust>,
    gate: &dyn PermissionGate,
) -> AgentEvent {
    match untrusted {
        Some(pending) => pending.accept(gate),
        None => AgentEvent::Report(ReportEvent::Warning {
            message: "no project rules are waiting to be trusted".into(),
        }),
    }
}
