//! The subject permissions a deployment gives each machine's NATS user, in the
//! server's configuration syntax: what a host needs, and no other machine's place.
//!
//! What they confine: a machine writes messages only as their sender (`m.` keys name
//! the sender's machine), marks only its own sessions' messages handed over
//! (`s.<machine>.…`) and sets only its own sessions' inbound (`p.<machine>.…`),
//! publishes only its own list (`d.<machine>`) and heartbeat (`<machine>` in the live
//! bucket), answers only reads of its own sessions (`st.<bucket>.<machine>.read`,
//! replying through `allow_responses`), and receives only its own replies
//! (`_INBOX_<machine>.>`, the prefix the crate connects with); it cannot make, change
//! or delete the buckets (the deployment makes them once, with an administrator's
//! cluster file). Reads are confined too: a machine reads every machine's list,
//! heartbeat and persons' say, and of the messages and their marks only those to its
//! own sessions and those it sent. Every consumer it makes names its filter in the
//! request's subject (the server refuses one whose configuration says otherwise) and
//! every single key it reads is named in the subject of a direct get; the requests
//! whose body says what to read (`STREAM.MSG.GET`, a consumer made without a name)
//! are not allowed. What a machine can still learn of others' messages: which keys
//! exist and how many (`STREAM.INFO` with a subjects filter), and the sequence of the
//! last write under any filter (its probe) — who wrote to whom and when, not what.
//!
//! Trust model: this is text for a deployment's configuration; the server enforces it.
//! Tests start a cluster with these blocks and try each refusal.

use crate::config::MachineName;
use crate::config::live_bucket;

/// The key of the claim set in the bucket.
pub const CLAIMS_KEY: &str = "c";

/// The subjects `machine` may publish to and subscribe to, on the deployment's
/// `bucket`.
pub fn subjects(bucket: &str, machine: &MachineName) -> (Vec<String>, Vec<String>) {
    subjects_reaching(bucket, machine, None)
}

/// [`subjects`], the messages held to the sessions of `reaches` (and of `machine`
/// itself) when given: the deployment's say over which machines a machine may message.
pub fn subjects_reaching(
    bucket: &str,
    machine: &MachineName,
    reaches: Option<&[MachineName]>,
) -> (Vec<String>, Vec<String>) {
    let live = live_bucket(bucket);
    let (main, heartbeats) = (format!("KV_{bucket}"), format!("KV_{live}"));
    let mut publish = vec!["$JS.API.INFO".to_string()];
    for stream in [&main, &heartbeats] {
        publish.extend([
            format!("$JS.API.STREAM.INFO.{stream}"),
            format!("$JS.API.CONSUMER.INFO.{stream}.*"),
            format!("$JS.API.CONSUMER.DELETE.{stream}.*"),
            format!("$JS.FC.{stream}.>"),
        ]);
    }
    // What it may read: every machine's list, heartbeat and persons' say; of messages
    // and marks, those to its own sessions and those it sent. Consumers are made with
    // their filter in the subject (after the consumer's name), single keys read with
    // the key in the subject; where writes stand is asked by a refused publish to its
    // own probe key (`crate::lookup`).
    let readable = [
        "d.*".to_string(),
        "p.*.*".to_string(),
        CLAIMS_KEY.to_string(),
        format!("m.{machine}.>"),
        format!("s.{machine}.>"),
        format!("m.*.*.{machine}.*"),
        format!("s.*.*.{machine}.*"),
    ];
    for keys in &readable {
        publish.extend([
            format!("$JS.API.CONSUMER.CREATE.{main}.*.$KV.{bucket}.{keys}"),
            format!("$JS.API.DIRECT.GET.{main}.$KV.{bucket}.{keys}"),
        ]);
    }
    publish.extend([
        format!("$JS.API.CONSUMER.CREATE.{heartbeats}.*.$KV.{live}.>"),
        format!("$JS.API.DIRECT.GET.{heartbeats}.$KV.{live}.>"),
        format!("$KV.{bucket}.probe.{machine}"),
        format!("$KV.{live}.probe.{machine}"),
    ]);
    // Send as itself, to any machine's session or to those it may reach.
    let targets: Vec<String> = match reaches {
        None => vec!["*".to_string()],
        Some(machines) => std::iter::once(machine)
            .chain(machines.iter().filter(|m| *m != machine))
            .map(|m| m.to_string())
            .collect(),
    };
    for target in &targets {
        publish.push(format!("$KV.{bucket}.m.{target}.*.{machine}.*"));
    }
    publish.extend([
        // Hand over its own sessions' messages; its own persons' say.
        format!("$KV.{bucket}.s.{machine}.>"),
        format!("$KV.{bucket}.p.{machine}.*"),
        format!("$KV.{bucket}.d.{machine}"),
        // The claims, one set every machine shares (a write lands only at the revision
        // its writer read: `crate::inbox`).
        format!("$KV.{bucket}.{CLAIMS_KEY}"),
        format!("$KV.{live}.{machine}"),
        format!("st.{bucket}.*.read"),
    ]);
    let subscribe = vec![
        format!("_INBOX_{machine}.>"),
        format!("st.{bucket}.{machine}.read"),
    ];
    (publish, subscribe)
}

/// A user block for the server's `authorization { users: [...] }`: `machine`'s name as
/// the user, `password` (a bcrypt hash from `nats server passwd`, or the password),
/// and [`subjects`].
pub fn user_block(bucket: &str, machine: &MachineName, password: &str) -> String {
    user_block_reaching(bucket, machine, password, None)
}

/// [`user_block`] with [`subjects_reaching`].
pub fn user_block_reaching(
    bucket: &str,
    machine: &MachineName,
    password: &str,
    reaches: Option<&[MachineName]>,
) -> String {
    let (publish, subscribe) = subjects_reaching(bucket, machine, reaches);
    let quoted = |subjects: Vec<String>| {
        (subjects.iter())
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{{ user: \"{machine}\", password: \"{password}\", permissions: {{ publish: {{ allow: [{}] }}, subscribe: {{ allow: [{}] }}, allow_responses: true }} }}",
        quoted(publish),
        quoted(subscribe)
    )
}
