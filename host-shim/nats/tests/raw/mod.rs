//! Writes past the hosts: a plain NATS client publishing straight into a bucket, as a
//! machine's own credentials would let any program on it, for the tests of what the
//! server and the receiving host refuse.

#![allow(dead_code)]

use std::time::Duration;

/// Publishes `body` to `subject` through JetStream as `client`, on `runtime`: whether
/// the cluster stored it (refused, or not acknowledged within 2 s: false).
pub fn stored(
    runtime: &tokio::runtime::Runtime,
    client: &async_nats::Client,
    subject: &str,
    body: Vec<u8>,
) -> bool {
    let (client, subject) = (client.clone(), subject.to_string());
    runtime.block_on(async move {
        // Made on the runtime: the context starts a task.
        let jetstream = async_nats::jetstream::new(client);
        let published = async { jetstream.publish(subject.clone(), body.into()).await?.await };
        match tokio::time::timeout(Duration::from_secs(2), published).await {
            Ok(Ok(_)) => true,
            // Said, for a test that expected it stored.
            Ok(Err(err)) => {
                eprintln!("{subject}: not stored: {err}");
                false
            }
            Err(_) => {
                eprintln!("{subject}: not acknowledged within 2 s");
                false
            }
        }
    })
}

/// A message as a sender's host stores it, to `target`, from `sender`, saying `body`.
pub fn message(target: &str, sender: &str, body: &str) -> Vec<u8> {
    let mut message = host_shim::inbox::SpooledMessage::new(
        target,
        host_shim::contract::latest::DeliveryMode::Queue,
        body,
        "",
        false,
    );
    message.sender = sender.to_string();
    serde_json::to_vec(&message).unwrap()
}

/// Sends `body` to `subject` as `client`, on `runtime`, as a request: the answer, or
/// none when nobody answered within a second (what a refused publish gets: the server
/// drops it).
pub fn answered(
    runtime: &tokio::runtime::Runtime,
    client: &async_nats::Client,
    subject: &str,
    body: &str,
) -> Option<async_nats::Message> {
    let (client, subject, body) = (client.clone(), subject.to_string(), body.to_string());
    runtime.block_on(async move {
        let asked = client.request(subject, body.into());
        match tokio::time::timeout(Duration::from_secs(1), asked).await {
            Ok(Ok(answer)) => Some(answer),
            _ => None,
        }
    })
}
