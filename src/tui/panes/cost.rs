//! The `/cost` view and the compaction card: text blocks in the transcript. `/cost` lists
//! every model request of the session (its model step, under the on-screen heading `turn`; tokens in, of which cached, out, dollars)
//! and the totals with the cache-hit ratio.

use crate::bus::{CostRow, Usage};
use crate::tui::figures::tokens;

/// "context compacted: 28.1k → 9.3k tokens (12 old tool results pruned, 40 messages summarised)".
pub fn compaction_text(before: u64, after: u64, pruned: usize, summarized: usize) -> String {
    let mut parts = Vec::new();
    if pruned > 0 {
        parts.push(format!(
            "{pruned} old tool result{} pruned",
            if pruned == 1 { "" } else { "s" }
        ));
    }
    if summarized > 0 {
        parts.push(format!("{summarized} older messages summarised"));
    }
    format!(
        "⟳ context compacted: {} → {} tokens ({})",
        tokens(before),
        tokens(after),
        parts.join(", ")
    )
}

/// Dollars with enough digits to see a cheap request: `$0.0042`, `$1.23`. Never negative: an
/// empty sum is `-0.0`, and no amount spent can be below nothing.
pub fn dollars(cost: f64) -> String {
    let cost = if cost > 0.0 { cost } else { 0.0 };
    if cost < 1.0 {
        format!("${cost:.4}")
    } else {
        format!("${cost:.2}")
    }
}

/// The share of prompt tokens served from the provider's cache, in percent.
pub fn cache_hit_percent(usage: &Usage) -> Option<u64> {
    (usage.prompt_tokens > 0)
        .then(|| usage.cached_tokens.min(usage.prompt_tokens) * 100 / usage.prompt_tokens)
}

/// The `/cost` table; `model` is named when its prices are unknown.
pub fn report_text(rows: &[CostRow], model: &str) -> String {
    if rows.is_empty() {
        return "cost: no model requests in this session yet".into();
    }
    let mut out = format!(
        "{:>6}  {:>9}  {:>9}  {:>8}  {:>9}\n",
        "step", "in", "cached", "out", "cost"
    );
    let mut total = Usage::default();
    let mut cost = Some(0.0);
    for row in rows {
        let step = if row.step == 0 {
            "compact".to_string()
        } else {
            row.step.to_string()
        };
        out.push_str(&format!(
            "{step:>6}  {:>9}  {:>9}  {:>8}  {:>9}\n",
            tokens(row.usage.prompt_tokens),
            tokens(row.usage.cached_tokens),
            tokens(row.usage.completion_tokens),
            row.cost_usd.map_or("?".into(), dollars),
        ));
        total.prompt_tokens += row.usage.prompt_tokens;
        total.cached_tokens += row.usage.cached_tokens;
        total.completion_tokens += row.usage.completion_tokens;
        cost = cost.zip(row.cost_usd).map(|(a, b)| a + b);
    }
    out.push_str(&format!(
        "{:>6}  {:>9}  {:>9}  {:>8}  {:>9}\n",
        "total",
        tokens(total.prompt_tokens),
        tokens(total.cached_tokens),
        tokens(total.completion_tokens),
        cost.map_or("?".into(), dollars),
    ));
    match cache_hit_percent(&total) {
        Some(hit) => out.push_str(&format!(
            "{} requests, cache hits {hit}% of input",
            rows.len()
        )),
        None => out.push_str(&format!("{} requests", rows.len())),
    }
    if cost.is_none() {
        out.push_str(&format!(
            "\n$? : no price is known for {model}. Set its dollars per million tokens under [prices] in the config (input, cached_input, output; [prices.models.\"NAME\"] for another model) and the status line shows the cost"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_lists_each_request_and_totals_with_the_cache_ratio() {
        let row = |step, prompt, cached, cost| CostRow {
            step,
            usage: Usage {
                prompt_tokens: prompt,
                completion_tokens: 100,
                cached_tokens: cached,
            },
            cost_usd: cost,
        };
        let text = report_text(
            &[
                row(1, 1000, 0, Some(0.001)),
                row(2, 3000, 2000, Some(0.002)),
            ],
            "m",
        );
        assert!(text.contains("total") && text.contains("$0.0030"), "{text}");
        assert!(text.contains("cache hits 50% of input"), "{text}");
        let unknown = report_text(&[row(0, 10, 0, None)], "my-finetune");
        assert!(
            unknown.contains("compact")
                && unknown.contains("$? : no price is known for my-finetune")
                && unknown.contains("[prices]"),
            "{unknown}"
        );
        assert_eq!(dollars(-0.0), "$0.0000");
        assert_eq!(dollars(-1.5), "$0.0000");
        assert_eq!(dollars(0.00421), "$0.0042");
        assert_eq!(dollars(12.345), "$12.35");
        assert_eq!(
            compaction_text(28_100, 9_300, 12, 40),
            "⟳ context compacted: 28.1k → 9.3k tokens (12 old tool results pruned, 40 older messages summarised)"
        );
    }
}
