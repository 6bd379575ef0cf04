//! The host's policy as data: every limit and bound the runtime enforces, the pool and
//! the Spectre hardening, in one serde type a deployment keeps in a file (`host-shim
//! call|mcp --policy FILE`), checked once when a runtime is built. Omitted fields take
//! their defaults; an unknown field is an error naming it.
//!
//! ```json
//! {"deadline_ms": 1000, "memory_bytes": 67108864, "output_bytes": 1048576,
//!  "deliveries_per_call": 1, "delivery_attempts_per_call": 4, "key_bytes": 1024,
//!  "body_bytes": 262144, "ids_per_batch": 100000, "lowered_bytes": 268435456,
//!  "id_bytes": 65536, "lifted_bytes": 67108864, "await_seconds": 3600,
//!  "pooling": true, "max_concurrent_calls": 64, "spectre_mitigations": true}
//! ```

use crate::guard::HostBounds;
use crate::runtime::{Limits, LoadError, RuntimeOptions};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Everything a runtime enforces, flat, as a policy file holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Wall-clock time a call may run, in milliseconds.
    pub deadline_ms: u64,
    /// Bytes of linear memory the plugin may hold (2 MiB to 4 GiB).
    pub memory_bytes: usize,
    /// Bytes of text a call, an error or the catalog may return.
    pub output_bytes: usize,
    /// `deliver` calls the inbox accepts per tool call.
    pub deliveries_per_call: u32,
    /// `deliver` calls per tool call, accepted or refused.
    pub delivery_attempts_per_call: u32,
    /// Bytes of one delivery key.
    pub key_bytes: usize,
    /// Bytes of one delivered body.
    pub body_bytes: usize,
    /// Ids or seqs in one batch.
    pub ids_per_batch: usize,
    /// Bytes of host data handed to the plugin in one call.
    pub lowered_bytes: usize,
    /// Bytes of one session id the plugin passes.
    pub id_bytes: usize,
    /// Bytes the plugin hands the host in one call.
    pub lifted_bytes: usize,
    /// Seconds a send may await its reply.
    pub await_seconds: u32,
    /// Pre-allocate instance slots and reuse them.
    pub pooling: bool,
    /// Calls served at once (at least 1).
    pub max_concurrent_calls: u32,
    /// Keep wasmtime's Spectre hardening (see [`RuntimeOptions`]).
    pub spectre_mitigations: bool,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy::of(&RuntimeOptions::default())
    }
}

impl Policy {
    /// The policy of these options.
    pub fn of(options: &RuntimeOptions) -> Policy {
        let (limits, bounds) = (options.limits, options.bounds);
        Policy {
            deadline_ms: u64::try_from(limits.deadline.as_millis()).unwrap_or(u64::MAX),
            memory_bytes: limits.memory_bytes,
            output_bytes: limits.output_bytes,
            deliveries_per_call: bounds.deliveries_per_call,
            delivery_attempts_per_call: bounds.delivery_attempts_per_call,
            key_bytes: bounds.key_bytes,
            body_bytes: bounds.body_bytes,
            ids_per_batch: bounds.ids_per_batch,
            lowered_bytes: bounds.lowered_bytes,
            id_bytes: bounds.id_bytes,
            lifted_bytes: bounds.lifted_bytes,
            await_seconds: bounds.await_seconds,
            pooling: options.pooling,
            max_concurrent_calls: options.max_concurrent_calls,
            spectre_mitigations: options.spectre_mitigations,
        }
    }

    /// Runtime options with this policy and a compiled-component cache folder.
    pub fn options(&self, cache_dir: Option<PathBuf>) -> RuntimeOptions {
        RuntimeOptions {
            limits: Limits {
                deadline: Duration::from_millis(self.deadline_ms),
                memory_bytes: self.memory_bytes,
                output_bytes: self.output_bytes,
            },
            bounds: HostBounds {
                deliveries_per_call: self.deliveries_per_call,
                delivery_attempts_per_call: self.delivery_attempts_per_call,
                key_bytes: self.key_bytes,
                body_bytes: self.body_bytes,
                ids_per_batch: self.ids_per_batch,
                lowered_bytes: self.lowered_bytes,
                id_bytes: self.id_bytes,
                lifted_bytes: self.lifted_bytes,
                await_seconds: self.await_seconds,
            },
            pooling: self.pooling,
            max_concurrent_calls: self.max_concurrent_calls,
            cache_dir,
            spectre_mitigations: self.spectre_mitigations,
        }
    }

    /// A policy from JSON text; `origin` names it in errors. The policy is checked
    /// here too, so a bad file is named before anything is loaded.
    pub fn from_json(text: &str, origin: &str) -> Result<Policy, LoadError> {
        let policy: Policy = serde_json::from_str(text.trim_start_matches('\u{feff}'))
            .map_err(|err| LoadError::Policy(format!("{origin}: {err}")))?;
        policy
            .options(None)
            .check()
            .map_err(|err| LoadError::Policy(format!("{origin}: {err}")))?;
        Ok(policy)
    }

    /// A policy file.
    pub fn from_file(path: &Path) -> Result<Policy, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|err| {
            LoadError::Policy(format!("cannot read policy file {}: {err}", path.display()))
        })?;
        Policy::from_json(&text, &path.display().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_file_round_trips_and_omitted_fields_keep_their_defaults() {
        let policy =
            Policy::from_json(r#"{"deadline_ms": 250, "key_bytes": 512}"#, "p.json").unwrap();
        assert_eq!(policy.deadline_ms, 250);
        assert_eq!(policy.key_bytes, 512);
        assert_eq!(policy.memory_bytes, Policy::default().memory_bytes);
        let options = policy.options(None);
        assert_eq!(options.limits.deadline, Duration::from_millis(250));
        assert_eq!(Policy::of(&options), policy);
    }

    #[test]
    fn a_bad_policy_is_named_with_its_file_and_field() {
        let err = Policy::from_json(r#"{"deadlin_ms": 5}"#, "p.json").unwrap_err();
        assert!(
            err.to_string()
                .contains("p.json: unknown field `deadlin_ms`"),
            "{err}"
        );
        let err = Policy::from_json(r#"{"max_concurrent_calls": 0}"#, "p.json").unwrap_err();
        assert!(
            err.to_string()
                .contains("max_concurrent_calls must be at least 1"),
            "{err}"
        );
        let err = Policy::from_json(r#"{"memory_bytes": 1}"#, "p.json").unwrap_err();
        assert!(err.to_string().contains("at least 2 MiB"), "{err}");
    }
}
