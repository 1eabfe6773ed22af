//! `web_search`: a query to the configured search backend (`[web.search]`), numbered results
//! for `web_fetch` to follow. Offered only when a backend is configured. The backend is the
//! user's choice, so the call asks nothing; what it returns is framed as untrusted.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::{Access, Tool, ToolCx, ToolError, ToolSpec};

use crate::tool_output::ToolOutput;
use crate::web::search::{Query, search};

pub const DEFAULT_RESULTS: usize = 5;
pub const MAX_RESULTS: usize = 10;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebSearchArgs {
    query: String,
    max_results: Option<usize>,
    #[serde(default)]
    allowed_domains: Vec<String>,
    #[serde(default)]
    blocked_domains: Vec<String>,
}

pub struct WebSearchTool;

#[async_trait]
impl Tool for WebSearchTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "web_search",
            description: "Search the web. Returns numbered results `[n] title — url — snippet` (untrusted text); read one with web_fetch.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "max_results": {"type": "integer", "minimum": 1, "maximum": 10, "description": "default 5"},
                    "allowed_domains": {"type": "array", "items": {"type": "string"}, "description": "only results from these domains"},
                    "blocked_domains": {"type": "array", "items": {"type": "string"}, "description": "no results from these domains"}
                },
                "required": ["query"]
            }),
        }
    }

    fn access(&self, args: &serde_json::Value, _cx: &ToolCx) -> Result<Access, ToolError> {
        let args: WebSearchArgs = super::parse_args(args)?;
        if args.query.trim().is_empty() {
            return Err(ToolError::InvalidArgs("`query` must not be empty".into()));
        }
        // The backend is the user's configured endpoint: nothing for the gate to ask about.
        Ok(Access::Read)
    }

    async fn run(&self, args: serde_json::Value, cx: &ToolCx) -> Result<ToolOutput, ToolError> {
        let args: WebSearchArgs = super::parse_args(&args)?;
        let web = cx.env.web.clone();
        let Some((web, settings)) = web
            .as_ref()
            .and_then(|web| web.settings.search.clone().map(|s| (web, s)))
        else {
            return Err(ToolError::Failed(
                "no search backend is configured ([web.search] in the config)".into(),
            ));
        };
        let query = Query {
            query: args.query.trim().to_string(),
            max_results: args
                .max_results
                .unwrap_or(DEFAULT_RESULTS)
                .clamp(1, MAX_RESULTS),
            allowed_domains: args.allowed_domains,
            blocked_domains: args.blocked_domains,
        };
        match search(web, &settings, &query, &cx.cancel).await {
            Ok(found) => Ok(ToolOutput::WebSearch(found)),
            Err(message) if message == crate::tool_output::CANCELLED => Err(ToolError::Cancelled),
            Err(message) => Err(ToolError::Failed(message)),
        }
    }
}
