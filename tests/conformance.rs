//! Runs every case file under `tests/cases/` through the real component and requires
//! the exact text (and the exact deliveries, and the refusal code the text names) each
//! case writes down; and runs them through the released 0.1.0 plugin too.

use conformance::{
    case_files, parse_cases, refusal_in_text, run_case, run_case_on, runtime, runtime_v0_1_0,
};
use host_shim::ContractVersion;

#[test]
fn every_case_file_passes() {
    let mut failures = Vec::new();
    let mut count = 0;
    for file in case_files() {
        for case in parse_cases(&file).unwrap_or_else(|err| panic!("{err:#}")) {
            count += 1;
            if let Err(err) = run_case(&case) {
                failures.push(format!("{err:#}"));
            }
        }
    }
    assert_eq!(runtime().contract_version(), ContractVersion::V0_2_0);
    assert!(
        count >= 60,
        "expected the case files to hold at least 60 cases, found {count}"
    );
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// The tools' text is the same in 0.1.0 and 0.2.0: every case but those that pin what
/// 0.2.0 added (a call id that makes a retried send deliver once) passes through the
/// 0.1.0 plugin under this host.
#[test]
fn every_case_passes_through_the_released_0_1_0_plugin() {
    let runtime = runtime_v0_1_0();
    assert_eq!(runtime.contract_version(), ContractVersion::V0_1_0);
    let mut failures = Vec::new();
    let mut count = 0;
    for file in case_files() {
        for case in parse_cases(&file).unwrap_or_else(|err| panic!("{err:#}")) {
            if !case.call_id.is_empty() {
                continue;
            }
            count += 1;
            if let Err(err) = run_case_on(runtime, &case) {
                failures.push(format!("{err:#}"));
            }
        }
    }
    assert!(count >= 60, "found only {count} cases for 0.1.0");
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed under the 0.1.0 plugin:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn refusal_codes_are_read_off_the_text_as_spec_writes_them() {
    assert_eq!(
        refusal_in_text("invalid arguments: limit must be …"),
        Some("invalid-arguments")
    );
    assert_eq!(
        refusal_in_text("unknown tool \"x\": the tools are …"),
        Some("unknown-tool")
    );
    assert_eq!(
        refusal_in_text("sessions_send refused (not-messageable): session …\nNext step: …"),
        Some("not-messageable")
    );
    // A row or a body that says so is not a refusal.
    assert_eq!(
        refusal_in_text("- a [live, top-level]\n  x refused (rejected): y"),
        None
    );
    assert_eq!(refusal_in_text("0 of 0 considered sessions"), None);
}

#[test]
fn the_case_parser_reads_sections_exactly() {
    let dir = std::env::temp_dir().join(format!("cases-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.txt");
    std::fs::write(
        &path,
        "# comment\n=== one\ncorpus: c\ncaller: me\nsettings: {\"a\":1}\ncall-id: c-1\ncall: sessions_read {\"session_id\":\"x\"}\n--- output\nline 1\n--- user (seq 1, user) ---\n\n--- deliveries\n[]\n\n=== two\ncorpus: c\ncaller: me\ncall: sessions_list\n--- output\nok\n",
    )
    .unwrap();
    let cases = parse_cases(&path).unwrap();
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].settings, "{\"a\":1}");
    assert_eq!(cases[0].call_id, "c-1");
    assert_eq!(cases[1].call_id, "");
    assert_eq!(cases[0].tool, "sessions_read");
    assert_eq!(cases[0].arguments, "{\"session_id\":\"x\"}");
    assert_eq!(cases[0].output, "line 1\n--- user (seq 1, user) ---");
    assert_eq!(cases[0].deliveries, Some(serde_json::json!([])));
    assert_eq!(
        (
            cases[1].tool.as_str(),
            cases[1].arguments.as_str(),
            cases[1].output.as_str()
        ),
        ("sessions_list", "", "ok")
    );
    assert_eq!(cases[1].deliveries, None);
    std::fs::remove_dir_all(dir).unwrap();
}
