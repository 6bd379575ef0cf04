//! The `host-shim` command over every harness this project supports.

fn main() -> std::process::ExitCode {
    host_shim_cli::run(host_shim_cli::harnesses::ALL)
}
