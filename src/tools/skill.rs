//! `skill {name, args?}`: the model loads a skill from the list in the system prompt. It is
//! always in the tools array (the array stays byte-identical for the session). In a session
//! the agent answers the call from the session's own skills (and logs it, so compaction and
//! resume keep the skill); `run` serves `cairn tool run skill`, from the skills on disk now.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::{Access, Tool, ToolCx, ToolError, ToolSpec, parse_args};

use crate::skills::{SKILL_TOOL, Skill};
use crate::tool_output::ToolOutput;

#[derive(Debug, Deserialize)]
pub struct SkillArgs {
    pub name: String,
    #[serde(default)]
    pub args: Option<String>,
}

/// The arguments of a call, checked.
pub fn skill_args(args: &serde_json::Value) -> Result<SkillArgs, ToolError> {
    let parsed: SkillArgs = parse_args(args)?;
    if parsed.name.trim().is_empty() {
        return Err(ToolError::InvalidArgs(
            "`name` is empty: give a skill's name from the Skills list".into(),
        ));
    }
    Ok(parsed)
}

/// The skill named `name` among `skills`, or an error listing the names there are.
pub fn pick<'a>(skills: &'a [Skill], name: &str) -> Result<&'a Skill, ToolError> {
    let name = name.trim().trim_start_matches('/');
    match skills.iter().find(|s| s.name == name) {
        Some(skill) if skill.model_invocable => Ok(skill),
        Some(_) => Err(ToolError::Refused {
            path: name.into(),
            reason: "this skill is only run by the user (disable-model-invocation)".into(),
        }),
        None => {
            let names: Vec<&str> = skills
                .iter()
                .filter(|s| s.model_invocable)
                .map(|s| s.name.as_str())
                .collect();
            Err(ToolError::NotFound {
                path: format!(
                    "skill `{name}` (the skills are: {})",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            })
        }
    }
}

pub struct SkillTool;

#[async_trait]
impl Tool for SkillTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: SKILL_TOOL,
            description: "Load a skill of the Skills list: its instructions and file paths. \
                Call it before a task its description matches.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string" },
                    "args": { "type": "string" }
                },
                "required": ["name"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, _cx: &ToolCx) -> Result<Access, ToolError> {
        skill_args(args)?;
        Ok(Access::Session)
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let SkillArgs { name, args } = skill_args(&args)?;
        let sources = cx.env.skills.clone();
        let found = super::blocking("finding skills", move || {
            Ok(crate::skills::discover_skills(&sources).items)
        })
        .await?;
        let skill = pick(&found, &name)?;
        Ok(ToolOutput::Skill(crate::tool_output::SkillLoad {
            name: skill.name.clone(),
            dir: skill.dir.display().to_string(),
            text: skill.loaded_text(args.as_deref().unwrap_or("").trim()),
        }))
    }
}
