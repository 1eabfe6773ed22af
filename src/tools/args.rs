//! Lenient argument parsing: models send `"10"` for 10 and `"true"` for true, and every tool
//! reads its counts and flags by the same rule.

use serde::{Deserialize, Deserializer};

/// The one rule for counts from a model: a non-negative whole number, also sent as `"10"` or
/// `10.0`; null, a missing field or a blank string mean "not given".
pub fn lenient_u64<'de, D: Deserializer<'de>>(de: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Num(u64),
        Float(f64),
        Text(String),
    }
    let invalid = |got: String| {
        serde::de::Error::custom(format!("expected a non-negative whole number, got {got}"))
    };
    match Option::<Raw>::deserialize(de)? {
        None => Ok(None),
        Some(Raw::Num(n)) => Ok(Some(n)),
        Some(Raw::Float(f)) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => {
            Ok(Some(f as u64))
        }
        Some(Raw::Float(f)) => Err(invalid(f.to_string())),
        Some(Raw::Text(s)) if s.trim().is_empty() => Ok(None),
        Some(Raw::Text(s)) => match s.trim().parse::<f64>() {
            Ok(f) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => {
                Ok(Some(s.trim().parse().unwrap_or(f as u64)))
            }
            _ => Err(invalid(format!("{s:?}"))),
        },
    }
}

/// [`lenient_u64`] for sizes and line numbers.
pub fn lenient_usize<'de, D: Deserializer<'de>>(de: D) -> Result<Option<usize>, D::Error> {
    lenient_u64(de)?
        .map(|n| {
            usize::try_from(n).map_err(|_| serde::de::Error::custom("the number is too large"))
        })
        .transpose()
}

/// The one rule for flags from a model: `true`/`false`, also sent as `"true"`, `"yes"`, `"1"`
/// (any case) and their opposites; null, a missing field or a blank string mean "not given".
pub fn lenient_bool<'de, D: Deserializer<'de>>(de: D) -> Result<Option<bool>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Bool(bool),
        Num(u64),
        Text(String),
    }
    match Option::<Raw>::deserialize(de)? {
        None => Ok(None),
        Some(Raw::Bool(b)) => Ok(Some(b)),
        Some(Raw::Num(n @ (0 | 1))) => Ok(Some(n == 1)),
        Some(Raw::Num(n)) => Err(serde::de::Error::custom(format!(
            "expected true or false, got {n}"
        ))),
        Some(Raw::Text(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Ok(Some(true)),
            "false" | "no" | "0" => Ok(Some(false)),
            "" => Ok(None),
            _ => Err(serde::de::Error::custom(format!(
                "expected true or false, got {s:?}"
            ))),
        },
    }
}

/// [`lenient_bool`] for a flag that is off unless given.
pub fn lenient_flag<'de, D: Deserializer<'de>>(de: D) -> Result<bool, D::Error> {
    Ok(lenient_bool(de)?.unwrap_or(false))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[derive(Deserialize)]
    struct Args {
        #[serde(default, deserialize_with = "lenient_usize")]
        n: Option<usize>,
        #[serde(default, deserialize_with = "lenient_bool")]
        flag: Option<bool>,
    }

    #[test]
    fn lenient_numbers_and_flags() {
        let parse = |v: serde_json::Value| serde_json::from_value::<Args>(v).map(|a| (a.n, a.flag));
        assert_eq!(
            parse(serde_json::json!({"n": 3, "flag": true})).unwrap(),
            (Some(3), Some(true))
        );
        assert_eq!(
            parse(serde_json::json!({"n": "12", "flag": "false"})).unwrap(),
            (Some(12), Some(false))
        );
        assert_eq!(
            parse(serde_json::json!({"n": 4.0})).unwrap(),
            (Some(4), None)
        );
        assert_eq!(parse(serde_json::json!({"n": null})).unwrap(), (None, None));
        assert_eq!(parse(serde_json::json!({})).unwrap(), (None, None));
        assert!(parse(serde_json::json!({"n": -1})).is_err());
        assert!(parse(serde_json::json!({"n": "many"})).is_err());
        assert!(parse(serde_json::json!({"flag": "maybe"})).is_err());
        // One rule for every tool: blank means not given, fractions are refused.
        assert_eq!(
            parse(serde_json::json!({"n": " ", "flag": ""})).unwrap(),
            (None, None)
        );
        assert_eq!(
            parse(serde_json::json!({"n": "7.0", "flag": "YES"})).unwrap(),
            (Some(7), Some(true))
        );
        assert_eq!(
            parse(serde_json::json!({"flag": 0})).unwrap(),
            (None, Some(false))
        );
        assert!(parse(serde_json::json!({"n": 1.5})).is_err());
        assert!(parse(serde_json::json!({"n": "1.5"})).is_err());
        assert!(parse(serde_json::json!({"flag": 2})).is_err());
    }
}
