//! The state folder, as the command's flags name it: the inbox (the folder's, or a
//! cluster's when a cluster file joins this machine to others), the live registry and
//! idle marks, the audit log. Opened once per process.

use anyhow::{Context, Result, bail};
use host_shim::inbox::{AuditLog, Audited};
use host_shim::{LocalPresence, Presence, SharedInbox, StateDir};
use host_shim_nats::{Cluster, ClusterFile};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The state folder: the inbox spool, the live registry and the audit log.
#[derive(clap::Args, Default)]
pub struct StateArgs {
    /// Where spooled messages and live sessions are kept (default:
    /// $XDG_STATE_HOME/session-tools or ~/.local/state/session-tools).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Keep each message's body in the audit log (`host-shim log`), not only its size
    /// and hash.
    #[arg(long)]
    pub log_bodies: bool,
    /// The cluster file (JSON: the NATS servers, this machine's name, credentials, TLS)
    /// that joins this machine's sessions to other machines' (default: cluster.json in
    /// the state folder, when it is there; docs/nats.md). Without one, nothing of NATS
    /// is loaded.
    #[arg(long)]
    pub cluster: Option<PathBuf>,
    /// The cluster, joined once per process (the inbox and the stores share it).
    #[arg(skip)]
    joined: std::sync::OnceLock<Option<Arc<Cluster>>>,
}

/// How long a call may take when the inbox is a cluster's, unless a policy file or
/// `--deadline-ms` says.
pub const CLUSTER_DEADLINE: Duration = host_shim_nats::CALL_DEADLINE;

impl StateArgs {
    pub fn root(&self) -> Result<PathBuf> {
        let Some(root) = (self.state_dir.clone()).or_else(host_shim::inbox::default_dir) else {
            bail!("no state folder: set HOME or XDG_STATE_HOME, or pass --state-dir DIR");
        };
        Ok(root)
    }

    /// The cluster this machine joined (`--cluster`, else the state folder's
    /// cluster.json when it is there), joined once per process; none without a file.
    pub fn cluster(&self) -> Result<Option<Arc<Cluster>>> {
        if let Some(joined) = self.joined.get() {
            return Ok(joined.clone());
        }
        let path = match &self.cluster {
            Some(path) => Some(path.clone()),
            None => Some(self.root()?.join("cluster.json")).filter(|path| path.is_file()),
        };
        let joined = match path {
            None => None,
            Some(path) => {
                let file = ClusterFile::read(&path)?;
                let cluster = Cluster::join(file).with_context(|| {
                    format!("cannot join the cluster the file {} names", path.display())
                })?;
                Some(Arc::new(cluster))
            }
        };
        Ok(self.joined.get_or_init(|| joined).clone())
    }

    /// The inbox: the cluster's when this machine joined one, else the state folder's;
    /// every acceptance and hand-over recorded in the state folder's audit log. Opened
    /// once per process (each opening is its own log writer).
    pub fn inbox(&self) -> Result<SharedInbox> {
        let root = self.root()?;
        let log = AuditLog::open(&root, self.log_bodies)?;
        Ok(match self.cluster()? {
            Some(cluster) => {
                let inbox = (*cluster.inbox()).clone().remembering(&root)?;
                Arc::new(Audited::new(inbox, log))
            }
            None => Arc::new(Audited::new(StateDir::open(&root)?, log)),
        })
    }

    /// The state folder's live registry and idle marks (the presence of the harnesses
    /// that keep none of their own).
    pub fn presence(&self) -> Result<Arc<dyn Presence>> {
        Ok(Arc::new(LocalPresence::open(&self.root()?)?))
    }
}

impl host_shim_profile::StateFolder for StateArgs {
    fn root(&self) -> Result<PathBuf> {
        StateArgs::root(self)
    }

    fn inbox(&self) -> Result<SharedInbox> {
        StateArgs::inbox(self)
    }

    fn presence(&self) -> Result<Arc<dyn Presence>> {
        StateArgs::presence(self)
    }
}
