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
/// Longest query sent (the approval prompt and the gate's check see all of it).
pub const MAX_QUERY_CHARS: usize = 1000;
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

    fn access(&self, args: &serde_json::Value, cx: &ToolCx) -> Result<Access, ToolError> {
        let args: WebSearchArgs = super::parse_args(args)?;
        if args.query.trim().is_empty() {
            return Err(ToolError::InvalidArgs("`query` must not be empty".into()));
        }
        if args.query.chars().count() > MAX_QUERY_CHARS {
            return Err(ToolError::InvalidArgs(format!(
                "`query` is at most {MAX_QUERY_CHARS} characters"
            )));
        }
        // The backend is the user's own endpoint, but the query leaves the machine: the gate
        // judges it as a fetch from the backend's host (asked in ask and plan, unless that
        // host is allowed), naming the query.
        let backend = cx
            .env
            .web
            .as_ref()
            .and_then(|web| web.settings.search.as_ref())
            .and_then(|search| url::Url::parse(&search.url).ok());
        let Some(host) = backend
            .as_ref()
            .and_then(|url| url.host_str().map(str::to_string))
        else {
            // No backend: the run says so; nothing leaves.
            return Ok(Access::Read);
        };
        // The whole query, as sent (the gate looks in it for what the session read), control
        // characters shown as spaces.
        let shown: String = args
            .query
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        Ok(Access::Network {
            url: format!(
                "{}://{host}/ with the search query \"{shown}\"",
                backend.as_ref().map_or("https", |u| u.scheme())
            ),
            host,
        })
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;

    use super::*;
    use crate::bus::Mode;
    use crate::permissions::rules::RuleSet;
    use crate::permissions::web_hosts::check_host;
    use crate::web::search::{Backend, SearchSettings};
    use crate::web::{WebEnv, WebSettings};

    fn cx(search: Option<&str>) -> ToolCx {
        let settings = WebSettings {
            search: search.map(|url| SearchSettings {
                backend: Backend::Searxng,
                url: url.into(),
                key_env: None,
                api_key: None,
                basic_auth: None,
            }),
            ..WebSettings::default()
        };
        let web = WebEnv::new(
            settings,
            Arc::new(crate::web::resolve::MapResolver::new()),
            Arc::new(crate::web::client::DirectStack),
        )
        .unwrap();
        let dir = std::env::temp_dir();
        let dirs =
            crate::dirs::Dirs::new(dir.join("cairn-none-config"), dir.join("cairn-none-data"));
        let env = crate::tools::ToolEnv::new(dir, &dirs, Default::default()).with_web(web);
        ToolCx::new(Arc::new(env))
    }

    #[test]
    fn the_query_leaving_is_asked_in_ask_and_plan_and_named() {
        let cx = cx(Some("https://search.example.org/search"));
        let access = WebSearchTool
            .access(&json!({"query": "contents of id_rsa"}), &cx)
            .unwrap();
        let Access::Network { host, url } = &access else {
            panic!("{access:?}")
        };
        assert_eq!(host, "search.example.org");
        assert!(url.contains("contents of id_rsa"), "{url}");
        let rules = RuleSet::default();
        for mode in [Mode::Ask, Mode::Plan] {
            let verdict = check_host(&rules, host, url, mode);
            assert!(
                matches!(verdict, crate::permissions::Verdict::Ask { .. }),
                "{mode:?}: {verdict:?}"
            );
        }
        // `never` asks nothing (SPEC §4); `auto` runs what the policy lets through.
        for mode in [Mode::Never, Mode::Auto] {
            assert!(matches!(
                check_host(&rules, host, url, mode),
                crate::permissions::Verdict::Run
            ));
        }
        // No backend: nothing leaves, nothing to ask.
        let access = WebSearchTool
            .access(&json!({"query": "x"}), &super::tests::cx(None))
            .unwrap();
        assert!(matches!(access, Access::Read));
    }
}
