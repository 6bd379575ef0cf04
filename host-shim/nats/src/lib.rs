//! Sessions on several machines, through NATS JetStream: what every machine's
//! `host-shim` processes share so a session on one machine lists, reads and messages a
//! session on another.
//!
//! - [`NatsInbox`] ([`inbox`]): the inbox, an [`host_shim::InboxBackend`] over one
//!   key-value bucket; a message sent on one machine waits there until the target's
//!   machine hands it over, exactly as the local state folder's inbox does on one.
//! - [`Machines`] ([`machines`]): the other machines' sessions as one more
//!   [`host_shim::Store`]: listed from what each machine published, read by asking
//!   that machine's host, messaged through the shared inbox.
//! - [`MachineHost`] ([`host`]): what a machine's long-lived host (its MCP server) runs
//!   besides: it publishes the machine's sessions and liveness, and answers the other
//!   machines' reads of them.
//! - [`ClusterFile`] ([`config`]): where the cluster is and what this machine is
//!   called, from one file; [`Cluster`] joins it.
//!
//! Subjects and keys, under the deployment's bucket name `<b>` (a machine's name and a
//! session id are each one subject token; a session id's `.` is written `=`):
//!
//! ```text
//! KV <b>        m.<machine>.<session>.<sender machine>.<name>   a message ([`inbox`])
//!               s.<machine>.<session>.<sender machine>.<name>   its claim or hand-over mark
//!               p.<machine>.<session>     what the session's person lets in
//!               d.<machine>               the sessions a machine published
//!               probe.<machine>           never written: where a machine asks the
//!                                         leader how far writes stand ([`lookup`])
//! KV <b>-live   <machine>                 the machine's live sessions (expires: its TTL)
//! st.<b>.<machine>.read                   a read of one of the machine's sessions, or
//!                                         word of a message stored for one
//! ```
//!
//! Trust model: the cluster is the deployment's. Which machine may write what is its
//! NATS configuration (credentials, the subject permissions [`permissions`] writes:
//! each machine writes messages only as their sender, marks and lists only its own, and
//! reads only the messages it sent or is sent),
//! which the connection presents ([`ClusterFile`]: a credentials file, TLS); without
//! them, whoever may write the bucket may write any key. What comes back
//! from the bucket or another machine is data: checked, bounded, never trusted to name
//! this machine's sessions.
//!
//! The NATS client is asynchronous; this crate runs it on a small runtime of its own
//! (one worker thread) and waits for each step on the caller's thread, so it works
//! from plain threads and from inside another runtime's blocking tasks alike. The kit
//! (`host-shim`) stays free of any async runtime; a host without a cluster file never
//! loads this.

pub mod cluster;
pub mod config;
mod connection;
pub mod host;
pub mod inbox;
pub mod ledger;
mod lookup;
pub mod machines;
pub mod permissions;
mod published;
mod watch;
mod wire;

pub use cluster::Cluster;
pub use config::{CALL_DEADLINE, ClusterFile, MachineName, STEP_TIMEOUT};
pub use connection::{CLOCKS_APART, Connection};
pub use host::MachineHost;
pub use inbox::{CLAIM_EXPIRES, NatsInbox};
pub use machines::Machines;
