//! Config keys whose values are words of the wire formats (`api`, `tool_choice`,
//! `cache_ttl`): read as text, parsed by the type, and refused with its message.

use std::str::FromStr;

use serde::{Deserialize, Deserializer};

/// An optional key parsed with `T::from_str`; a value it refuses is an error naming the key's
/// allowed values (the file's line and column are added by the caller).
pub fn parsed<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr<Err = String>,
{
    Option::<String>::deserialize(deserializer)?
        .map(|text| text.parse().map_err(serde::de::Error::custom))
        .transpose()
}
