//! The mock's prompt cache, reporting cache reads as the real APIs do, so a scripted session
//! shows what a format's requests would earn. Anthropic (explicit breakpoints): the prefix up
//! to each `cache_control` marker is written when it is at least 1024 tokens; a later request
//! reads the longest written prefix found at one of its markers or up to 20 blocks before one;
//! the markers themselves are not part of what is compared. OpenAI and DeepSeek (automatic):
//! the longest prefix shared with an earlier request (of the same `prompt_cache_key`), in
//! 128-token steps from 1024 tokens. Tokens are counted at four bytes of JSON a token, tools
//! first, then the system prompt, then the conversation, as the APIs order the prompt.

use std::collections::HashSet;

use serde_json::Value;

use super::native::CacheCounts;
use crate::llm::Api;

const MIN_TOKENS: u64 = 1024;
const LOOKBACK: usize = 20;
/// Earlier requests an automatic cache compares with.
const KEPT: usize = 16;

#[derive(Debug, Default)]
pub struct CacheSim {
    /// Prefix hashes written at Anthropic breakpoints.
    written: HashSet<String>,
    /// (cache key, the prompt as bytes) of earlier automatic-cache requests.
    earlier: Vec<(String, Vec<u8>)>,
}

fn tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

fn stripped(block: &Value) -> String {
    let mut block = block.clone();
    if let Value::Object(map) = &mut block {
        map.remove("cache_control");
    }
    block.to_string()
}

impl CacheSim {
    pub fn count(&mut self, api: Api, body: &Value) -> CacheCounts {
        match api {
            Api::Anthropic => self.explicit(body),
            Api::Responses | Api::Chat => self.automatic(api, body),
        }
    }

    fn explicit(&mut self, body: &Value) -> CacheCounts {
        let mut blocks: Vec<&Value> = Vec::new();
        let mut roles: Vec<String> = Vec::new();
        for tool in body["tools"].as_array().into_iter().flatten() {
            blocks.push(tool);
            roles.push("tools".into());
        }
        match &body["system"] {
            Value::Array(system) => {
                for block in system {
                    blocks.push(block);
                    roles.push("system".into());
                }
            }
            Value::String(_) => {
                blocks.push(&body["system"]);
                roles.push("system".into());
            }
            _ => {}
        }
        for message in body["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                blocks.push(block);
                roles.push(message["role"].as_str().unwrap_or_default().to_string());
            }
        }
        let mut hashes = Vec::with_capacity(blocks.len());
        let mut sizes = Vec::with_capacity(blocks.len());
        let mut chain = String::new();
        let mut bytes = 0;
        for (block, role) in blocks.iter().zip(&roles) {
            let text = stripped(block);
            bytes += text.len();
            chain = crate::content::content_hash(format!("{chain}|{role}|{text}").as_bytes());
            hashes.push(chain.clone());
            sizes.push(bytes);
        }
        let breakpoints: Vec<usize> = blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.get("cache_control").is_some())
            .map(|(at, _)| at)
            .collect();
        let mut read = 0;
        for &at in &breakpoints {
            let from = at.saturating_sub(LOOKBACK);
            if let Some(hit) = (from..=at)
                .rev()
                .find(|&j| self.written.contains(&hashes[j]))
            {
                read = read.max(tokens(sizes[hit]));
            }
        }
        let mut written = 0;
        for &at in &breakpoints {
            let size = tokens(sizes[at]);
            if size >= MIN_TOKENS && self.written.insert(hashes[at].clone()) {
                written = written.max(size.saturating_sub(read));
            }
        }
        CacheCounts {
            prompt: tokens(bytes).max(read + written),
            read,
            written,
        }
    }

    fn automatic(&mut self, api: Api, body: &Value) -> CacheCounts {
        let mut prompt = Vec::new();
        let mut add = |value: &Value| prompt.extend(value.to_string().into_bytes());
        add(&body["tools"]);
        let (key, items) = match api {
            Api::Responses => {
                add(&body["instructions"]);
                (body["prompt_cache_key"].to_string(), &body["input"])
            }
            _ => (String::new(), &body["messages"]),
        };
        for item in items.as_array().into_iter().flatten() {
            add(item);
        }
        let shared = self
            .earlier
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, earlier)| common_prefix(earlier, &prompt))
            .max()
            .unwrap_or(0);
        let shared = shared as u64 / 4;
        let read = if shared < MIN_TOKENS {
            0
        } else {
            MIN_TOKENS + (shared - MIN_TOKENS) / 128 * 128
        };
        let total = tokens(prompt.len());
        if self.earlier.len() >= KEPT {
            self.earlier.remove(0);
        }
        self.earlier.push((key, prompt));
        CacheCounts {
            prompt: total,
            read,
            written: 0,
        }
    }
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
