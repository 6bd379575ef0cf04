//! A cluster joined as one machine: what a host of this machine opens once and hands
//! its parts from (the shared inbox, the other machines' store, this machine's host).

use crate::config::ClusterFile;
use crate::connection::Connection;
use crate::host::MachineHost;
use crate::inbox::NatsInbox;
use crate::machines::{self, Machines};
use anyhow::Result;
use std::sync::Arc;

/// A cluster joined as one machine: the connection, the shared inbox, and what the
/// cluster file says.
pub struct Cluster {
    file: ClusterFile,
    connection: Arc<Connection>,
    inbox: Arc<NatsInbox>,
}

impl Cluster {
    /// Connects and opens the deployment's buckets (made when missing).
    pub fn join(file: ClusterFile) -> Result<Cluster> {
        let connection = Connection::open(&file)?;
        let inbox = NatsInbox::open(connection.clone(), &file.bucket, file.replicas)?.taking(&file);
        Ok(Cluster {
            file,
            connection,
            inbox: Arc::new(inbox),
        })
    }

    /// This machine's name.
    pub fn machine(&self) -> &str {
        self.file.machine.as_str()
    }

    /// The shared inbox.
    pub fn inbox(&self) -> Arc<NatsInbox> {
        self.inbox.clone()
    }

    /// The other machines' sessions, as a store whose deliveries go to `inbox` (the
    /// shared inbox, as this process audits it).
    pub fn machines(&self, inbox: host_shim::SharedInbox) -> Result<Machines> {
        Machines::open(
            self.connection.clone(),
            &self.file,
            inbox,
            (*self.inbox).clone(),
        )
    }

    /// The machines that published their sessions, this one included: each machine's
    /// name, how many sessions it published and how many of them run now, by name.
    pub fn machines_seen(&self) -> Result<Vec<(String, usize, usize)>> {
        let directory = machines::Directory::open(&self.connection, &self.file, &self.inbox)?;
        let mut seen: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
        for remote in directory.remotes()? {
            let counts = seen.entry(remote.machine).or_default();
            counts.0 += 1;
            counts.1 += usize::from(remote.live);
        }
        Ok(seen
            .into_iter()
            .map(|(m, (all, live))| (m, all, live))
            .collect())
    }

    /// Publishes this machine's sessions (`local`: the stores of this machine only) and
    /// answers other machines' reads of them, until the returned host is dropped.
    pub fn serve(&self, local: host_shim::Harnesses) -> Result<MachineHost> {
        MachineHost::start(self.connection.clone(), &self.file, local)
    }
}
