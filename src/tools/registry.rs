//! The `Registry` the agent looks tools up in, and the standard tool set, in the order their
//! schemas are sent to the model.

use super::{Tool, ToolSpec};

/// All tools, in the order their schemas are sent.
pub struct Registry {
    tools: Vec<Box<dyn Tool>>,
    /// Built once: the schemas go out with every request.
    specs: Vec<ToolSpec>,
}

impl Registry {
    pub fn with_tools(tools: Vec<Box<dyn Tool>>) -> Self {
        let specs = tools.iter().map(|t| t.spec()).collect();
        Self { tools, specs }
    }
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        let index = self.specs.iter().position(|spec| spec.name == name)?;
        self.tools.get(index).map(|t| t.as_ref())
    }
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }
    pub fn names(&self) -> Vec<&'static str> {
        self.specs.iter().map(|spec| spec.name).collect()
    }
}

/// Every tool the agent offers by default.
pub fn standard_tools() -> Vec<Box<dyn Tool>> {
    vec![
        Box::new(super::read_file::ReadFile),
        Box::new(super::write_file::WriteFile),
        Box::new(super::edit_file::EditFile),
        Box::new(super::list_dir::ListDir),
        Box::new(super::glob::Glob),
        Box::new(super::grep::Grep),
        Box::new(super::bash::Bash),
        Box::new(super::job_tools::JobOutput),
        Box::new(super::job_tools::JobKill),
        Box::new(super::todo_write::TodoWrite),
        Box::new(super::exit_plan_mode::ExitPlanMode),
        Box::new(super::skill::SkillTool),
    ]
}

/// The web tools: `web_fetch` always, `web_search` only when a backend is configured (the
/// tools array is decided once, at session start).
pub fn web_tools(search_configured: bool) -> Vec<Box<dyn Tool>> {
    let mut tools: Vec<Box<dyn Tool>> = vec![Box::new(super::web_fetch::WebFetch)];
    if search_configured {
        tools.push(Box::new(super::web_search::WebSearchTool));
    }
    tools
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn names_are_unique_and_schemas_stay_small() {
        let tools = standard_tools();
        let mut names: Vec<_> = tools.iter().map(|t| t.spec().name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), tools.len());
        for tool in &tools {
            let spec = tool.spec();
            let bytes = serde_json::to_string(&spec).unwrap().len();
            assert!(bytes <= 900, "{} schema is {bytes} bytes", spec.name);
            assert_eq!(spec.parameters["type"], "object", "{}", spec.name);
        }
    }

    #[test]
    fn web_search_is_offered_only_with_a_backend() {
        let names = |tools: Vec<Box<dyn Tool>>| -> Vec<&'static str> {
            tools.iter().map(|t| t.spec().name).collect()
        };
        assert_eq!(names(web_tools(false)), ["web_fetch"]);
        assert_eq!(names(web_tools(true)), ["web_fetch", "web_search"]);
        for tool in web_tools(true) {
            let bytes = serde_json::to_string(&tool.spec()).unwrap().len();
            assert!(bytes <= 900, "{} schema is {bytes} bytes", tool.spec().name);
        }
    }

    #[test]
    fn all_schemas_leave_room_in_an_8_kb_first_request() {
        // The request wraps each spec as {"type":"function","function":{...}}.
        let total: usize = standard_tools()
            .iter()
            .map(|t| serde_json::to_string(&t.spec()).unwrap().len() + 40)
            .sum();
        // 5,500 before `skill` joined (its schema is about 220 bytes).
        assert!(total <= 5_800, "tool schemas take {total} bytes");
    }
}
