//! The `[prices]` table: dollars per million tokens for the configured model and for others
//! by name, each key falling back to the model catalogue's price.

use serde::Deserialize;

/// One price in the `[prices]` table: dollars per million tokens.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PriceFile {
    pub input: Option<f64>,
    pub cached_input: Option<f64>,
    pub output: Option<f64>,
}

/// The `[prices]` table: prices for the configured model, and `[prices.models."NAME"]` for others.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PricesFile {
    #[serde(flatten)]
    pub default: PriceFile,
    #[serde(default)]
    pub models: std::collections::BTreeMap<String, PriceFile>,
}

impl PricesFile {
    /// The price of `model`: its own entry, else the table's top-level prices when `model`
    /// is the configured one, each key falling back to the catalogue's price.
    pub fn for_model(&self, model: &str, configured: &str) -> Option<crate::models::Prices> {
        let listed = crate::models::lookup(model).and_then(|info| info.prices);
        let over = self
            .models
            .get(model)
            .or((model == configured).then_some(&self.default));
        let Some(over) = over else { return listed };
        let input = over.input.or(listed.map(|p| p.input))?;
        Some(crate::models::Prices {
            input,
            cached_input: over
                .cached_input
                .or(listed.map(|p| p.cached_input))
                .unwrap_or(input),
            output: over.output.or(listed.map(|p| p.output)).unwrap_or(input),
        })
    }
}
