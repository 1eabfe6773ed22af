//! Tool-call accumulation: which fragment of a streamed reply belongs to which call, under
//! the shapes of OpenAI, Ollama (old and new), llama.cpp and the endpoints that shift indexes;
//! and the ids of calls whose provider gave none or gave one twice.

use std::sync::atomic::{AtomicU64, Ordering};

use super::StreamAssembler;
use super::chunk::ToolCallDelta;
use crate::bus::CallId;
use crate::llm::LlmError;

#[derive(Debug, Default)]
pub(super) struct PartialCall {
    /// The id the provider gave, kept to recognise a new call reusing an index.
    pub(super) provider_id: Option<String>,
    /// Fixed when the call is announced; unique within the response.
    pub(super) id: Option<CallId>,
    pub(super) name: String,
    pub(super) arguments: String,
}

impl StreamAssembler {
    // Accumulation rules (wire-formats notes, section 7): calls are keyed by `index`. On a used
    // index, a new non-empty id starts a new call (Ollama gives every call index 0), and so
    // does a name without id after complete arguments (older Ollama, no ids at all). Without
    // an index, a fragment that names a tool starts a new call and any other continues the
    // last one; so does a fragment under an unknown index with neither id nor name (endpoints
    // that shift the index of argument fragments). Arguments stay raw text throughout.
    pub(super) fn tool_call(&mut self, call: ToolCallDelta) -> Result<(), LlmError> {
        let id = call.id.filter(|id| !id.is_empty());
        let (name, arguments) = match call.function {
            Some(f) => (f.name.filter(|n| !n.is_empty()), f.arguments),
            None => (None, None),
        };
        let existing = match call.index {
            Some(index) => match self.by_index.get(&index) {
                Some(&at) => {
                    let open = &self.calls[at];
                    let other_id = match (&id, &open.provider_id) {
                        (Some(new), Some(old)) => new != old,
                        _ => false,
                    };
                    // Ollama before ids existed: whole calls, all at index 0, no id. A name
                    // after complete arguments starts the next call.
                    let next_whole_call = id.is_none()
                        && name.is_some()
                        && !open.name.is_empty()
                        && is_complete_json(&open.arguments);
                    (!other_id && !next_whole_call).then_some(at)
                }
                None if id.is_none() && name.is_none() => self.last_call,
                None => None,
            },
            None => {
                let same_id = id.as_ref().and_then(|id| {
                    self.calls
                        .iter()
                        .rposition(|c| c.provider_id.as_ref() == Some(id))
                });
                match same_id {
                    Some(at) => Some(at),
                    None if name.is_some() || id.is_some() => None,
                    None => self.last_call,
                }
            }
        };
        let at = match existing {
            Some(at) => at,
            None if self.calls.len() >= self.limits.max_calls => {
                let max = self.limits.max_calls;
                return Err(self.capped(format!("it made more than {max} tool calls")));
            }
            None => {
                self.calls.push(PartialCall::default());
                self.calls.len() - 1
            }
        };
        if let Some(index) = call.index {
            self.by_index.insert(index, at);
        }
        self.last_call = Some(at);
        // Not `content_seen`: a tool call is not shown while it streams and nothing runs
        // before the reply is whole, so a stream cut in the middle of one can be sent again.

        if self.calls[at].provider_id.is_none() {
            self.calls[at].provider_id = id;
        }
        if let Some(name) = name
            && self.calls[at].name.is_empty()
        {
            let id = self.unique_id(at);
            self.calls[at].name = name;
            self.calls[at].id = Some(id);
        }
        if let Some(arguments) = arguments {
            let max = self.limits.max_call_bytes;
            if self.calls[at].arguments.len() + arguments.len() > max {
                let name = match self.calls[at].name.as_str() {
                    "" => "a tool call".to_string(),
                    name => format!("its `{name}` call"),
                };
                return Err(self.capped(format!(
                    "the arguments of {name} passed {max} bytes (max_tool_call_bytes)"
                )));
            }
            self.calls[at].arguments.push_str(&arguments);
        }
        Ok(())
    }

    /// The provider's id, unless it is missing or already used by another call of this
    /// response (llama.cpp has given parallel calls one id); then a synthesised one.
    fn unique_id(&self, at: usize) -> CallId {
        match &self.calls[at].provider_id {
            Some(id)
                if !self
                    .calls
                    .iter()
                    .any(|c| c.id.as_ref().is_some_and(|c| c.0 == *id)) =>
            {
                CallId::new(id.clone())
            }
            _ => synthesised_id(),
        }
    }
}

fn is_complete_json(text: &str) -> bool {
    !text.trim().is_empty() && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// `call_<n>`, unique within this process, for calls the provider sent without an id.
pub(super) fn synthesised_id() -> CallId {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    CallId(format!("call_{}", NEXT.fetch_add(1, Ordering::Relaxed)))
}
