//! What cairn knows about models without asking: context window, output limit and price per
//! million tokens of the models the presets are used with. `discover` asks the provider where
//! it can tell (OpenRouter, Ollama, vLLM) and caches the answer.
//!
//! Prices are list prices in US dollars per million tokens at the time of writing; the
//! `[prices]` config table overrides them. A model not in the table has no price (the cost
//! is then shown as unknown, never as zero).

pub mod discover;

use serde::{Deserialize, Serialize};

/// Dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    /// Input tokens not served from the provider's cache.
    pub input: f64,
    /// Input tokens served from the cache (a fraction of `input` on most providers).
    pub cached_input: f64,
    pub output: f64,
}

impl Prices {
    /// The dollars one request cost. `cached` is part of `prompt`.
    pub fn cost(&self, prompt: u64, cached: u64, completion: u64) -> f64 {
        let cached = cached.min(prompt);
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per(prompt - cached, self.input)
            + per(cached, self.cached_input)
            + per(completion, self.output)
    }
}

/// What the catalogue knows of one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelInfo {
    /// Tokens of prompt plus reply the model accepts.
    pub context_window: u64,
    /// The most tokens one reply may have.
    pub max_output: u64,
    pub prices: Option<Prices>,
}

const fn p(input: f64, cached_input: f64, output: f64) -> Option<Prices> {
    Some(Prices {
        input,
        cached_input,
        output,
    })
}

const fn m(context_window: u64, max_output: u64, prices: Option<Prices>) -> ModelInfo {
    ModelInfo {
        context_window,
        max_output,
        prices,
    }
}

/// Known models by name. A name matches an entry when it equals it, or when it starts with
/// it followed by `-`, `:` or `@` (dated snapshots, Ollama tags, size suffixes); the longest
/// entry wins, so `gpt-4.1-mini` is not priced as `gpt-4.1`. OpenRouter names are matched
/// without their `vendor/` prefix.
const CATALOGUE: &[(&str, ModelInfo)] = &[
    // DeepSeek (V3.2 pricing: cache hits cost a tenth of misses).
    ("deepseek-chat", m(128_000, 8_192, p(0.28, 0.028, 0.42))),
    (
        "deepseek-reasoner",
        m(128_000, 65_536, p(0.28, 0.028, 0.42)),
    ),
    ("deepseek-v3", m(128_000, 8_192, p(0.28, 0.028, 0.42))),
    ("deepseek-r1", m(128_000, 32_768, p(0.55, 0.14, 2.19))),
    ("deepseek-coder-v2", m(131_072, 8_192, None)),
    // OpenAI.
    ("gpt-4.1", m(1_047_576, 32_768, p(2.0, 0.5, 8.0))),
    ("gpt-4.1-mini", m(1_047_576, 32_768, p(0.4, 0.1, 1.6))),
    ("gpt-4.1-nano", m(1_047_576, 32_768, p(0.1, 0.025, 0.4))),
    ("gpt-4o", m(128_000, 16_384, p(2.5, 1.25, 10.0))),
    ("gpt-4o-mini", m(128_000, 16_384, p(0.15, 0.075, 0.6))),
    ("o1", m(200_000, 100_000, p(15.0, 7.5, 60.0))),
    ("o3", m(200_000, 100_000, p(2.0, 0.5, 8.0))),
    ("o3-mini", m(200_000, 100_000, p(1.1, 0.55, 4.4))),
    ("o4-mini", m(200_000, 100_000, p(1.1, 0.275, 4.4))),
    ("gpt-5", m(400_000, 128_000, p(1.25, 0.125, 10.0))),
    ("gpt-5-mini", m(400_000, 128_000, p(0.25, 0.025, 2.0))),
    ("gpt-5-nano", m(400_000, 128_000, p(0.05, 0.005, 0.4))),
    ("gpt-5-codex", m(400_000, 128_000, p(1.25, 0.125, 10.0))),
    ("gpt-oss", m(131_072, 32_768, None)),
    // Common on OpenRouter.
    ("claude-sonnet-4", m(200_000, 64_000, p(3.0, 0.3, 15.0))),
    ("claude-sonnet-4.5", m(200_000, 64_000, p(3.0, 0.3, 15.0))),
    ("claude-3.7-sonnet", m(200_000, 64_000, p(3.0, 0.3, 15.0))),
    ("claude-3.5-sonnet", m(200_000, 8_192, p(3.0, 0.3, 15.0))),
    ("claude-opus-4", m(200_000, 32_000, p(15.0, 1.5, 75.0))),
    ("claude-haiku-4.5", m(200_000, 64_000, p(1.0, 0.1, 5.0))),
    ("gemini-2.5-pro", m(1_048_576, 65_536, p(1.25, 0.31, 10.0))),
    ("gemini-2.5-flash", m(1_048_576, 65_536, p(0.3, 0.075, 2.5))),
    ("qwen3-coder", m(262_144, 65_536, None)),
    ("kimi-k2", m(131_072, 16_384, None)),
    ("glm-4.5", m(131_072, 98_304, None)),
    // Ollama (the model's trained window; the server may run it with less, see `discover`).
    ("qwen2.5-coder", m(32_768, 8_192, None)),
    ("qwen3", m(40_960, 16_384, None)),
    ("llama3.1", m(131_072, 8_192, None)),
    ("llama3.2", m(131_072, 8_192, None)),
    ("llama3.3", m(131_072, 8_192, None)),
    ("codellama", m(16_384, 4_096, None)),
    ("mistral", m(32_768, 8_192, None)),
    ("devstral", m(131_072, 16_384, None)),
    ("gemma3", m(131_072, 8_192, None)),
];

/// The catalogue entry for `model`, if any.
pub fn lookup(model: &str) -> Option<ModelInfo> {
    best_match(CATALOGUE, model).copied()
}

/// Whether models take image input, matched like `CATALOGUE`. Only what the vendors document;
/// a model missing here is of unknown ability (its images are sent, and a refusal is
/// remembered), and `vision = true|false` in the config overrides the table.
const VISION: &[(&str, bool)] = &[
    ("deepseek", false),
    ("deepseek-chat", false),
    ("deepseek-reasoner", false),
    ("deepseek-v3", false),
    ("deepseek-r1", false),
    ("deepseek-coder-v2", false),
    ("gpt-4.1", true),
    ("gpt-4o", true),
    ("gpt-5", true),
    ("o1", true),
    ("o3", true),
    ("o3-mini", false),
    ("o4-mini", true),
    ("gpt-oss", false),
    ("claude", true),
    ("gemini", true),
    ("qwen3-coder", false),
    ("qwen2.5-coder", false),
    ("qwen2.5vl", true),
    ("qwen2.5-vl", true),
    ("qwen3", false),
    ("kimi-k2", false),
    ("glm-4.5", false),
    ("glm-4.5v", true),
    ("llama3.1", false),
    ("llama3.2", false),
    ("llama3.2-vision", true),
    ("llama3.3", false),
    ("llava", true),
    ("codellama", false),
    ("mistral", false),
    ("devstral", false),
    ("gemma3", true),
];

/// `Some(true)` for a model known to take images, `Some(false)` for one known not to.
pub fn takes_images(model: &str) -> Option<bool> {
    best_match(VISION, model).copied()
}

/// The entry for `model`: equal to it, or a prefix followed by `-`, `:` or `@`; the longest
/// wins. OpenRouter names are matched without their `vendor/` prefix.
fn best_match<'a, T>(table: &'a [(&str, T)], model: &str) -> Option<&'a T> {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    table
        .iter()
        .filter(|(entry, _)| {
            name == *entry
                || name
                    .strip_prefix(entry)
                    .is_some_and(|rest| rest.starts_with(['-', ':', '@']))
        })
        .max_by_key(|(entry, _)| entry.len())
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_with_vendor_prefixes_tags_and_snapshots() {
        let window = |name: &str| lookup(name).map(|i| i.context_window);
        assert_eq!(window("deepseek-chat"), Some(128_000));
        assert_eq!(window("deepseek/deepseek-chat"), Some(128_000));
        assert_eq!(window("gpt-4.1-2025-04-14"), Some(1_047_576));
        assert_eq!(window("qwen2.5-coder:7b"), Some(32_768));
        assert_eq!(window("anthropic/claude-sonnet-4"), Some(200_000));
        assert_eq!(window("my-own-model"), None);
        // The longest entry wins: a mini is not priced as its big sibling.
        let mini = lookup("gpt-4.1-mini").and_then(|i| i.prices);
        assert_eq!(mini.map(|p| p.input), Some(0.4));
        // `o3` does not swallow `o3x`.
        assert_eq!(window("o3x"), None);
    }

    #[test]
    fn vision_is_known_for_the_models_that_document_it_and_unknown_otherwise() {
        assert_eq!(takes_images("deepseek-chat"), Some(false));
        assert_eq!(takes_images("gpt-4o-2024-08-06"), Some(true));
        assert_eq!(takes_images("openai/gpt-4.1-mini"), Some(true));
        assert_eq!(takes_images("anthropic/claude-sonnet-4.5"), Some(true));
        assert_eq!(takes_images("o3-mini"), Some(false));
        assert_eq!(takes_images("llama3.2-vision:11b"), Some(true));
        assert_eq!(takes_images("llama3.2:3b"), Some(false));
        assert_eq!(takes_images("my-own-model"), None);
    }

    #[test]
    fn cached_tokens_are_priced_apart_from_the_rest() {
        let prices = Prices {
            input: 1.0,
            cached_input: 0.1,
            output: 2.0,
        };
        let cost = prices.cost(1_000_000, 500_000, 1_000_000);
        assert!((cost - (0.5 + 0.05 + 2.0)).abs() < 1e-9, "{cost}");
        // A provider that reports more cached than prompt tokens is not credited for it.
        assert!((prices.cost(10, 20, 0) - 10.0 * 0.1 / 1e6).abs() < 1e-12);
    }
}
