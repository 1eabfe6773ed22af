//! The one integration-test binary: each module drives cairn the way a user or a model would.

mod llm_client;
mod support;
