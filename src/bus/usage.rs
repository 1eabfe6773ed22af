//! What requests cost: the provider's token counts and a cost report's rows.

use serde::{Deserialize, Serialize};

/// Token usage of one request, as the provider reported it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens served from the provider's cache (`prompt_cache_hit_tokens`,
    /// `prompt_tokens_details.cached_tokens`).
    pub cached_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_tokens += other.cached_tokens;
    }
}

impl std::ops::Add for Usage {
    type Output = Self;

    fn add(mut self, other: Self) -> Self {
        self += other;
        self
    }
}

/// One model request in a cost report.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CostRow {
    /// The request's model step; 0 for a compaction's summary request. Named `turn` in the
    /// serialized form, as before.
    #[serde(rename = "turn")]
    pub step: u64,
    pub usage: Usage,
    /// Dollars, when the model's prices are known.
    pub cost_usd: Option<f64>,
}
