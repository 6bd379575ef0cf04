//! The cluster file: which NATS servers, this machine's name, the bucket, and how to
//! present itself (a credentials file, TLS), in one JSON object. The `host-shim`
//! command reads it from `<state folder>/cluster.json` or `--cluster FILE`; without one
//! nothing of NATS is loaded.
//!
//! ```json
//! {
//!   "servers": ["nats://nats-1.example:4222", "nats://nats-2.example:4222"],
//!   "machine": "build-box",
//!   "credentials": "/home/ann/.config/session-tools/build-box.creds",
//!   "tls": { "ca": "ca.pem" }
//! }
//! ```
//!
//! Trust model: the file is the person's own (like their SSH config); it names where
//! secrets are (a credentials file, a client key) and never holds one. Relative paths
//! are read from the file's folder. Every field is checked here, each error naming the
//! field and what to write.

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A machine's name as the cluster knows it: one NATS subject token of letters,
/// digits, `-` and `_`, 1 to 64 of them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MachineName(String);

impl MachineName {
    pub fn parse(name: &str) -> Result<MachineName> {
        let plain = (1..=64).contains(&name.len())
            && (name.bytes()).all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !plain {
            bail!(
                "{name:?} cannot name a machine: use 1 to 64 letters, digits, '-' or '_' (e.g. \"build-box\")"
            );
        }
        Ok(MachineName(name.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for MachineName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// TLS as the cluster asks for it: the authority that signed the servers' certificates
/// and, for mutual TLS, this machine's certificate and key (PEM files).
#[derive(Clone, Debug, Default)]
pub struct Tls {
    pub ca: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

/// How long a message is kept by default: 30 days.
pub const KEEP_DEFAULT: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// What the cluster file says, checked.
#[derive(Clone, Debug)]
pub struct ClusterFile {
    /// The servers to connect to (any one answers for the cluster).
    pub servers: Vec<String>,
    /// This machine.
    pub machine: MachineName,
    /// The key-value bucket every machine of the deployment shares (default
    /// `session-tools`); the live registry is the bucket `<bucket>-live`.
    pub bucket: String,
    /// Copies of each bucket, when this host makes it (default 3; 1 for one server).
    pub replicas: usize,
    /// A NATS credentials file (`.creds`: the user's JWT and key), as `nsc` writes it.
    pub credentials: Option<PathBuf>,
    /// A user name and a file holding its password (a server's `authorization` block).
    pub user: Option<String>,
    pub password_file: Option<PathBuf>,
    pub tls: Option<Tls>,
    /// How long a machine counts as running after its last heartbeat (default 30 s;
    /// heartbeats every third of it).
    pub live_ttl: Duration,
    /// How long a read of another machine's session waits for its host (default 2 s).
    pub read_timeout: Duration,
    /// How long a message and its mark are kept after each was last written (default
    /// 30 days, from `keepDays`): a message still waiting then (its machine off that
    /// long) goes with it.
    pub keep: Duration,
    /// The sessions this machine shares with the others: those whose workspace path is
    /// one of these folders or inside one (none given: every session). A session not
    /// shared is not listed, read or messaged from another machine.
    pub publish_paths: Option<Vec<PathBuf>>,
    /// The machines whose messages this machine's sessions take (none given: every
    /// machine of the deployment); a message from another stays in the cluster, named.
    pub accept_from: Option<Vec<MachineName>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Fields {
    servers: Option<Vec<String>>,
    url: Option<String>,
    machine: Option<String>,
    bucket: Option<String>,
    replicas: Option<usize>,
    credentials: Option<PathBuf>,
    user: Option<String>,
    password_file: Option<PathBuf>,
    tls: Option<TlsFields>,
    live_ttl_seconds: Option<u64>,
    read_timeout_ms: Option<u64>,
    keep_days: Option<u64>,
    publish_paths: Option<Vec<PathBuf>>,
    accept_from: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsFields {
    ca: Option<PathBuf>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
}

impl ClusterFile {
    /// A cluster at `servers` joined as `machine`, every other field its default.
    pub fn new(servers: &[&str], machine: &str) -> Result<ClusterFile> {
        Ok(ClusterFile {
            servers: servers.iter().map(|s| s.to_string()).collect(),
            machine: MachineName::parse(machine)?,
            bucket: "session-tools".to_string(),
            replicas: 3,
            credentials: None,
            user: None,
            password_file: None,
            tls: None,
            live_ttl: Duration::from_secs(30),
            read_timeout: Duration::from_secs(2),
            keep: KEEP_DEFAULT,
            publish_paths: None,
            accept_from: None,
        })
    }

    /// The cluster file at `path`, checked; errors name the file and the field.
    pub fn read(path: &Path) -> Result<ClusterFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the cluster file {}", path.display()))?;
        let folder = path.parent().unwrap_or(Path::new("."));
        ClusterFile::parse(&text, folder)
            .with_context(|| format!("the cluster file {}", path.display()))
    }

    /// A cluster file's text, its relative paths read from `folder`.
    pub fn parse(text: &str, folder: &Path) -> Result<ClusterFile> {
        let fields: Fields = host_shim::json::from_str(text).context(
            "not a cluster file: write one JSON object with \"servers\" (or \"url\") and \"machine\"",
        )?;
        let servers = match (fields.servers, fields.url) {
            (Some(_), Some(_)) => bail!("give \"servers\" or \"url\", not both"),
            (Some(servers), None) if !servers.is_empty() => servers,
            (None, Some(url)) => vec![url],
            _ => bail!(
                "no server: set \"servers\" to the cluster's URLs, e.g. [\"nats://nats-1:4222\"]"
            ),
        };
        for server in &servers {
            if !["nats://", "tls://", "ws://", "wss://"]
                .iter()
                .any(|s| server.starts_with(s))
            {
                bail!(
                    "\"servers\": {server:?} is not a NATS URL (nats://HOST:PORT or tls://HOST:PORT)"
                );
            }
        }
        let Some(machine) = fields.machine else {
            bail!(
                "no \"machine\": name this machine as the other machines will see it, e.g. \"build-box\""
            );
        };
        let machine = MachineName::parse(&machine).context("\"machine\"")?;
        let mut file = ClusterFile::new(&[], machine.as_str())?;
        file.servers = servers;
        if let Some(bucket) = fields.bucket {
            MachineName::parse(&bucket).map_err(|_| {
                anyhow::anyhow!(
                    "\"bucket\": {bucket:?} is not a bucket name (letters, digits, '-' or '_')"
                )
            })?;
            file.bucket = bucket;
        }
        if let Some(replicas) = fields.replicas {
            if !(1..=5).contains(&replicas) {
                bail!("\"replicas\" must be 1 to 5 (3 for a three-node cluster), not {replicas}");
            }
            file.replicas = replicas;
        }
        let place = |path: PathBuf| match path.is_absolute() {
            true => path,
            false => folder.join(path),
        };
        file.credentials = fields.credentials.map(place);
        if fields.user.is_some() != fields.password_file.is_some() {
            bail!("\"user\" and \"passwordFile\" go together: give both or neither");
        }
        file.user = fields.user;
        file.password_file = fields.password_file.map(place);
        file.tls = fields.tls.map(|tls| Tls {
            ca: tls.ca.map(place),
            cert: tls.cert.map(place),
            key: tls.key.map(place),
        });
        if let Some(tls) = &file.tls
            && tls.cert.is_some() != tls.key.is_some()
        {
            bail!("\"tls\": \"cert\" and \"key\" go together: give both or neither");
        }
        if let Some(seconds) = fields.live_ttl_seconds {
            if !(3..=3600).contains(&seconds) {
                bail!("\"liveTtlSeconds\" must be 3 to 3600, not {seconds}");
            }
            file.live_ttl = Duration::from_secs(seconds);
        }
        if let Some(ms) = fields.read_timeout_ms {
            if !(50..=30_000).contains(&ms) {
                bail!("\"readTimeoutMs\" must be 50 to 30000, not {ms}");
            }
            file.read_timeout = Duration::from_millis(ms);
        }
        if let Some(days) = fields.keep_days {
            if !(1..=3650).contains(&days) {
                bail!("\"keepDays\" must be 1 to 3650, not {days}");
            }
            file.keep = Duration::from_secs(days * 24 * 60 * 60);
        }
        if let Some(paths) = fields.publish_paths {
            if let Some(relative) = paths.iter().find(|p| !p.is_absolute()) {
                bail!(
                    "\"publishPaths\": {relative:?} is not an absolute path: name the folders whose sessions this machine shares, e.g. [\"/home/ann/work\"]"
                );
            }
            file.publish_paths = Some(paths);
        }
        if let Some(machines) = fields.accept_from {
            let parsed = (machines.iter())
                .map(|m| MachineName::parse(m))
                .collect::<Result<Vec<_>>>()
                .context("\"acceptFrom\"")?;
            file.accept_from = Some(parsed);
        }
        Ok(file)
    }

    /// Whether this machine shares a session whose workspace path is `cwd` with the
    /// other machines ([`ClusterFile::publish_paths`]; compared by path components).
    pub fn shares(&self, cwd: Option<&str>) -> bool {
        match &self.publish_paths {
            None => true,
            Some(paths) => {
                cwd.is_some_and(|cwd| paths.iter().any(|p| Path::new(cwd).starts_with(p)))
            }
        }
    }

    /// The client's options: credentials and TLS as given, this machine's name and its
    /// own reply prefix (`_INBOX_<machine>`, so a deployment can let each machine
    /// receive only its own replies).
    pub(crate) async fn connect_options(&self) -> Result<async_nats::ConnectOptions> {
        let mut options = match &self.credentials {
            Some(path) => async_nats::ConnectOptions::with_credentials_file(path)
                .await
                .with_context(|| format!("cannot read the credentials file {}", path.display()))?,
            None => async_nats::ConnectOptions::new(),
        };
        if let (Some(user), Some(path)) = (&self.user, &self.password_file) {
            let password = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the password file {}", path.display()))?;
            options = options.user_and_password(user.clone(), password.trim_end().to_string());
        }
        if let Some(tls) = &self.tls {
            options = options.require_tls(true);
            if let Some(ca) = &tls.ca {
                options = options.add_root_certificates(ca.clone());
            }
            if let (Some(cert), Some(key)) = (&tls.cert, &tls.key) {
                options = options.add_client_certificate(cert.clone(), key.clone());
            }
        }
        Ok(options
            .name(format!("session-tools {}", self.machine))
            .custom_inbox_prefix(format!("_INBOX_{}", self.machine))
            .connection_timeout(Duration::from_secs(3)))
    }
}

/// The live bucket of the deployment's bucket `bucket`.
pub(crate) fn live_bucket(bucket: &str) -> String {
    format!("{bucket}-live")
}

/// The longest one step may take before it is an error (a leader election takes up to
/// about ten seconds).
pub const STEP_TIMEOUT: Duration = Duration::from_secs(15);

/// How long a plugin call over a cluster may take (the runtime's deadline, host calls
/// included): a send rides out a leader election (each step tried for up to
/// [`STEP_TIMEOUT`]), and a listing or read that waits on the cluster ends in its own
/// answer ("the cluster did not answer …", "machine … did not answer …") well before.
pub const CALL_DEADLINE: Duration = Duration::from_secs(20);

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<ClusterFile> {
        ClusterFile::parse(text, Path::new("/etc/st"))
    }

    #[test]
    fn a_cluster_file_is_read_with_its_defaults_and_paths_from_its_folder() {
        let file = parsed(
            r#"{"servers": ["nats://a:4222", "tls://b:4222"], "machine": "build-box",
                "credentials": "box.creds", "tls": {"ca": "/pki/ca.pem"}}"#,
        )
        .unwrap();
        assert_eq!(file.servers, ["nats://a:4222", "tls://b:4222"]);
        assert_eq!(file.machine.as_str(), "build-box");
        assert_eq!(file.bucket, "session-tools");
        assert_eq!(file.replicas, 3);
        assert!(file.shares(None) && file.accept_from.is_none());
        assert_eq!(file.credentials.unwrap(), Path::new("/etc/st/box.creds"));
        assert_eq!(
            file.tls.as_ref().unwrap().ca.as_deref(),
            Some(Path::new("/pki/ca.pem"))
        );
        assert_eq!(file.live_ttl, Duration::from_secs(30));
        assert_eq!(file.keep, Duration::from_secs(30 * 86_400));
        let kept = parsed(r#"{"url": "nats://a:4222", "machine": "a", "keepDays": 7}"#);
        assert_eq!(kept.unwrap().keep, Duration::from_secs(7 * 86_400));
    }

    #[test]
    fn what_a_machine_shares_is_its_publish_paths_by_component() {
        let file = parsed(
            r#"{"url": "nats://a:4222", "machine": "a", "publishPaths": ["/work/team"],
                "acceptFrom": ["b", "c"]}"#,
        )
        .unwrap();
        assert!(file.shares(Some("/work/team")));
        assert!(file.shares(Some("/work/team/repo")));
        assert!(!file.shares(Some("/work/teammate")));
        assert!(!file.shares(Some("/home/a")));
        assert!(!file.shares(None), "a session with no path is not shared");
        let from: Vec<String> = file
            .accept_from
            .unwrap()
            .iter()
            .map(|m| m.to_string())
            .collect();
        assert_eq!(from, ["b", "c"]);
    }

    #[test]
    fn each_bad_field_is_named_with_what_to_write() {
        let cases = [
            ("[]", "one JSON object"),
            (r#"{"machine": "a"}"#, "set \"servers\""),
            (r#"{"url": "http://a", "machine": "a"}"#, "not a NATS URL"),
            (r#"{"url": "nats://a:1"}"#, "no \"machine\""),
            (
                r#"{"url": "nats://a:1", "machine": "a.b"}"#,
                "cannot name a machine",
            ),
            (
                r#"{"url": "nats://a:1", "machine": "a", "replicas": 9}"#,
                "1 to 5",
            ),
            (
                r#"{"url": "nats://a:1", "machine": "a", "user": "ann"}"#,
                "go together",
            ),
            (
                r#"{"url": "nats://a:1", "machine": "a", "liveTtlSeconds": 1}"#,
                "3 to 3600",
            ),
            (
                r#"{"url": "nats://a:1", "machine": "a", "keepDays": 0}"#,
                "\"keepDays\" must be 1 to 3650",
            ),
            (
                r#"{"url": "nats://a:1", "machine": "a", "colour": 1}"#,
                "one JSON object",
            ),
            (
                r#"{"url": "nats://a:1", "machine": "a", "bucket": "a.b"}"#,
                "not a bucket name",
            ),
            (
                r#"{"url": "nats://a:1", "machine": "a", "publishPaths": ["work"]}"#,
                "not an absolute path",
            ),
            (
                r#"{"url": "nats://a:1", "machine": "a", "acceptFrom": ["a b"]}"#,
                "\"acceptFrom\": \"a b\" cannot name a machine",
            ),
        ];
        for (text, says) in cases {
            let err = format!("{:#}", parsed(text).unwrap_err());
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
