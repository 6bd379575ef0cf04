//! What every harness's profile must hold, generated from the command's list: the
//! command's own `profiles` test runs these over each harness of the list, and a
//! harness under test that is not in it (the toy) runs them over itself. A harness
//! added to the list is tested so by no edit of any test.

use crate::command::{Test, files, in_home, scratch};
use host_shim_profile::HarnessProfile;

/// The command line over `profiles` is sound (clap's own checks: no two harnesses with
/// one flag, no requirement of a flag that is not there), and no two share a name.
pub fn command_line_is_sound(profiles: &'static [&'static dyn HarnessProfile]) -> Test {
    Test::new("the_command_line_over_every_harness_is_sound", move || {
        host_shim_cli::flags::command(profiles).debug_assert();
        let mut names: Vec<&str> = profiles.iter().map(|p| p.name()).collect();
        names.sort();
        let all = names.len();
        names.dedup();
        assert_eq!(names.len(), all, "two harnesses share a name: {names:?}");
    })
}

/// One check of a profile: what it holds, and the check.
type Check = (&'static str, fn(&dyn HarnessProfile));

/// The checks of one profile, each a test named after the harness.
pub fn checks(profile: &'static dyn HarnessProfile) -> Vec<Test> {
    let checks: [Check; 4] = [
        ("setup names its three tools whole", names_its_tools_whole),
        (
            "a dry run of setup writes nothing",
            a_dry_run_writes_nothing,
        ),
        (
            "setup wires its hooks, then --remove leaves a new home as it was",
            remove_gives_the_home_back,
        ),
        (
            "each hook answers input that is not JSON without a crash",
            hooks_answer_what_is_not_json,
        ),
    ];
    let name = profile.name();
    (checks.into_iter())
        .map(|(what, check)| Test::new(format!("{name}: {what}"), move || check(profile)))
        .collect()
}

/// What setup prints after its change names each tool as the harness's model sees it:
/// the same prefix on all three.
fn names_its_tools_whole(profile: &dyn HarnessProfile) {
    let said = profile.set_up();
    let words = said.split(|c: char| c.is_whitespace() || ",()".contains(c));
    let names: Vec<&str> = words.filter(|w| w.contains("sessions_")).take(3).collect();
    let prefix = names[0].strip_suffix("sessions_list").unwrap_or("?");
    assert_eq!(
        names,
        ["list", "read", "send"].map(|tool| format!("{prefix}sessions_{tool}")),
        "{said}"
    );
}

/// `host-shim setup NAME ARGS…` in `home` (its state folder beside it): the output.
fn setup(home: &std::path::Path, name: &str, args: &[&str]) -> std::process::Output {
    let state = home.with_extension("state");
    (in_home(home)
        .args(["setup", name, "--state-dir"])
        .arg(&state))
    .args(args)
    .output()
    .unwrap()
}

/// In a new home, a dry run writes no file, whether setup would change files or
/// refuses (a harness not onboarded yet); a refusal says why.
fn a_dry_run_writes_nothing(profile: &dyn HarnessProfile) {
    let home = scratch("profiles", &format!("{}-dry-run", profile.name()));
    let out = setup(&home, profile.name(), &["--dry-run"]);
    assert_eq!(files(&home), vec![], "{out:?}");
    if !out.status.success() {
        assert!(!out.stderr.is_empty(), "a refusal without a word: {out:?}");
    }
}

/// In a new home, setup writes files that run its hook commands, and then `--remove`
/// leaves no file of setup's behind (or setup refused, saying why, and wrote nothing).
fn remove_gives_the_home_back(profile: &dyn HarnessProfile) {
    let home = scratch("profiles", &format!("{}-remove", profile.name()));
    let out = setup(&home, profile.name(), &[]);
    if !out.status.success() {
        assert!(!out.stderr.is_empty(), "a refusal without a word: {out:?}");
        assert_eq!(files(&home), vec![], "a refused setup wrote: {out:?}");
        return;
    }
    let written = files(&home);
    assert_ne!(
        written,
        vec![],
        "setup said it set up but wrote nothing: {out:?}"
    );
    // What it wrote runs the hook commands its facts name (the command answers those).
    let text: String = (written.iter())
        .map(|(_, bytes)| String::from_utf8_lossy(bytes))
        .collect();
    let hooks = (profile.hook().map(|hook| hook.command))
        .into_iter()
        .chain(profile.write_hook().map(|hook| hook.command));
    for hook in hooks {
        let paths: Vec<_> = written.iter().map(|(path, _)| path).collect();
        assert!(text.contains(hook), "setup wrote no {hook} in {paths:?}");
    }
    let out = setup(&home, profile.name(), &["--remove"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(files(&home), vec![], "{out:?}");
}

/// Each hook command (its hook, its pre-write hook) given input that is not JSON ends
/// by itself with 0 or 1 (an answer, or an error it names), never a crash (a panic is
/// 101, a signal none), and is answered by the profile (a hook its facts name and its
/// profile does not answer says so).
fn hooks_answer_what_is_not_json(profile: &dyn HarnessProfile) {
    let home = scratch("profiles", &format!("{}-hooks", profile.name()));
    let state = home.join("state");
    let commands = (profile.hook().map(|hook| hook.command))
        .into_iter()
        .chain(profile.write_hook().map(|hook| hook.command));
    for hook in commands {
        let mut command = in_home(&home);
        command.args([hook, "--state-dir"]).arg(&state);
        let out = crate::command::output_with_stdin(&mut command, "not json");
        assert!(matches!(out.status.code(), Some(0 | 1)), "{hook}: {out:?}");
        if out.status.code() == Some(1) {
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(!said.is_empty(), "{hook}: an error without a word");
            assert!(
                !said.contains(&format!("{} has no", profile.title())),
                "{hook}: its profile does not answer it: {said}"
            );
        }
    }
}

/// A harness plugin's source (OpenCode's, OpenClaw's) runs `hook` before the calls of
/// exactly `tools`: it declares both as the plugin's `WRITING` and `WRITE_HOOK`, and
/// takes what every session-tools plugin shares (`writeRefusal` among it).
#[track_caller]
pub fn assert_plugin_checks_writes(
    plugin: &str,
    hook: &str,
    tools: &[(&str, host_shim_profile::Written)],
) {
    let names: Vec<String> = tools.iter().map(|(name, _)| format!("{name:?}")).collect();
    let writing = format!("const WRITING = new Set([{}]);", names.join(", "));
    let hook = format!("const WRITE_HOOK = \"{hook}\";");
    for line in [
        &*writing,
        &*hook,
        host_shim_profile::companion::PLUGIN_JS_MARK,
    ] {
        assert!(plugin.contains(line), "the plugin lacks {line}");
    }
}
