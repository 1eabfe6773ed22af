//! The MCP servers' prompts and resources in the conversation: the front end is told what
//! they offer (the `/` palette, the `@` finder) once the servers started; a
//! `/mcp:server:prompt args` line becomes the prompt's messages, and an `@server:uri`
//! mention attaches the resource's text as a file's would be.

use tokio_util::sync::CancellationToken;

use super::Agent;
use crate::bus::{AgentEvent, EndReason, McpPromptLine, McpResourceLine, ReportEvent};
use crate::content::Part;
use crate::mcp::offerings::{COMMAND_PREFIX, OfferingError};

impl Agent {
    /// Tells the front end the servers' prompts and resources once every server's start
    /// ended (in the background: nothing waits for it).
    pub(super) fn publish_mcp_offerings(&self) {
        let Some(hub) = self.engine.mcp.clone() else {
            return;
        };
        let events = self.events.clone();
        tokio::spawn(async move {
            let offerings = hub.offerings().await;
            if offerings.prompts.is_empty() && offerings.resources.is_empty() {
                return;
            }
            let prompts = offerings
                .prompts
                .iter()
                .map(|p| McpPromptLine {
                    command: format!("/{}", p.command()),
                    args: p.argument_hint(),
                    description: p.description.clone(),
                    server: p.server.clone(),
                })
                .collect();
            let resources = offerings
                .resources
                .iter()
                .map(|r| McpResourceLine {
                    mention: r.mention(),
                    name: r.name.clone(),
                })
                .collect();
            let _ = events.send(AgentEvent::Report(ReportEvent::McpOfferings {
                prompts,
                resources,
            }));
        });
    }

    /// `/mcp:server:prompt args`: the prompt's messages, fetched from its server with the
    /// arguments typed, as the text of the user's turn. `None` when `text` is no such line;
    /// `Err` ends the request before anything is sent (the user is told why).
    pub(super) async fn expand_mcp_prompt(
        &self,
        text: &str,
        cancel: &CancellationToken,
    ) -> Option<Result<String, EndReason>> {
        let (name, typed) = crate::skills::commands::parse_invocation(text)?;
        if !name.starts_with(COMMAND_PREFIX) || text.trim_end().contains('\n') {
            return None;
        }
        let ran = match &self.engine.mcp {
            Some(hub) => hub.run_prompt(name, typed, cancel).await,
            None => None,
        };
        Some(match ran {
            Some(Ok(turn)) => Ok(turn),
            Some(Err(OfferingError::Cancelled)) => Err(EndReason::Interrupted),
            Some(Err(OfferingError::Failed(why))) => Err(self.prompt_refused(why)),
            None => Err(self.prompt_refused(format!(
                "no MCP server offers the prompt /{name} (`cairn mcp list` shows the servers)"
            ))),
        })
    }

    fn prompt_refused(&self, why: String) -> EndReason {
        let message = format!("{why}; nothing was sent");
        self.warn(&message);
        EndReason::Failed(message)
    }

    /// An `@server:uri` mention: the resource's text as a part (`None` when the word names
    /// no MCP server: it may be a file). A resource that cannot be read is not attached, and
    /// the user is told, as for a file.
    pub(super) async fn attach_resource(
        &self,
        mention: &str,
        cancel: &CancellationToken,
    ) -> Option<Result<Vec<Part>, EndReason>> {
        let hub = self.engine.mcp.as_ref()?;
        let read = hub.read_resource(mention, cancel).await?;
        let spelled = crate::content::mentions::spelling(mention);
        Some(match read {
            Ok(resource) => Ok(vec![Part::text(format!(
                "{}{spelled}{} as the MCP server `{}` sent the resource {}:\n{}",
                super::attach::ATTACHED,
                super::attach::SHOWN,
                resource.server,
                resource.uri,
                resource.text
            ))]),
            Err(OfferingError::Cancelled) => Err(EndReason::Interrupted),
            Err(OfferingError::Failed(why)) => {
                self.warn(&format!("{spelled} was not attached: {why}"));
                Ok(Vec::new())
            }
        })
    }
}
