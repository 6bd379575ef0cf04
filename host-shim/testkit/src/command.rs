//! The `host-shim` command as a harness crate's tests run it. A test binary of a
//! harness crate cannot name the command's binary (Cargo builds it for its own crate's
//! tests only), so the test binary is its own command: [`tests!`] makes its `main`,
//! which runs `host-shim` over every harness ([`host_shim_cli::harnesses::ALL`]) when
//! [`AS_COMMAND`] is set, and its tests otherwise. A process the command starts (the
//! MCP server doctor tries, a hook a setup test runs) inherits the variable, so it is
//! the command too.
//!
//! ```ignore
//! fn a_fresh_home_gets_its_server_once() {
//!     let out = host_shim_testkit::command::host_shim().args(["setup", "toy"]).output();
//!     …
//! }
//!
//! host_shim_testkit::tests![a_fresh_home_gets_its_server_once];
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output, Stdio};

/// Set: this process is the command.
pub const AS_COMMAND: &str = "HOST_SHIM_TEST_AS_COMMAND";

/// A test binary's `main` over the tests named (see [`main`]).
#[macro_export]
macro_rules! tests {
    ($($test:ident),* $(,)?) => {
        fn main() -> std::process::ExitCode {
            $crate::command::main(&[], $crate::named![$($test),*])
        }
    };
}

/// The functions named, as tests of [`main`].
#[macro_export]
macro_rules! named {
    ($($test:ident),* $(,)?) => {
        vec![$($crate::command::Test::new(stringify!($test), $test)),*]
    };
}

/// One test of [`main`]: its name and what it runs (it fails by panicking).
pub struct Test {
    pub name: String,
    pub run: Box<dyn Fn() + Send + Sync>,
}

impl Test {
    pub fn new(name: impl Into<String>, run: impl Fn() + Send + Sync + 'static) -> Test {
        Test {
            name: name.into(),
            run: Box::new(run),
        }
    }
}

/// The command over every harness of the command's list and `extra` (a harness under
/// test that is not in it) when [`AS_COMMAND`] is set; else each test whose name holds
/// the first argument that is not a flag (all without one), side by side, each said
/// `ok` or `FAILED` as `cargo test` says them.
pub fn main(
    extra: &[&'static dyn host_shim_profile::HarnessProfile],
    tests: Vec<Test>,
) -> ExitCode {
    if std::env::var_os(AS_COMMAND).is_some() {
        let all = (host_shim_cli::harnesses::ALL.iter().copied()).chain(extra.iter().copied());
        return host_shim_cli::run(Vec::leak(all.collect()));
    }
    let filter = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    let chosen: Vec<&Test> = (tests.iter())
        .filter(|test| (filter.as_deref()).is_none_or(|part| test.name.contains(part)))
        .collect();
    println!("\nrunning {} tests", chosen.len());
    let failed = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers.min(chosen.len()) {
            scope.spawn(|| {
                loop {
                    let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(test) = chosen.get(at) else {
                        return;
                    };
                    // A failed test's state is its own (its home): nothing shared is left
                    // half-changed by its panic.
                    let run = std::panic::AssertUnwindSafe(|| (test.run)());
                    let passed = std::panic::catch_unwind(run).is_ok();
                    let said = if passed { "ok" } else { "FAILED" };
                    println!("test {} ... {said}", test.name);
                    if !passed {
                        failed.lock().unwrap().push(test.name.clone());
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap();
    if let Some(named) = NAMED.get() {
        let _ = std::fs::remove_dir_all(named.parent().unwrap());
    }
    println!(
        "\ntest result: {}. {} passed; {} failed",
        if failed.is_empty() { "ok" } else { "FAILED" },
        chosen.len() - failed.len(),
        failed.len()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!("failures: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}

/// The command: this test binary as `host-shim`.
pub fn host_shim() -> Command {
    let mut command = Command::new(named_host_shim());
    command.env(AS_COMMAND, "1").env("TMPDIR", crate::tmpdir());
    command
}

/// The command's path as setup writes it into a harness's files.
pub fn binary() -> String {
    named_host_shim().to_string_lossy().into_owned()
}

/// The hard link [`named_host_shim`] made, removed when the tests end.
static NAMED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// This test binary under the name `host-shim` (a hard link beside it, made once per
/// process): setup and doctor know their own hooks by the command's file name.
fn named_host_shim() -> &'static Path {
    NAMED.get_or_init(|| {
        let exe = std::env::current_exe().unwrap().canonicalize().unwrap();
        let folder = exe.with_file_name(format!(
            "{}-as-host-shim-{}",
            exe.file_name().unwrap().to_string_lossy(),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(&folder).unwrap();
        let named = folder.join("host-shim");
        if std::fs::hard_link(&exe, &named).is_err() {
            std::fs::copy(&exe, &named).unwrap();
        }
        named
    })
}

/// `command` run with `stdin` as its input, to its end: its status and both outputs.
pub fn output_with_stdin(command: &mut Command, stdin: &str) -> Output {
    use std::io::Write;
    let mut child = (command.stdin(Stdio::piped()).stdout(Stdio::piped()))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

pub use crate::scratch;

/// The stdout of a command that must have succeeded (its stderr when it did not).
pub fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// The stderr of a command that must have failed (its stdout when it did not).
pub fn failed(output: &Output) -> String {
    assert!(
        !output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `text` written to `path`, its folders made first.
pub fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A text file's contents.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// A JSON file's value.
pub fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&read(path)).unwrap()
}

/// Every file under `dir`, setup's copies of previous bytes included, with its bytes.
pub fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            all.extend(files(&path));
        } else {
            all.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    all.sort();
    all
}

/// The command in `home` with nothing else of this process's environment (no
/// harness's own variables, no XDG folders): a new person's machine.
pub fn in_home(home: &Path) -> Command {
    let mut command = host_shim();
    (command.env_clear().env(AS_COMMAND, "1").env("HOME", home)).env("TMPDIR", crate::tmpdir());
    command
}

/// A home of a test's own with only its `bin/` on PATH (a fake harness command goes
/// there when a test wants one), and its state folder.
pub struct Home {
    pub root: PathBuf,
}

impl Home {
    /// A fresh home named `name` under this test binary's scratch folder.
    pub fn new(name: &str) -> Home {
        let root = scratch("home", name);
        std::fs::create_dir_all(root.join("bin")).unwrap();
        Home { root }
    }

    /// The state folder the commands are given.
    pub fn state(&self) -> PathBuf {
        self.root.join("state")
    }

    /// `host-shim ARGS…` in this home: whether it succeeded, and its stdout then stderr.
    pub fn run(&self, args: &[&str]) -> (bool, String) {
        self.run_with(self.host_shim().args(args))
    }

    /// `host-shim` in this home, not started yet (a test adds its arguments or
    /// environment, then [`Home::run_with`]).
    pub fn host_shim(&self) -> Command {
        let mut command = in_home(&self.root);
        command.env("PATH", self.root.join("bin"));
        command
    }

    /// Runs `command`: whether it succeeded, and its stdout then stderr.
    pub fn run_with(&self, command: &mut Command) -> (bool, String) {
        let output = command.output().unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        (output.status.success(), text)
    }

    /// `host-shim setup HARNESS` over this home's state folder, which must succeed.
    pub fn setup(&self, harness: &str) {
        let state = self.state();
        let (ok, text) = self.run(&["setup", harness, "--state-dir", state.to_str().unwrap()]);
        assert!(ok, "{text}");
    }

    /// `host-shim doctor` over this home's state folder.
    pub fn doctor(&self) -> (bool, String) {
        let state = self.state();
        self.run(&["doctor", "--state-dir", state.to_str().unwrap()])
    }

    /// `harness` set up afresh, then one of its files (`file`, JSON) broken by `edit`
    /// as a person's hand would: what `host-shim doctor` says then.
    pub fn doctor_with_broken(
        &self,
        harness: &str,
        file: &str,
        edit: impl FnOnce(&mut serde_json::Value),
    ) -> (bool, String) {
        self.setup(harness);
        self.edit_json(file, edit);
        self.doctor()
    }

    /// A fake harness command `name` printing `version`.
    pub fn command(&self, name: &str, version: &str) {
        use std::os::unix::fs::PermissionsExt;
        let path = self.root.join("bin").join(name);
        std::fs::write(&path, format!("#!/bin/sh\necho '{version}'\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// The JSON file `file` of this home, edited.
    pub fn edit_json(&self, file: &str, edit: impl FnOnce(&mut serde_json::Value)) {
        let path = self.root.join(file);
        let mut value: serde_json::Value = json(&path);
        edit(&mut value);
        std::fs::write(&path, value.to_string()).unwrap();
    }
}

/// The version of `package` the harness's real-client suite pins (its folder's
/// `suite/package.json`; the crate under test is the harness's).
pub fn pinned(package: &str) -> String {
    let folder = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let pins = json(&folder.join("suite/package.json"));
    pins["dependencies"][package].as_str().unwrap().to_string()
}

/// `host-shim HOOK --state-dir STATE` given `input` on stdin, as the harness runs its
/// hook: its answer on stdout, read as JSON (the hook must succeed).
pub fn hook_answer(hook: &str, state: &str, input: &serde_json::Value) -> serde_json::Value {
    let out = output_with_stdin(
        host_shim().args([hook, "--state-dir", state]),
        &input.to_string(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `command` run as `command | head -c 1`: its stdout read for one byte, then closed.
/// It must end by SIGPIPE, quietly (no panic, no "Broken pipe" on stderr), as `cat`
/// would; what it writes after the first byte must meet the closed pipe.
pub fn ends_quietly_when_its_reader_goes(command: &mut Command) {
    use std::io::Read;
    let mut child = (command.stdout(Stdio::piped()).stderr(Stdio::piped()))
        .spawn()
        .unwrap();
    let mut first = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let output = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
    assert!(
        output.status.code().is_none(),
        "ended by SIGPIPE, as `cat` would be"
    );
}

/// The lines of `text` that say PROBLEM.
pub fn problems(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.contains("PROBLEM")).collect()
}

/// `host-shim setup HARNESS EXTRA…` in `home` (a new person's machine): its output.
pub fn setup(home: &Path, harness: &str, extra: &[&str]) -> Output {
    (in_home(home).args(["setup", harness]).args(extra))
        .output()
        .unwrap()
}

/// Every file under a home before `setup` ran, to compare with after `--remove`.
pub type Before = Vec<(PathBuf, Vec<u8>)>;

/// The person's own `mine` written at `file` under `home`, then `setup <harness>` run
/// there: what it said (that the harness is set up, checked) and every file before it.
pub fn set_up_over(home: &Path, harness: &str, file: &Path, mine: &str) -> (String, Before) {
    put(file, mine);
    let before = files(home);
    let said = ok(&setup(home, harness, &[]));
    crate::has(&said, "is set up");
    (said, before)
}

/// Setup's promise after a first run over `home`: setup again changes nothing, and
/// `--remove` gives back every file as `before` held it, byte for byte, file for file.
pub fn again_then_removed(home: &Path, harness: &str, before: &Before) {
    let set_up = files(home);
    let said = ok(&setup(home, harness, &[]));
    crate::has(&said, "set up already: nothing changed");
    assert_eq!(&files(home), &set_up, "a second setup changed nothing");
    ok(&setup(home, harness, &["--remove"]));
    assert_eq!(&files(home), before, "--remove gave every file back");
}
