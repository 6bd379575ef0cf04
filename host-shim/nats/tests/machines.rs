//! Two machines on a real three-node cluster (`support`): "alpha" serves Claude Code
//! sessions (the transcripts the real Claude Code 2.1.328 wrote), "beta" Codex threads
//! (the CODEX_HOME the real Codex 0.169.0 wrote), each with its own state folder, its
//! own connection, its own machine name. Through the real plugin: each lists the
//! other's sessions by machine, reads them by asking the other machine's host, and
//! messages them through the shared inbox, handed over once by the target machine's
//! hook; a machine whose host is gone is a readable refusal and turns cold within its
//! TTL. And a message to an idle session of another machine, handed over at once by
//! that machine's host.

mod raw;
mod support;

use host_shim::{
    CallError, CallRequest, Corpus, CorpusHost, Harnesses, LocalPresence, Presence, Runtime,
    RuntimeOptions, Session, SessionQuery, SharedInbox, Store,
};
use host_shim_claude_code::ClaudeStore;
use host_shim_codex::CodexStore;
use host_shim_nats::{Cluster, ClusterFile};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::server;

const CLAUDE_GARDEN: &str = "a0000000-0000-4000-8000-00000000000a";
const CLAUDE_NOTES: &str = "b0000000-0000-4000-8000-00000000000b";
const CODEX_GARDEN: &str = "01a23b72-a3cd-71d1-b3d0-19989707ce0b";
const CODEX_ORCHARD: &str = "01a23b72-ab02-7282-ba7a-193ba89b0a05";

/// The fixtures a harness's real client wrote, in that harness's folder.
fn fixtures(harness: &str, version: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../harnesses")
        .join(harness)
        .join("fixtures")
        .join(version)
}

fn scratch(name: &str) -> PathBuf {
    host_shim_testkit::scratch("nats-machines", name)
}

/// One machine: its cluster connection and its state folder.
struct Machine {
    name: &'static str,
    cluster: Cluster,
    state: PathBuf,
}

impl Machine {
    fn join(urls: &[String], bucket: &str, name: &'static str) -> Machine {
        Machine::join_with(urls, bucket, name, |_| {})
    }

    /// Joined with its cluster file as `edit` leaves it.
    fn join_with(
        urls: &[String],
        bucket: &str,
        name: &'static str,
        edit: impl FnOnce(&mut ClusterFile),
    ) -> Machine {
        let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
        let mut file = ClusterFile::new(&urls, name).unwrap();
        file.bucket = bucket.to_string();
        file.live_ttl = Duration::from_secs(3);
        edit(&mut file);
        Machine {
            name,
            cluster: Cluster::join(file).unwrap(),
            state: scratch(&format!("{bucket}-{name}")),
        }
    }

    fn inbox(&self) -> SharedInbox {
        self.cluster.inbox()
    }

    fn presence(&self) -> Arc<dyn Presence> {
        Arc::new(LocalPresence::open(&self.state).unwrap())
    }

    /// This machine's own stores: alpha's Claude Code sessions, beta's Codex threads.
    fn local(&self) -> Vec<Box<dyn Store>> {
        match self.name {
            "alpha" => vec![Box::new(
                ClaudeStore::open(
                    &fixtures("claude-code", "2.1.328"),
                    self.inbox(),
                    self.presence(),
                    None,
                )
                .unwrap(),
            )],
            _ => vec![Box::new(CodexStore::open(
                &fixtures("codex", "0.169.0"),
                self.inbox(),
            ))],
        }
    }

    /// What a call on this machine runs over: its stores, then the other machines'.
    fn harnesses(&self) -> Harnesses {
        let mut stores = self.local();
        stores.push(Box::new(self.cluster.machines(self.inbox()).unwrap()));
        Harnesses::new(stores).on_machine(self.name)
    }

    fn serve(&self) -> host_shim_nats::MachineHost {
        self.cluster.serve(Harnesses::new(self.local())).unwrap()
    }

    /// One tool call through the real plugin, as `caller` on this machine.
    fn call(&self, tool: &str, arguments: &str, caller: &str) -> Result<String, CallError> {
        // The deadline a call over a cluster has (the command's): a listing that
        // waits on the cluster ends in its own answer, never in the plugin's deadline,
        // however loaded the machine.
        let mut options = RuntimeOptions {
            pooling: false,
            ..RuntimeOptions::default()
        };
        options.limits.deadline = host_shim_nats::CALL_DEADLINE;
        let runtime: Runtime<Harnesses> =
            Runtime::with_options(host_shim_plugin::PLUGIN_WASM, &options).unwrap();
        let request = CallRequest {
            caller: caller.to_string(),
            call_id: format!("{tool}-{}", std::process::id() as u128 + now_ns()),
            tool: tool.to_string(),
            arguments: arguments.to_string(),
            ..CallRequest::default()
        };
        runtime
            .call(self.harnesses(), &request)
            .answer
            .map(|answer| answer.text)
    }
}

fn now_ns() -> u128 {
    host_shim::inbox::now_ns()
}

/// The listing row of `id` in `listing`.
fn row<'a>(listing: &'a str, id: &str) -> &'a str {
    let start = format!("- {id} [");
    listing
        .lines()
        .find(|line| line.starts_with(&start))
        .unwrap_or_else(|| panic!("no row for {id} in:\n{listing}"))
}

#[test]
fn machines_list_read_and_message_each_others_sessions() {
    let Some(binary) = server() else { return };
    let nodes = support::Cluster::start(&binary, "machines");
    let alpha = Machine::join(&nodes.urls[..1], "team", "alpha");
    let beta = Machine::join(&nodes.urls[1..], "team", "beta");
    // The Claude Code garden session runs on alpha now.
    let _running = alpha.presence().register_live(CLAUDE_GARDEN).unwrap();
    let alpha_host = alpha.serve();
    let beta_host = beta.serve();

    // One listing of both machines, each row naming its machine, live as its machine says.
    let listing = beta
        .call("sessions_list", r#"{"scope":"all"}"#, CODEX_GARDEN)
        .unwrap();
    assert!(
        row(&listing, CLAUDE_GARDEN).contains("[live, top-level]")
            && row(&listing, CLAUDE_GARDEN).contains("| machine=alpha"),
        "{listing}"
    );
    assert!(
        row(&listing, CLAUDE_NOTES).contains("[cold, top-level]"),
        "{listing}"
    );
    assert!(
        row(&listing, CODEX_GARDEN).contains("| machine=beta | this session"),
        "{listing}"
    );
    assert!(
        row(&listing, CODEX_ORCHARD).contains("| machine=beta"),
        "{listing}"
    );

    // A read of alpha's session from beta, answered by alpha's host.
    let read = beta
        .call(
            "sessions_read",
            &format!(r#"{{"session_id":"{CLAUDE_NOTES}"}}"#),
            CODEX_GARDEN,
        )
        .unwrap();
    host_shim_testkit::has(&read, "| machine=alpha");
    host_shim_testkit::has(&read, "--- user (seq ");
    host_shim_testkit::has(&read, "--- assistant (seq ");

    // A message from alpha to a thread on beta: stored in the cluster, handed over once
    // by beta's Codex hook, and counted as handed over when alpha reads the thread.
    let send = format!(r#"{{"session_id":"{CODEX_ORCHARD}","message":"Lunch at one?"}}"#);
    let sent = alpha.call("sessions_send", &send, CLAUDE_GARDEN).unwrap();
    assert!(
        sent.starts_with(&format!("accepted for {CODEX_ORCHARD} | mode=queue")),
        "{sent}"
    );
    let hook = |event: &str| {
        let input = serde_json::json!({"session_id": CODEX_ORCHARD, "hook_event_name": event});
        let mut out = Vec::new();
        host_shim_codex::hook::answer(&*beta.inbox(), input.to_string().as_bytes(), &mut out)
            .unwrap();
        String::from_utf8(out).unwrap()
    };
    let handed = hook("UserPromptSubmit");
    host_shim_testkit::has(&handed, "Lunch at one?");
    assert!(
        handed.contains(CLAUDE_GARDEN),
        "the frame names the sender: {handed}"
    );
    assert!(
        !hook("UserPromptSubmit").contains("Lunch at one?"),
        "handed over once"
    );
    let read = alpha
        .call(
            "sessions_read",
            &format!(r#"{{"session_id":"{CODEX_ORCHARD}"}}"#),
            CLAUDE_GARDEN,
        )
        .unwrap();
    host_shim_testkit::has(&read, "your messages to it: 1 handed over");

    // Beta's host gone: a read of its thread says why, at once, and reads nothing.
    drop(beta_host);
    let started = Instant::now();
    let refused = alpha
        .call(
            "sessions_read",
            &format!(r#"{{"session_id":"{CODEX_ORCHARD}"}}"#),
            CLAUDE_GARDEN,
        )
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let said = refused.to_string();
    assert!(
        said.contains(&format!(
            "session {CODEX_ORCHARD} is on machine beta, where no session-tools host runs now"
        )),
        "{said}"
    );
    // Its threads stay listed, cold: a message to one waits for beta.
    let listing = alpha
        .call("sessions_list", r#"{"scope":"all"}"#, CLAUDE_GARDEN)
        .unwrap();
    assert!(
        row(&listing, CODEX_ORCHARD).contains("[cold, top-level]"),
        "{listing}"
    );

    // Alpha's host ends without a goodbye while its session runs: the session reads as
    // live until alpha's heartbeat expires (3 s here), then cold.
    drop(alpha_host);
    let listing = beta
        .call("sessions_list", r#"{"scope":"all"}"#, CODEX_GARDEN)
        .unwrap();
    assert!(
        row(&listing, CLAUDE_GARDEN).contains("[live, "),
        "{listing}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let listing = beta
            .call("sessions_list", r#"{"scope":"all"}"#, CODEX_GARDEN)
            .unwrap();
        if row(&listing, CLAUDE_GARDEN).contains("[cold, ") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still live after 10 s:\n{listing}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Beta's sessions as a harness that gives a message to an idle session at once (the
/// corpus's model of Claude Code's peer socket, Codex's daemon, OpenCode's plugin):
/// "beta-idle" takes it as a new turn; "beta-busy" leaves it for its next hook.
fn beta_at_once(inbox: SharedInbox) -> Vec<Box<dyn Store>> {
    let mut idle = Session::new("beta-idle", 1_700_000_000_000);
    idle.header.live = true;
    let mut busy = Session::new("beta-busy", 1_700_000_000_001);
    busy.header.live = true;
    busy.delivery_state = host_shim::contract::latest::DeliveryState::Waiting;
    let corpus = Corpus::new(None, vec![idle, busy]);
    vec![Box::new(CorpusHost::with_inbox(Arc::new(corpus), inbox))]
}

#[test]
fn a_message_to_an_idle_session_on_another_machine_is_handed_over_at_once() {
    let Some(binary) = server() else { return };
    let nodes = support::Cluster::start(&binary, "at-once");
    let alpha = Machine::join(&nodes.urls[..1], "team", "alpha");
    let beta = Machine::join(&nodes.urls[1..], "team", "beta");
    let _running = alpha.presence().register_live(CLAUDE_GARDEN).unwrap();
    let beta_host = (beta.cluster)
        .serve(Harnesses::new(beta_at_once(beta.inbox())))
        .unwrap();
    let send = |target: &str, words: &str| {
        let send = format!(r#"{{"session_id":"{target}","message":"{words}"}}"#);
        alpha.call("sessions_send", &send, CLAUDE_GARDEN).unwrap()
    };

    // The idle session: beta's host, told the message is stored, gives it as a new
    // turn; the sender's answer says so, and nothing waits for a hook.
    let sent = send("beta-idle", "Now, please");
    let mut lines = sent.lines();
    assert!(
        (lines.next().unwrap()).starts_with("accepted for beta-idle | mode=queue"),
        "{sent}"
    );
    assert!(
        (lines.next().unwrap_or(""))
            .starts_with("The message was handed to that session as a new turn."),
        "{sent}"
    );
    assert!(
        beta.inbox()
            .waiting("beta-idle")
            .unwrap()
            .messages
            .is_empty()
    );
    let read = alpha
        .call(
            "sessions_read",
            r#"{"session_id":"beta-idle"}"#,
            CLAUDE_GARDEN,
        )
        .unwrap();
    assert!(
        read.contains("from-machine: alpha"),
        "on its surface, framed: {read}"
    );
    host_shim_testkit::has(&read, "Now, please");
    host_shim_testkit::has(&read, "your messages to it: 1 handed over");

    // The busy one: it waits for the session's next hook, as a local message does.
    let sent = send("beta-busy", "When you can");
    assert!(!sent.contains("handed to that session"), "{sent}");
    assert_eq!(beta.inbox().waiting("beta-busy").unwrap().messages.len(), 1);

    // No host on beta: accepted, waiting for one.
    drop(beta_host);
    let sent = send("beta-idle", "Later then");
    assert!(sent.starts_with("accepted for beta-idle"), "{sent}");
    assert!(!sent.contains("handed to that session"), "{sent}");
    let waiting = beta.inbox().waiting("beta-idle").unwrap().messages;
    assert_eq!(waiting.len(), 1);
    assert!(waiting[0].message.body.contains("Later then"));
}

#[test]
fn a_machine_says_which_sessions_it_shares_and_whose_messages_it_takes() {
    let Some(binary) = server() else { return };
    let nodes = support::Cluster::start(&binary, "say");
    let alpha = Machine::join(&nodes.urls[..1], "team", "alpha");
    // Beta shares only what lies under /work/shared, and takes messages from gamma only.
    let beta = Machine::join_with(&nodes.urls[1..], "team", "beta", |file| {
        file.publish_paths = Some(vec![PathBuf::from("/work/shared")]);
        file.accept_from = Some(vec![host_shim_nats::MachineName::parse("gamma").unwrap()]);
    });
    let _running = alpha.presence().register_live(CLAUDE_GARDEN).unwrap();
    let mut shared = Session::new("beta-shared", 1_700_000_000_000);
    shared.header.cwd = Some("/work/shared/repo".to_string());
    shared.header.live = true;
    let mut private = Session::new("beta-private", 1_700_000_000_001);
    private.header.cwd = Some("/home/beta/diary".to_string());
    let corpus = Arc::new(Corpus::new(None, vec![shared, private]));
    let stores: Vec<Box<dyn Store>> = vec![Box::new(CorpusHost::with_inbox(corpus, beta.inbox()))];
    let _beta_host = beta.cluster.serve(Harnesses::new(stores)).unwrap();

    // Alpha sees the shared session only; the other is no session to it, read or not.
    let listing = alpha
        .call("sessions_list", r#"{"scope":"all"}"#, CLAUDE_GARDEN)
        .unwrap();
    assert!(
        row(&listing, "beta-shared").contains("| machine=beta"),
        "{listing}"
    );
    assert!(!listing.contains("beta-private"), "{listing}");
    let read = alpha
        .call(
            "sessions_read",
            r#"{"session_id":"beta-private"}"#,
            CLAUDE_GARDEN,
        )
        .unwrap();
    assert!(
        read.starts_with("sessions_read refused (not-found)"),
        "{read}"
    );
    // A send from alpha is refused before anything is stored, saying why.
    let sent = alpha
        .call(
            "sessions_send",
            r#"{"session_id":"beta-shared","message":"hello"}"#,
            CLAUDE_GARDEN,
        )
        .unwrap();
    assert!(
        sent.starts_with(
            "sessions_send refused (rejected): the controller refused the message: machine beta"
        ),
        "{sent}"
    );
    assert!(
        sent.contains(
            "machine beta takes no messages from machine alpha (its cluster file's acceptFrom)"
        ),
        "{sent}"
    );
    assert!(
        beta.inbox()
            .waiting("beta-shared")
            .unwrap()
            .messages
            .is_empty()
    );

    // Written past the sender's check, by alpha, or by gamma to a session beta does not
    // share: beta's hand-over leaves each where it is, named.
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let anyone = tokio
        .block_on(async_nats::connect(nodes.urls[0].clone()))
        .unwrap();
    let write = |key: &str, target: &str| {
        let message = raw::message(target, "", "past the check");
        assert!(raw::stored(
            &tokio,
            &anyone,
            &format!("$KV.team.{key}"),
            message
        ));
    };
    write(
        "m.beta.beta-shared.alpha.00000000000000000001-x",
        "beta-shared",
    );
    write(
        "m.beta.beta-private.gamma.00000000000000000002-x",
        "beta-private",
    );
    write(
        "m.beta.beta-shared.gamma.00000000000000000003-x",
        "beta-shared",
    );
    let shared = beta.inbox().waiting("beta-shared").unwrap();
    assert_eq!(shared.messages.len(), 1, "gamma's, to a shared session");
    assert!(shared.messages[0].message.body.contains("past the check"));
    assert_eq!(shared.unreadable.len(), 1, "{:?}", shared.unreadable);
    assert!(
        shared.unreadable[0].contains("machine alpha is not one this machine takes messages from"),
        "{:?}",
        shared.unreadable
    );
    let private = beta.inbox().waiting("beta-private").unwrap();
    assert!(private.messages.is_empty());
    assert!(
        private.unreadable[0].contains("which this machine does not share (publishPaths"),
        "{:?}",
        private.unreadable
    );
}

/// The directory a long-lived host keeps by watching the buckets is current at each
/// use: every list and heartbeat written before a look (from another node, with no
/// pause between) is seen by it, a consumer deleted under it is replaced and read
/// afresh, and a heartbeat older than the live bucket's age limit reads as cold.
#[test]
fn the_directory_a_host_watches_is_current_at_each_use() {
    let Some(binary) = server() else { return };
    let nodes = support::Cluster::start(&binary, "watch");
    let desk = Machine::join(&nodes.urls, "watch", "alpha");
    let mut machines = desk.cluster.machines(desk.inbox()).unwrap();
    let mut look = |id: &str| {
        machines.begin_call("desk-caller");
        let header = machines.get_session(id);
        machines.end_call();
        header
    };
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let far = (tokio.block_on(async_nats::connect(nodes.urls[2].clone()))).unwrap();
    // Written as a host writes: tried again every 250 ms for up to 15 s while the node
    // has not yet learnt of the stream just made, or the stream has no leader (both
    // answer "no responders" at once), so each write is made before the look.
    let publish = |subject: &str, body: String| {
        let stored = (0..60).any(|_| {
            let stored = raw::stored(&tokio, &far, subject, body.clone().into_bytes());
            if !stored {
                std::thread::sleep(Duration::from_millis(250));
            }
            stored
        });
        assert!(stored, "{subject} was not stored within 15 s");
    };
    let list = |id: &str| {
        let session = format!(r#"{{"id": "{id}", "created_at_ms": 1, "origin": "codex"}}"#);
        publish("$KV.watch.d.far", format!(r#"{{"sessions": [{session}]}}"#));
        publish("$KV.watch-live.far", format!(r#"{{"live": ["{id}"]}}"#));
    };
    for n in 0..30 {
        let id = format!("far-s{n}");
        list(&id);
        let header = look(&id).unwrap_or_else(|| panic!("{id} was listed before the look"));
        assert!(
            header.live,
            "{id}: its heartbeat was written before the look"
        );
        assert_eq!(header.machine.as_deref(), Some("far"));
        if n > 0 {
            assert!(look(&format!("far-s{}", n - 1)).is_none(), "replaced");
        }
    }

    // Every consumer of both buckets deleted (an operator, a node's restart): the next
    // look reads afresh.
    tokio.block_on(async {
        let jetstream = async_nats::jetstream::new(far.clone());
        for stream in ["KV_watch", "KV_watch-live"] {
            let stream = jetstream.get_stream(stream).await.unwrap();
            let names: Vec<String> = {
                use futures_util::TryStreamExt;
                stream.consumer_names().try_collect().await.unwrap()
            };
            assert!(!names.is_empty(), "the watch of {stream:?} is a consumer");
            for name in names {
                stream.delete_consumer(&name).await.unwrap();
            }
        }
    });
    list("far-late");
    assert!(look("far-late").is_some_and(|header| header.live));

    // No heartbeat for longer than the live bucket's age limit (3 s): cold, still listed.
    std::thread::sleep(Duration::from_millis(3500));
    let header = look("far-late").expect("its list stays");
    assert!(
        !header.live,
        "its heartbeat is older than the bucket keeps one"
    );
}
