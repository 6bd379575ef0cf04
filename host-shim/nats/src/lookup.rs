//! Reads of single keys and of where a filter's writes stand, through subjects a
//! deployment's permissions can confine to a machine's own keys (`crate::permissions`):
//! nothing here names a key in a request's body, where permissions cannot see it.
//!
//! - Where writes stand: the stream's leader answers a publish that expects a sequence
//!   no write ever has (`Nats-Expected-Last-Subject-Sequence` of 2^63 − 1, checked
//!   against the filter in `Nats-Expected-Last-Subject-Sequence-Subject`) by refusing
//!   it, naming the last sequence under the filter ("wrong last sequence: N"). The
//!   leader checks it before it proposes anything: nothing is written, nothing synced.
//!   The publish goes to this machine's own probe key (`probe.<machine>`), which
//!   nothing reads. While a conditional write to the same subject is in flight the
//!   leader refuses without a number (error 10164), which says nothing: asked again.
//! - A key's value: a direct get (`$JS.API.DIRECT.GET.<stream>.<subject>`, the key in
//!   the subject). Any replica may answer one and a replica can lag the leader, so a
//!   read first asks the leader where the key stands and takes the value only from a
//!   replica that has reached it. A bucket that does not allow direct gets (made
//!   before this, not yet set up by its administrator) is read from its leader by
//!   `STREAM.MSG.GET`, which confined permissions refuse.
//!
//! Trust model: what comes back is the bucket's data, returned as it is; the number in
//! a refusal is the server's.

use crate::config::STEP_TIMEOUT;
use anyhow::{Result, anyhow, bail};
use async_nats::jetstream::stream::{DirectGetErrorKind, LastRawMessageErrorKind};
use async_nats::jetstream::{self, kv};
use std::time::Duration;

/// A sequence no stream reaches (the server reads the header as a signed 64-bit
/// number: a larger one would be taken as no expectation at all, and written).
const NEVER_WRITTEN: i64 = i64::MAX;

/// The sequence number in a refusal for a wrong last sequence, if `err` is one.
fn wrong_last_sequence(err: &anyhow::Error) -> Option<u64> {
    let text = format!("{err:#}");
    let (_, after) = text.rsplit_once("wrong last sequence: ")?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Whether a conditional publish was refused undecided (JetStream's error 10164, "wrong
/// last sequence" with no number): a conditional write to the same subject is in
/// flight on the leader, or was applied a moment ago (this process's own, often) and
/// not yet let go. It says nothing of where the subject stands: asked again. A
/// decided refusal names the subject's last sequence (10071, [`wrong_last_sequence`]).
fn in_flight(err: &anyhow::Error) -> bool {
    format!("{err:#}").contains("wrong last sequence") && wrong_last_sequence(err).is_none()
}

/// The stream sequence of the last write under `filter` (a key or a pattern under
/// `store`'s keys), as the stream's leader holds it now; 0 for none. `machine` names
/// the probe key this machine may publish to.
pub(crate) async fn last_sequence(
    context: &jetstream::Context,
    store: &kv::Store,
    machine: &str,
    filter: &str,
) -> Result<u64> {
    let probe = format!("{}probe.{machine}", store.prefix);
    let mut headers = async_nats::HeaderMap::new();
    let expected = async_nats::header::NATS_EXPECTED_LAST_SUBJECT_SEQUENCE;
    headers.insert(expected, NEVER_WRITTEN.to_string().as_str());
    let under = format!("{}{filter}", store.prefix);
    headers.insert(
        "Nats-Expected-Last-Subject-Sequence-Subject",
        under.as_str(),
    );
    let decided = conditional_publish(context, &probe, headers, bytes::Bytes::new()).await;
    match decided.map_err(|err| anyhow!("cannot read the bucket: {err}"))? {
        Decided::Refused(sequence) => Ok(sequence),
        Decided::Stored(sequence) => bail!(
            "the cluster stored a probe at {probe} (sequence {sequence}) that expected a sequence no stream has: a server that does not check Nats-Expected-Last-Subject-Sequence-Subject (NATS 2.11 or later is needed)"
        ),
    }
}

/// What the stream's leader decided of a conditional publish.
pub(crate) enum Decided {
    /// Stored, at this stream sequence.
    Stored(u64),
    /// Refused: the subject (or the filter the headers name) stands at this sequence,
    /// not the one expected.
    Refused(u64),
}

/// Publishes `value` to `subject` with `headers` that expect a sequence, until the
/// leader decides: asked again a millisecond later while it answers undecided
/// ([`in_flight`]), within [`STEP_TIMEOUT`]; any other failure is returned as it came.
pub(crate) async fn conditional_publish(
    context: &jetstream::Context,
    subject: &str,
    headers: async_nats::HeaderMap,
    value: bytes::Bytes,
) -> Result<Decided> {
    let deadline = tokio::time::Instant::now() + STEP_TIMEOUT;
    loop {
        let answered = async {
            let (subject, headers) = (subject.to_string(), headers.clone());
            let ack = (context.publish_with_headers(subject, headers, value.clone())).await?;
            ack.await.map_err(anyhow::Error::from)
        };
        let err = match answered.await {
            Ok(ack) => return Ok(Decided::Stored(ack.sequence)),
            Err(err) => err,
        };
        if let Some(sequence) = wrong_last_sequence(&err) {
            return Ok(Decided::Refused(sequence));
        }
        if !in_flight(&err) || tokio::time::Instant::now() >= deadline {
            return Err(err);
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// A stored message: its value, stream sequence and headers.
type Stored = (bytes::Bytes, u64, Option<async_nats::HeaderMap>);

/// `key`'s last value in `store` and its revision, as of now (none: no value, or
/// deleted): no write the cluster acknowledged before is missed.
pub(crate) async fn last_entry(
    context: &jetstream::Context,
    store: &kv::Store,
    machine: &str,
    key: &str,
) -> Result<Option<(bytes::Bytes, u64)>> {
    let subject = format!("{}{key}", store.prefix);
    let message = if store.stream.cached_info().config.allow_direct {
        from_a_current_replica(context, store, machine, key).await?
    } else {
        match store.stream.get_last_raw_message_by_subject(&subject).await {
            Ok(message) => Some((message.payload, message.sequence, Some(message.headers))),
            Err(err) if err.kind() == LastRawMessageErrorKind::NoMessageFound => None,
            Err(err) => bail!("cannot read {key}: {err}"),
        }
    };
    Ok(message.and_then(|(value, revision, headers)| {
        let removed = (headers.as_ref())
            .and_then(|h| h.get("KV-Operation"))
            .is_some_and(|op| matches!(op.as_str(), "DEL" | "PURGE"));
        (!removed).then_some((value, revision))
    }))
}

/// `key`'s last message, from a replica that has reached the write the leader names
/// as its last; asked again (leader first: the write may have expired meanwhile) until
/// one has, within [`STEP_TIMEOUT`].
async fn from_a_current_replica(
    context: &jetstream::Context,
    store: &kv::Store,
    machine: &str,
    key: &str,
) -> Result<Option<Stored>> {
    let subject = format!("{}{key}", store.prefix);
    let deadline = tokio::time::Instant::now() + STEP_TIMEOUT;
    loop {
        let at = last_sequence(context, store, machine, key).await?;
        if at == 0 {
            return Ok(None);
        }
        let behind = match store.stream.direct_get_last_for_subject(&subject).await {
            Ok(message) if message.sequence >= at => {
                return Ok(Some((
                    message.payload,
                    message.sequence,
                    Some(message.headers),
                )));
            }
            Ok(message) => format!("a replica answered with sequence {}", message.sequence),
            Err(err) if err.kind() == DirectGetErrorKind::NotFound => {
                "a replica had nothing".to_string()
            }
            Err(err) => bail!("cannot read {key}: {err}"),
        };
        if tokio::time::Instant::now() >= deadline {
            bail!("cannot read {key}: the leader holds sequence {at}, yet {behind}");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::{in_flight, wrong_last_sequence};
    use anyhow::anyhow;

    #[test]
    fn the_sequence_in_a_refusal_is_read() {
        // As async-nats 0.51 words the server's refusal.
        let err =
            anyhow!("wrong last sequence: wrong last sequence: 4711 (code 400, error code 10071)");
        assert_eq!(wrong_last_sequence(&err), Some(4711));
        let err = anyhow!("wrong last sequence: 0");
        assert_eq!(wrong_last_sequence(&err), Some(0));
        assert_eq!(wrong_last_sequence(&anyhow!("no responders")), None);
        let undecided =
            anyhow!("wrong last sequence: wrong last sequence (code 400, error code 10164)");
        assert_eq!(wrong_last_sequence(&undecided), None);
        assert!(in_flight(&undecided));
        assert!(!in_flight(&err));
        assert!(!in_flight(&anyhow!("no responders")));
    }
}
