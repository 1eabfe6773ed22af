//! Helpers shared by the integration tests.

pub mod cairn_cmd;
pub mod agent;
