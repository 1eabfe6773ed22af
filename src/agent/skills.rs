//! The session's skills: discovered once when the session starts (their list goes into the
//! system prompt, so it stays byte-identical whatever changes on disk later), loaded by the
//! model's `skill` call or the user's `/name`, logged (`Record::SkillLoaded`) so a compaction
//! attaches a loaded skill again and a resume keeps it. A loaded skill's directory is
//! readable for the session. Its `allowed-tools` hold from its loading to the end of that
//! user turn, and only for the user's own skills or trusted project ones.
//!
//! Commands (`/name args`) are expanded here, for the TUI and `exec` alike, from the files as
//! they are on disk at that moment.

use crate::bus::ReportEvent;
use serde_json::Value;

use super::Agent;
use super::history::LoadedSkill;
use crate::bus::{AgentEvent, SkillLine, ToolResult};
use crate::permissions::trust::TrustStore;
use crate::session_log::Record;
use crate::skills::commands::{self, Source};
use crate::skills::listing::{self, SkillListing};
use crate::skills::{Skill, SkillScope, Sources};
use crate::tool_output::SkillLoad;
use crate::tool_output::ToolOutput;

/// Where the agent looks for skills and commands, and whether project skills are trusted
/// without asking (`--trust-project`).
#[derive(Debug, Clone)]
pub struct SkillSettings {
    pub sources: Sources,
    pub trust_project: bool,
    /// With `trust_project`: each project skill's directory and its fingerprint as the
    /// checkout held them when the run started. `--trust-project` trusts these, never a skill
    /// the model writes or changes later in the run.
    pub project_at_start: std::collections::BTreeMap<std::path::PathBuf, String>,
}

impl SkillSettings {
    /// The settings for a run; with `trust_project` the project skills on disk now are what
    /// it trusts.
    pub fn new(sources: Sources, trust_project: bool) -> Self {
        let project_at_start = if trust_project {
            crate::skills::discover_skills(&sources)
                .items
                .iter()
                .filter(|s| s.scope == SkillScope::Project)
                .filter_map(|s| Some((s.dir.clone(), s.fingerprint()?)))
                .collect()
        } else {
            Default::default()
        };
        Self {
            sources,
            trust_project,
            project_at_start,
        }
    }

    /// The workspace's own places only (tests and benches).
    pub fn workspace_only(workspace: &std::path::Path) -> Self {
        Self::new(Sources::workspace_only(workspace), false)
    }
}

/// Characters of one skill attached again after a compaction at most (~5k tokens).
const REATTACH_EACH_CHARS: usize = 20_000;
/// Characters of all skills attached again after one compaction at most (~25k tokens).
const REATTACH_TOTAL_CHARS: usize = 100_000;

/// The skills of this session.
#[derive(Debug, Default)]
pub(super) struct SessionSkills {
    /// Valid skills found when the session started, in precedence order.
    pub found: Vec<Skill>,
    pub listing: SkillListing,
    /// Skills loaded so far (from the log on resume), oldest first.
    pub loaded: Vec<LoadedSkill>,
    /// The project skills whose `allowed-tools` grant this turn: name, directory and the
    /// fingerprint they were trusted in. Checked again before every call, so a file changed
    /// while the grant stands (a helper linked from outside the protected places) ends it.
    pub granting: Vec<(String, std::path::PathBuf, String)>,
    /// The project settings as the last turn left them: what changes during a turn is
    /// remembered for a later `--trust-project` run to name (`trust::written`).
    pub settings_seen: crate::trust::written::SettingsSnapshot,
}

/// Finds the skills and computes the list for a window of `window` tokens; the warnings are
/// discovery's and the budget's.
pub(super) fn discover(settings: &SkillSettings, window: u64) -> (SessionSkills, Vec<String>) {
    let found = crate::skills::discover_skills(&settings.sources);
    let listing = listing::build(&found.items, listing::budget_for(window));
    let mut warnings = found.warnings;
    warnings.extend(listing.warnings.iter().cloned());
    // The commands' own problems (a clash with a built-in, an unreadable file) are told once
    // at the start too; the skills' are already in.
    for warning in commands::discover_commands(&settings.sources).warnings {
        if !warnings.contains(&warning) {
            warnings.push(warning);
        }
    }
    (
        SessionSkills {
            found: found.items,
            listing,
            loaded: Vec::new(),
            granting: Vec::new(),
            settings_seen: crate::trust::written::SettingsSnapshot::take(
                &settings.sources.workspace,
            ),
        },
        warnings,
    )
}

impl Agent {
    /// Tells the front end the session's skills (what `/skills` shows).
    pub(super) fn announce_skills(&self) {
        let skills = self
            .session
            .skills
            .listing
            .entries
            .iter()
            .map(|e| SkillLine {
                name: e.name.clone(),
                description: e.description.clone(),
                path: e.path.clone(),
                origin: e.origin.clone(),
                status: e.status,
            })
            .collect();
        self.emit(AgentEvent::Report(ReportEvent::Skills {
            skills,
            budget: self.session.skills.listing.budget,
        }));
    }

    /// Answers a `skill` call from the session's skills.
    pub(super) fn answer_skill(&mut self, args: &Value) -> ToolResult {
        let parsed = match crate::tools::skill::skill_args(args) {
            Ok(parsed) => parsed,
            Err(err) => return ToolResult::error(err),
        };
        let skill = match crate::tools::skill::pick(&self.session.skills.found, &parsed.name) {
            Ok(skill) => skill.clone(),
            Err(err) => return ToolResult::error(err),
        };
        let text = skill.loaded_text(parsed.args.as_deref().unwrap_or("").trim());
        self.activate(&skill, &text);
        ToolResult::ok(ToolOutput::Skill(SkillLoad {
            name: skill.name.clone(),
            dir: skill.dir.display().to_string(),
            text,
        }))
    }

    /// A skill starts: logged, its directory readable for the session, its `allowed-tools`
    /// granted for the rest of this user turn when it may grant anything.
    fn activate(&mut self, skill: &Skill, text: &str) {
        let loaded = LoadedSkill {
            name: skill.name.clone(),
            dir: skill.dir.display().to_string(),
            text: text.to_string(),
        };
        self.record(&Record::SkillLoaded {
            name: loaded.name.clone(),
            dir: loaded.dir.clone(),
            text: loaded.text.clone(),
        });
        self.open_skill_dir(&loaded.dir);
        self.session.skills.loaded.push(loaded);
        if skill.allowed_tools.is_empty() {
            return;
        }
        let Some(trusted) = self.skill_trusted(skill) else {
            self.emit(AgentEvent::Report(ReportEvent::Warning {
                message: format!(
                    "the project skill {} lists allowed-tools ({}), which grant nothing: its content is not trusted (trust it with /skills trust {}, or run with --trust-project)",
                    skill.name,
                    skill.allowed_tools.join(", "),
                    skill.name
                ),
            }));
            return;
        };
        let grants = crate::skills::grants::map(&skill.allowed_tools, &self.settings.workspace);
        for note in &grants.notes {
            self.emit(AgentEvent::Report(ReportEvent::Warning {
                message: format!("skill {}: {note}", skill.name),
            }));
        }
        if !grants.prefixes.is_empty() {
            if let Some(fingerprint) = trusted {
                self.session.skills.granting.push((
                    skill.name.clone(),
                    skill.dir.clone(),
                    fingerprint,
                ));
            }
            self.engine.gate.grant_for_skill(&grants.prefixes);
        }
    }

    /// Before a call is judged and before it runs: a granting project skill whose directory
    /// changed since it was trusted ends every skill grant of the turn (and the user is told).
    /// Whether it did.
    pub(super) fn recheck_skill_grants(&mut self) -> bool {
        let granting = &self.session.skills.granting;
        let Some((name, _, _)) = granting.iter().find(|(_, dir, trusted)| {
            crate::skills::fingerprint::skill_dir_hash(dir).as_ref() != Some(trusted)
        }) else {
            return false;
        };
        let message = format!(
            "the project skill {name} changed while its allowed-tools applied: they grant nothing from here on"
        );
        self.session.skills.granting.clear();
        self.engine.gate.end_skill_grants();
        self.emit(AgentEvent::Report(ReportEvent::Warning { message }));
        true
    }

    /// Reads under a loaded skill's directory run without asking for the rest of the session
    /// (secret stores and protected places still ask: a directory rule never covers them).
    pub(super) fn open_skill_dir(&self, dir: &str) {
        let quoted = crate::permissions::prefixes::shell_quote(dir.trim_end_matches('/'));
        for tool in ["read_file", "list_dir", "glob", "grep", "read_image"] {
            self.engine
                .gate
                .allow_for_session(&format!("{tool} {quoted}/"));
        }
        // A skill kept in cairn's own config directory lies in a secret store, which a
        // directory rule does not open: its listed files are allowed by name.
        let files = self
            .engine
            .tool_env
            .files
            .sensitive_read(std::path::Path::new(dir))
            .and_then(|_| {
                self.session
                    .skills
                    .found
                    .iter()
                    .find(|s| s.dir.display().to_string() == dir)
            })
            .map(|s| s.files(crate::skills::MAX_LISTED_FILES))
            .unwrap_or_default();
        for file in files {
            let quoted = crate::permissions::prefixes::shell_quote(&file.to_string_lossy());
            self.engine
                .gate
                .allow_for_session(&format!("read_file {quoted}"));
        }
    }

    /// The user's own skills are trusted (Some(None)); a project's only when its directory as
    /// it is now (every file's name and content) was trusted, or is what the checkout held
    /// when a run that trusts the project started: Some(the fingerprint it is trusted in).
    fn skill_trusted(&self, skill: &Skill) -> Option<Option<String>> {
        match skill.scope {
            SkillScope::User => Some(None),
            SkillScope::Project => {
                let now = skill.fingerprint()?;
                let settings = &self.settings.skills;
                let trusted = (settings.trust_project
                    && settings.project_at_start.get(&skill.dir) == Some(&now))
                    || self.trust_store().is_trusted(&skill.dir, &now);
                trusted.then_some(Some(now))
            }
        }
    }

    fn trust_store(&self) -> TrustStore {
        TrustStore::in_data_dir(self.settings.dirs.data())
    }

    /// `/skills trust NAME`: remembers the project skill's content as trusted.
    pub(super) fn trust_skill(&mut self, name: &str) {
        let found = crate::skills::discover_skills(&self.settings.skills.sources);
        let message = match found.items.iter().find(|s| s.name == name) {
            None => format!("no skill named {name}"),
            Some(skill) if skill.scope == SkillScope::User => {
                format!("{name} is your own skill: its allowed-tools apply already")
            }
            Some(skill) => match skill.fingerprint() {
                None => format!(
                    "cannot trust the project skill {name}: {}",
                    crate::skills::fingerprint::TOO_LARGE
                ),
                Some(now) => match self.trust_store().trust(&skill.dir, &now) {
                    Ok(()) => format!(
                        "trusted the project skill {name} as it is now ({}); its allowed-tools apply while it is active, until a file of its directory changes",
                        skill.dir.display()
                    ),
                    Err(err) => format!("could not remember the trust for {name}: {err}"),
                },
            },
        };
        self.emit(AgentEvent::Report(ReportEvent::Warning { message }));
    }

    /// The skill grants end with the user turn that loaded the skill.
    /// Also the project settings files the turn changed are remembered (`trust::written`).
    pub(super) fn end_skill_turn(&mut self) {
        self.session.skills.granting.clear();
        self.engine.gate.end_skill_grants();
        let now = crate::trust::written::SettingsSnapshot::take(&self.settings.workspace);
        let changed = now.changed_since(&self.session.skills.settings_seen);
        self.session.skills.settings_seen = now;
        let ledger = crate::trust::written::WrittenLedger::in_data_dir(self.settings.dirs.data());
        if let Err(err) = ledger.record(
            &self.settings.workspace,
            &changed,
            &self.session_id().to_string(),
        ) {
            tracing::warn!("could not remember the project settings this turn changed: {err}");
        }
    }

    /// `/name args`: the text the model gets instead, when `text` invokes a command or a
    /// skill (as on disk now); a skill invoked so is loaded (logged, its grants active for
    /// this turn). Any other text is returned unchanged.
    pub(super) fn expand_command(&mut self, text: &str) -> String {
        let Some((name, args)) = commands::parse_invocation(text) else {
            return text.to_string();
        };
        if text.trim_end().contains('\n') {
            return text.to_string();
        }
        if name == "init" {
            return crate::skills::init::prompt(&self.settings.workspace, args);
        }
        let found = commands::discover_commands(&self.settings.skills.sources);
        let Some(command) = found.items.into_iter().find(|c| c.name == name) else {
            return text.to_string();
        };
        match command.source {
            Source::File { body, .. } => commands::expand(&body, args),
            Source::Skill(skill) => {
                let loaded = skill.loaded_text(args);
                self.activate(&skill, &loaded);
                let mut message = format!("[the user runs the skill {}", skill.name);
                if !args.is_empty() {
                    message.push_str(&format!(" with: {args}"));
                }
                message.push_str("]\n");
                message.push_str(&loaded);
                message
            }
        }
    }

    /// After a compaction: every loaded skill whose text the conversation no longer holds is
    /// attached again (newest first, within the budget), as a note at the end.
    pub(super) fn reattach_skills(&mut self) {
        let messages = self.session.conversation.messages();
        let held = |text: &str| {
            messages.iter().any(|m| match m {
                crate::llm::ChatMessage::Tool { content, .. } => content.contains(text),
                crate::llm::ChatMessage::User { content } => content.as_text().contains(text),
                _ => false,
            })
        };
        let mut seen = std::collections::HashSet::new();
        let mut total = 0usize;
        let mut parts: Vec<String> = Vec::new();
        for skill in self.session.skills.loaded.iter().rev() {
            if !seen.insert(skill.name.clone()) || held(&skill.text) {
                continue;
            }
            let text = crate::skills::shorten(&skill.text, REATTACH_EACH_CHARS);
            if total + text.len() > REATTACH_TOTAL_CHARS {
                break;
            }
            total += text.len();
            parts.push(text);
        }
        if parts.is_empty() {
            return;
        }
        parts.reverse();
        let text = format!(
            "[cairn] The skills loaded earlier in this session, attached again after the conversation was compacted:\n{}",
            parts.join("\n")
        );
        self.tell_model(text);
    }
}
