//! Why a request ended, in one JSON shape whatever the reason: `{"kind": "completed"}`,
//! `{"kind": "failed", "message": "…"}`. Scripts reading `request_ended` test one field; a
//! session log written before (a bare string, or `{"failed": "…"}`) still reads.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a request to the agent ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndReason {
    /// The model answered without tool calls.
    Completed,
    /// The user interrupted.
    Interrupted,
    /// The step limit was reached before the model finished.
    StepLimit,
    /// A call that needed approval was denied (or could not be asked) and the run stops there.
    Denied,
    /// Provider error after retries, truncated stream, or another agent-side failure.
    Failed(String),
    /// The answer (text, no tool calls) was cut at the output limit (`finish_reason: length`);
    /// what arrived is kept and the user can ask the model to continue it.
    OutputLimit,
}

/// The wire form: the kind, and the message of a failure.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", content = "message", rename_all = "snake_case")]
enum Wire {
    Completed,
    Interrupted,
    StepLimit,
    Denied,
    Failed(String),
    OutputLimit,
}

/// What the session log held before the one shape: `"completed"` or `{"failed": "…"}`.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Legacy {
    Completed,
    Interrupted,
    StepLimit,
    Denied,
    Failed(String),
    OutputLimit,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Either {
    Wire(Wire),
    Legacy(Legacy),
}

impl Serialize for EndReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let wire = match self {
            EndReason::Completed => Wire::Completed,
            EndReason::Interrupted => Wire::Interrupted,
            EndReason::StepLimit => Wire::StepLimit,
            EndReason::Denied => Wire::Denied,
            EndReason::Failed(message) => Wire::Failed(message.clone()),
            EndReason::OutputLimit => Wire::OutputLimit,
        };
        wire.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for EndReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Either::deserialize(deserializer)? {
            Either::Wire(Wire::Completed) | Either::Legacy(Legacy::Completed) => {
                EndReason::Completed
            }
            Either::Wire(Wire::Interrupted) | Either::Legacy(Legacy::Interrupted) => {
                EndReason::Interrupted
            }
            Either::Wire(Wire::StepLimit) | Either::Legacy(Legacy::StepLimit) => {
                EndReason::StepLimit
            }
            Either::Wire(Wire::Denied) | Either::Legacy(Legacy::Denied) => EndReason::Denied,
            Either::Wire(Wire::Failed(m)) | Either::Legacy(Legacy::Failed(m)) => {
                EndReason::Failed(m)
            }
            Either::Wire(Wire::OutputLimit) | Either::Legacy(Legacy::OutputLimit) => {
                EndReason::OutputLimit
            }
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn every_reason_is_an_object_with_a_kind_and_old_logs_still_read() {
        let cases = [
            (
                EndReason::Completed,
                r#"{"kind":"completed"}"#,
                r#""completed""#,
            ),
            (EndReason::Denied, r#"{"kind":"denied"}"#, r#""denied""#),
            (
                EndReason::StepLimit,
                r#"{"kind":"step_limit"}"#,
                r#""step_limit""#,
            ),
            (
                EndReason::Failed("429".into()),
                r#"{"kind":"failed","message":"429"}"#,
                r#"{"failed":"429"}"#,
            ),
        ];
        for (reason, now, before) in cases {
            assert_eq!(serde_json::to_string(&reason).unwrap(), now);
            assert_eq!(serde_json::from_str::<EndReason>(now).unwrap(), reason);
            assert_eq!(serde_json::from_str::<EndReason>(before).unwrap(), reason);
        }
    }
}
