//! The `Registry` the agent looks tools up in, and the standard tool set, in the order their
//! schemas are sent to the model.

use std::sync::{Arc, OnceLock};

use super::{Tool, ToolSpec};

/// All tools, in the order their schemas are sent.
pub struct Registry {
    tools: Vec<Box<dyn Tool>>,
    /// Built once: the schemas go out with every request.
    specs: Vec<ToolSpec>,
    /// Tools known only once their source is ready (MCP servers starting in the background),
    /// fixed at the first request.
    late: Option<Arc<dyn LateTools>>,
    settled: OnceLock<Settled>,
}

/// Tools that join the array at the session's first request (`Registry::settle`), after the
/// standard ones; what they are then stays for the whole session.
#[async_trait::async_trait]
pub trait LateTools: Send + Sync {
    /// Waits (bounded by the source) until they are known, and gives them with what the
    /// user should be told (a source late or failed).
    async fn tools(&self) -> (Vec<Box<dyn Tool>>, Vec<String>);
    /// The session ends: whatever runs behind the tools stops.
    async fn shutdown(&self) {}
}

struct Settled {
    tools: Vec<Box<dyn Tool>>,
    /// Every spec: the standard tools', then the late ones'.
    specs: Vec<ToolSpec>,
}

impl Registry {
    pub fn with_tools(tools: Vec<Box<dyn Tool>>) -> Self {
        let specs = tools.iter().map(|t| t.spec()).collect();
        Self {
            tools,
            specs,
            late: None,
            settled: OnceLock::new(),
        }
    }
    /// The same registry with tools that join at the first request.
    pub fn with_late(mut self, late: Arc<dyn LateTools>) -> Self {
        self.late = Some(late);
        self
    }
    /// Fixes the late tools, once (the first request waits here; later calls return at once
    /// with `None`). The notices to show when this call fixed them.
    pub async fn settle(&self) -> Option<Vec<String>> {
        let late = self.late.as_ref()?;
        if self.settled.get().is_some() {
            return None;
        }
        let (tools, notices) = late.tools().await;
        let specs = self
            .specs
            .iter()
            .cloned()
            .chain(tools.iter().map(|t| t.spec()))
            .collect();
        let _ = self.settled.set(Settled { tools, specs });
        Some(notices)
    }
    /// The tools that join at the first request, for a subagent's registry to share.
    pub fn late(&self) -> Option<Arc<dyn LateTools>> {
        self.late.clone()
    }
    /// Stops what runs behind the late tools (MCP servers), at the session's end.
    pub async fn shutdown(&self) {
        if let Some(late) = &self.late {
            late.shutdown().await;
        }
    }
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        if let Some(index) = self.specs.iter().position(|spec| spec.name == name) {
            return self.tools.get(index).map(|t| t.as_ref());
        }
        let settled = self.settled.get()?;
        let index = settled.specs.iter().position(|spec| spec.name == name)?;
        settled
            .tools
            .get(index.checked_sub(self.tools.len())?)
            .map(|t| t.as_ref())
    }
    pub fn specs(&self) -> &[ToolSpec] {
        match self.settled.get() {
            Some(settled) => &settled.specs,
            None => &self.specs,
        }
    }
    pub fn names(&self) -> Vec<&'static str> {
        self.specs().iter().map(|spec| spec.name).collect()
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

/// The `lsp` tool, when a language server is configured or found at session start.
pub fn lsp_tools(offered: bool) -> Vec<Box<dyn Tool>> {
    if offered {
        vec![Box::new(super::lsp::LspTool)]
    } else {
        Vec::new()
    }
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
