//! `host-shim doctor` over OpenClaw's set-up: the plugin's folder holds what this
//! host-shim's setup writes, and an earlier setup's file is named with its fix.

use host_shim_testkit::command::{Home, problems, put, read};

fn openclaw_s_plugin_folder_is_checked_against_what_setup_writes() {
    let home = Home::new("openclaw");
    // OpenClaw onboarded: its config is there.
    put(&home.root.join(".openclaw/openclaw.json"), "{}\n");
    home.setup("openclaw");
    let (_, text) = home.doctor();
    host_shim_testkit::has(
        &text,
        "holds this host-shim's plugin (it asks before write, edit and apply_patch)",
    );
    // An earlier setup's manifest, which does not declare sessions_claim (OpenClaw would
    // not register it): named, with its fix.
    let manifest = home
        .root
        .join(".openclaw/extensions/session-tools/openclaw.plugin.json");
    let earlier = read(&manifest).replace(", \"session-tools__sessions_claim\"", "");
    std::fs::write(&manifest, earlier).unwrap();
    let (ok, text) = home.doctor();
    assert!(!ok, "{text}");
    assert!(
        problems(&text).iter().any(|p| p.contains(&format!(
            "{} is not what this host-shim's setup writes",
            manifest.display()
        ))),
        "{text}"
    );
    host_shim_testkit::has(&text, "fix: host-shim setup openclaw");
}

host_shim_testkit::tests![openclaw_s_plugin_folder_is_checked_against_what_setup_writes,];
