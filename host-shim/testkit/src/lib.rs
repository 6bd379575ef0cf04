//! What the harness crates' tests over their real files share: a copy of a fixture
//! to write into, one call through the real plugin over a store, a hook's witness
//! over what is no record, the crash tests of a hook ([`crash`]), and, with the
//! `command` feature, the command a harness's tests run (`command`), at the MCP wire
//! (`mcp`), and what every harness's profile must hold (`profiles`); and the corpus
//! each store benchmark writes once ([`corpus`]).

#[cfg(feature = "command")]
pub mod command;
pub mod corpus;
pub mod crash;
#[cfg(feature = "command")]
pub mod mcp;
#[cfg(feature = "command")]
pub mod profiles;

use std::path::Path;

/// Asserts that `text` holds `part`, showing `text` when it does not.
#[track_caller]
pub fn has(text: &str, part: &str) {
    assert!(text.contains(part), "{part:?} is not in:\n{text}");
}

/// Asserts that `text` begins with `prefix`, showing `text` when it does not.
#[track_caller]
pub fn begins(text: &str, prefix: &str) {
    assert!(
        text.starts_with(prefix),
        "does not begin with {prefix:?}:\n{text}"
    );
}

/// Asserts that `text` does not hold `part`, showing `text` when it does.
#[track_caller]
pub fn lacks(text: &str, part: &str) {
    assert!(!text.contains(part), "{part:?} is in:\n{text}");
}

/// What a hook answers, written by `answer` for `text` (a pre-write hook's refusal),
/// read back as the harness reads it: one JSON value.
#[track_caller]
pub fn answer_of(
    answer: fn(&str, &mut dyn std::io::Write) -> anyhow::Result<()>,
    text: &str,
) -> serde_json::Value {
    let mut out = Vec::new();
    answer(text, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

/// A command hook's input in the shape Claude Code, Codex and Gemini CLI share (and our
/// OpenCode and OpenClaw plugins give their pre-write hook): `session` at `event`,
/// about to call `tool` with `tool_input`.
pub fn hook_input(
    session: &str,
    event: &str,
    tool: &str,
    tool_input: serde_json::Value,
) -> Vec<u8> {
    serde_json::json!({
        "session_id": session,
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input,
    })
    .to_string()
    .into_bytes()
}

/// The folders this test process named with [`temp_folder`], removed as it exits.
static NAMED: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

extern "C" fn remove_named() {
    let named = NAMED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for dir in named.iter() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `<tmp>/host-shim-<name>-<pid>`: a path of this test process's own in the temporary
/// folder (not made), removed with all in it when the process exits, whether its tests
/// passed or failed (a test binary's end runs `exit`'s handlers), so runs leave nothing
/// behind. A process killed by a signal leaves its folders, as it leaves everything.
pub fn temp_folder(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("host-shim-{name}-{}", std::process::id()));
    let mut named = NAMED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if named.is_empty() {
        // SAFETY: registers a handler that takes no arguments; it runs at exit, once.
        assert_eq!(unsafe { libc::atexit(remove_named) }, 0);
    }
    if !named.contains(&dir) {
        named.push(dir.clone());
    }
    dir
}

/// The `TMPDIR` of a process a test starts (its hooks' record marks, its wake
/// commands' message files): the test process's own, so a run leaves none in the
/// machine's.
pub fn tmpdir() -> std::path::PathBuf {
    let tmp = temp_folder("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    tmp
}

/// A fresh, empty folder for one test: `<name>` in [`temp_folder`]`(suite)`.
pub fn scratch(suite: &str, name: &str) -> std::path::PathBuf {
    let dir = temp_folder(suite).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An empty folder of its own for the test thread that asks (`name` says whose, in the
/// temporary folder), and a state folder in it.
pub fn fresh_state(name: &str) -> (host_shim::StateDir, std::path::PathBuf) {
    let root = temp_folder(name).join(format!("{:?}", std::thread::current().id()));
    let _ = std::fs::remove_dir_all(&root);
    (
        host_shim::StateDir::open(&root.join("state")).unwrap(),
        root,
    )
}

/// A message in `mode` waiting for `session` in `inbox` under `key`.
pub fn spool(
    inbox: &dyn host_shim::InboxBackend,
    session: &str,
    (body, mode, key): (&str, host_shim::contract::latest::DeliveryMode, &str),
) {
    let message = host_shim::inbox::SpooledMessage::new(session, mode, body, key, false);
    inbox.put(&message).unwrap();
}

/// A copy of the folder `from` at `to`, for a test that writes into what a real
/// harness wrote.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// One call of `tool` with `arguments` by `caller` through the real plugin over
/// `store`: the answer's text, and the store back (what it kept, to look at or call
/// again). A call id said again is a retry of the same call.
pub fn call_through_plugin<H: host_shim::Harness>(
    store: H,
    caller: &str,
    call_id: &str,
    tool: &str,
    arguments: &str,
) -> (String, H) {
    let runtime: host_shim::Runtime<H> = host_shim::Runtime::with_options(
        host_shim_plugin::PLUGIN_WASM,
        &host_shim::RuntimeOptions::default(),
    )
    .unwrap();
    let request = host_shim::CallRequest {
        caller: caller.to_string(),
        call_id: call_id.to_string(),
        tool: tool.to_string(),
        arguments: arguments.to_string(),
        ..host_shim::CallRequest::default()
    };
    let report = runtime.call(store, &request);
    (report.answer.unwrap().text, report.harness)
}

/// The message ids `read` (a harness's reader of its record) finds in a record holding
/// `text` (written to a scratch file of `suite`), from its end's window, sorted.
pub fn witnessed_in(
    suite: &str,
    read: fn(
        &Path,
        host_shim::harnesses::logfile::ReadFrom<'_>,
    ) -> anyhow::Result<host_shim::inbox::Shown>,
    text: &str,
) -> Vec<String> {
    let path = scratch(suite, "witnessed").join("record.jsonl");
    std::fs::write(&path, text).unwrap();
    let shown = read(&path, host_shim::harnesses::logfile::ReadFrom::End).unwrap();
    let mut ids: Vec<String> = shown.into_iter().collect();
    ids.sort();
    ids
}

/// A hook's witness read over `read` (a harness's reader of its record): a device or a
/// FIFO named as the record is an error at once, never a wait or an endless read, and
/// a record not there yet shows nothing.
pub fn witness_refuses_what_is_no_record(
    read: fn(
        &Path,
        host_shim::harnesses::logfile::ReadFrom<'_>,
    ) -> anyhow::Result<host_shim::inbox::Shown>,
) {
    use host_shim::harnesses::logfile::ReadFrom;
    let ends = |path: &Path| {
        let (done, finished) = std::sync::mpsc::channel();
        let path = path.to_path_buf();
        std::thread::spawn(move || done.send(read(&path, ReadFrom::End)));
        (finished.recv_timeout(std::time::Duration::from_secs(10))).expect("the read ended")
    };
    let fifo = temp_folder("witness-fifo").join(format!("{:?}", std::thread::current().id()));
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&fifo);
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; mkfifo only makes the file.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    for path in [Path::new("/dev/zero"), fifo.as_path()] {
        let err = ends(path).expect_err("a device or FIFO is no record");
        assert!(
            format!("{err:#}").contains("not a regular file"),
            "{}: {err:#}",
            path.display()
        );
    }
    std::fs::remove_file(&fifo).unwrap();
    assert!(
        ends(Path::new("/nonexistent/record.jsonl"))
            .unwrap()
            .is_empty()
    );
}

/// A live registry as a test sets it: the sessions in it run, a registration adds its
/// session until it is dropped, and none is ever idle.
#[derive(Clone, Default)]
pub struct Live(std::sync::Arc<std::sync::Mutex<std::collections::HashSet<String>>>);

impl Live {
    /// A registry in which `sessions` run.
    pub fn of(sessions: &[&str]) -> Live {
        let live = Live::default();
        live.0
            .lock()
            .unwrap()
            .extend(sessions.iter().map(|s| s.to_string()));
        live
    }

    /// `session` runs from now on.
    pub fn starts(&self, session: &str) {
        self.0.lock().unwrap().insert(session.to_string());
    }
}

impl host_shim::presence::Presence for Live {
    fn live_sessions(&self) -> std::collections::HashSet<String> {
        self.0.lock().unwrap().clone()
    }

    fn register_live(&self, session: &str) -> anyhow::Result<host_shim::presence::Registration> {
        struct Unregister(Live, String);
        impl Drop for Unregister {
            fn drop(&mut self) {
                self.0.0.lock().unwrap().remove(&self.1);
            }
        }
        self.0.lock().unwrap().insert(session.to_string());
        Ok(host_shim::presence::Registration::new(Unregister(
            self.clone(),
            session.to_string(),
        )))
    }

    fn set_idle(&self, _session: &str, _idle: bool) -> anyhow::Result<()> {
        Ok(())
    }

    fn is_idle(&self, _session: &str) -> bool {
        false
    }
}
