//! `host-shim setup HARNESS`: writes into a harness's own configuration what it needs to
//! run the tools (the MCP server, the hooks, the permission), pointing at this binary;
//! `--dry-run` prints the change as a diff and writes nothing; `--remove` takes out what
//! setup adds and nothing else.
//!
//! Trust model: it edits only the files of the person running it, where their harness
//! reads them (or where the flags say), and keeps every other entry of those files as
//! it was, in its order. Before a file changes, its previous bytes are kept beside it
//! (`FILE.before-session-tools`, the file's own mode); the new bytes replace the file
//! in one rename, with the file's mode, so a harness reading it never sees half a file.
//! A file that is not what the harness itself would read (not JSON, not an object) is
//! left untouched, and the error names it. Running setup twice changes nothing the
//! second time. `--remove` gives the person's folders back as they were before setup,
//! file for file: setup's entries out, its copies of previous bytes and the folders it
//! emptied gone (`change.rs`).

pub use host_shim_profile::{change, hooks, json};

use anyhow::{Context, Result, bail};
use change::{Commands, Mode, apply};
use host_shim_profile::{HarnessProfile, SetupInputs};

/// Sets the harness `args` names up (or takes setup's entries out), and says what
/// became of its set-up.
pub fn run(args: &crate::flags::SetupArgs) -> Result<()> {
    let given = &args.places.harnesses;
    let Some(&profile) = (given.profiles().iter()).find(|p| p.name() == args.harness) else {
        bail!("no harness {} here", args.harness);
    };
    // A flag of another harness's setup would be silently ignored: refuse it.
    for other in given
        .profiles()
        .iter()
        .filter(|p| p.name() != profile.name())
    {
        for flag in other.setup_flags() {
            if given.matches().contains_id(flag.get_id().as_str())
                && given.matches().value_source(flag.get_id().as_str())
                    == Some(clap::parser::ValueSource::CommandLine)
            {
                bail!(
                    "--{} is for `host-shim setup {}`",
                    flag.get_long().unwrap_or_default(),
                    other.name()
                );
            }
        }
    }
    let commands = commands(args, profile)?;
    let inputs = SetupInputs {
        remove: args.remove,
        commands: &commands,
    };
    let changes = profile.setup(given.matches(), &inputs)?;
    let mode = match (args.dry_run, args.remove) {
        (true, _) => Mode::DryRun,
        (false, true) => Mode::Remove,
        (false, false) => Mode::Write,
    };
    let changed = apply(&changes, mode)?;
    let title = profile.title();
    match (args.dry_run, args.remove, changed) {
        (true, _, _) => {}
        (false, false, false) => println!("{title} was set up already: nothing changed."),
        (false, false, true) => println!(
            "{title} is set up: {} Undo with `host-shim setup {} --remove`.",
            profile.set_up(),
            profile.name()
        ),
        (false, true, false) => println!("Nothing of setup's was there: nothing changed."),
        (false, true, true) => {
            println!("Setup's entries are removed; everything else is as it was.")
        }
    }
    // A command in a build folder works until the next `cargo clean`: say so.
    let binary = std::path::Path::new(&commands.binary);
    if let (false, Some(folder)) = (args.remove, host_shim_profile::build_folder_of(binary)) {
        println!(
            "Note: {}.",
            host_shim_profile::build_folder_warning(binary, &folder)
        );
    }
    Ok(())
}

/// What the harness set up is told to run: this binary where it is installed (or
/// `--binary`; an npm package's or `cargo install`'s place lasts across upgrades), its
/// server over every harness found here, and the state folder.
fn commands(args: &crate::flags::SetupArgs, setting_up: &dyn HarnessProfile) -> Result<Commands> {
    let binary = match &args.binary {
        Some(path) => path.clone(),
        None => {
            let exe =
                std::env::current_exe().context("cannot tell where this host-shim binary is")?;
            exe.canonicalize().unwrap_or(exe)
        }
    };
    let binary = binary.to_string_lossy().into_owned();
    let given = &args.places.harnesses;
    let mut server_args = vec!["mcp".to_string()];
    for profile in given.profiles() {
        let place = profile.sessions_place(given.matches())?;
        if profile.name() == setting_up.name() || place.exists() {
            let flag = profile.sessions_flag();
            let long = flag.get_long().unwrap_or_default();
            server_args.extend([format!("--{long}"), place.to_string_lossy().into_owned()]);
        }
    }
    let state_dir =
        (args.places.state_dir.as_ref()).map(|state| state.to_string_lossy().into_owned());
    if let Some(state) = &state_dir {
        server_args.extend(["--state-dir".to_string(), state.clone()]);
    }
    // The wake command given to setup goes to the harness's server as it was given.
    let wake = setting_up.facts().wake.as_ref();
    if let Some((flag, template)) = wake.and_then(|flag| Some((flag, flag.given(given.matches())?)))
    {
        host_shim::WakeCommand::parse(template)?;
        server_args.extend([format!("--{}", flag.long), template.clone()]);
    }
    Ok(Commands::new(binary, server_args, state_dir))
}
