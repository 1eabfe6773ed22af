//! Helpers shared by the integration tests.

pub mod agent;
pub mod cairn_cmd;
pub mod editor;
pub mod git_state;
pub mod net_servers;
pub mod source_graph;
pub mod strict_json;
