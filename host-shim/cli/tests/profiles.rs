//! What every harness's profile must hold, generated from the command's list
//! (`harnesses::ALL`): a harness added to the list is checked here by no edit of this
//! test. The toy harness (`host-shim/harnesses/toy`) runs the same checks over itself.

use host_shim_cli::harnesses::ALL;

fn main() -> std::process::ExitCode {
    let mut tests = vec![host_shim_testkit::profiles::command_line_is_sound(ALL)];
    for profile in ALL {
        tests.extend(host_shim_testkit::profiles::checks(*profile));
    }
    host_shim_testkit::command::main(&[], tests)
}
