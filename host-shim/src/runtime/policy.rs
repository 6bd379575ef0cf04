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
    /// What the plugin may make the host do in one call, each bound a field of its
    /// own in the file ([`HostBounds`] says what each means).
    #[serde(flatten)]
    pub bounds: HostBounds,
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
            bounds,
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
            bounds: self.bounds,
            pooling: self.pooling,
            max_concurrent_calls: self.max_concurrent_calls,
            cache_dir,
            spectre_mitigations: self.spectre_mitigations,
        }
    }

    /// A policy from JSON text; `origin` names it in errors. The policy is checked
    /// here too, so a bad file is named before anything is loaded.
    pub fn from_json(text: &str, origin: &str) -> Result<Policy, LoadError> {
        let policy: Policy = crate::json::from_str(text.trim_start_matches('\u{feff}'))
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
        assert_eq!(policy.bounds.key_bytes, 512);
        assert_eq!(policy.bounds.body_bytes, HostBounds::default().body_bytes);
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
        // A bound's name misspelt too.
        let err = Policy::from_json(r#"{"key_byte": 5}"#, "p.json").unwrap_err();
        assert!(
            err.to_string().contains("p.json: unknown field `key_byte`"),
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
