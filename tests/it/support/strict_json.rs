//! A strict JSON check: parses like `serde_json` but refuses an object that repeats a key,
//! which `serde_json::Value` silently accepts (the last value wins) and stricter consumers
//! (Python's `object_pairs_hook` checks, Go decoders with duplicate checks, jq --stream
//! users) treat as broken.
#![allow(dead_code)]

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// Parses `text` and fails on a duplicate key at any depth, naming it.
pub fn parse_strict(text: &str) -> Result<(), String> {
    serde_json::from_str::<Strict>(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Any JSON value, checked; the value itself is not kept.
struct Strict;

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Strict;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value without duplicate keys")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Strict, E> {
        Ok(Strict)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Strict, E> {
        Ok(Strict)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Strict, E> {
        Ok(Strict)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Strict, E> {
        Ok(Strict)
    }
    fn visit_str<E>(self, _: &str) -> Result<Strict, E> {
        Ok(Strict)
    }
    fn visit_unit<E>(self) -> Result<Strict, E> {
        Ok(Strict)
    }
    fn visit_none<E>(self) -> Result<Strict, E> {
        Ok(Strict)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
        while seq.next_element::<Strict>()?.is_some() {}
        Ok(Strict)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Strict, A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format!("duplicate key `{key}`")));
            }
            map.next_value::<Strict>()?;
        }
        Ok(Strict)
    }
}

#[test]
fn the_strict_parser_rejects_repeated_keys_at_any_depth() {
    assert_eq!(
        parse_strict(r#"{"a":1,"b":[{"c":null}],"d":{"e":"x"}}"#),
        Ok(())
    );
    let top = parse_strict(r#"{"type":"tool","type":"requested"}"#);
    assert!(top.is_err_and(|e| e.contains("duplicate key `type`")));
    assert!(parse_strict(r#"[{"a":{"b":1,"b":2}}]"#).is_err());
    // The same key in sibling objects is fine.
    assert_eq!(parse_strict(r#"[{"a":1},{"a":2}]"#), Ok(()));
    assert!(parse_strict(r#"{"a":1"#).is_err());
}
