//! Runs every case file under `tests/cases/` through the real component and requires
//! the exact text (and the exact deliveries, and the refusal code the text names) each
//! case writes down; and runs them through the released 0.2.0 and 0.1.0 plugins too.

use conformance::{
    TestHost, case_files, case_files_for, parse_cases, refusal_in_text, run_case, run_case_on,
    runtime, runtime_v0_1_0, runtime_v0_2_0, runtime_v0_3_0, runtime_v0_4_0, runtime_v0_5_0,
    too_new_for,
};
use host_shim::{ContractVersion, Runtime};

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
    assert_eq!(runtime().contract_version(), ContractVersion::V0_6_0);
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

/// The released plugins through this host: each answers every case that does not pin
/// a later rule, from the case files as they stood for its version where a later
/// version changed the text (`tests/cases/since_vX.Y.Z/`); 0.1.0 the same, but for the
/// cases that pin what 0.2.0 added (a call id that makes a retried send deliver once).
fn every_case_of_a_released_version_passes(runtime: &Runtime<TestHost>, version: ContractVersion) {
    assert_eq!(runtime.contract_version(), version);
    let mut failures = Vec::new();
    let mut count = 0;
    for file in case_files_for(version) {
        for case in parse_cases(&file).unwrap_or_else(|err| panic!("{err:#}")) {
            let too_new = too_new_for(&case, version)
                || (version == ContractVersion::V0_1_0 && !case.call_id.is_empty());
            if too_new {
                continue;
            }
            count += 1;
            if let Err(err) = run_case_on(runtime, &case) {
                failures.push(format!("{err:#}"));
            }
        }
    }
    assert!(
        count >= 60,
        "found only {count} cases for {}",
        version.as_str()
    );
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed under the {} plugin:\n\n{}",
        failures.len(),
        version.as_str(),
        failures.join("\n\n")
    );
}

#[test]
fn every_case_passes_through_the_released_0_5_0_plugin() {
    every_case_of_a_released_version_passes(runtime_v0_5_0(), ContractVersion::V0_5_0);
}

#[test]
fn every_case_passes_through_the_released_0_4_0_plugin() {
    every_case_of_a_released_version_passes(runtime_v0_4_0(), ContractVersion::V0_4_0);
}

/// A plugin before 0.5.0 has no word for a write the inbox could not confirm: it reads
/// as the controller's refusal, and its reason says the message may still arrive.
#[test]
fn an_undecided_write_reaches_an_older_plugin_as_a_reason_that_says_so() {
    let case = parse_cases(&conformance::tests_dir().join("cases/controller.txt"))
        .unwrap()
        .into_iter()
        .find(|case| case.since == "0.5.0")
        .expect("controller.txt holds the undecided case");
    for runtime in [runtime_v0_4_0(), runtime_v0_3_0()] {
        let said = conformance::answer_on(runtime, &case);
        assert!(
            said.starts_with(
                "sessions_send refused (rejected): the controller refused the message: the inbox \
                 did not confirm the message in time (the inbox did not acknowledge the write \
                 (scripted)); it may still arrive: send the same words again to find out"
            ),
            "{}: {said}",
            runtime.contract_version().as_str()
        );
    }
}

#[test]
fn every_case_passes_through_the_released_0_3_0_plugin() {
    every_case_of_a_released_version_passes(runtime_v0_3_0(), ContractVersion::V0_3_0);
}

#[test]
fn every_case_passes_through_the_released_0_2_0_plugin() {
    every_case_of_a_released_version_passes(runtime_v0_2_0(), ContractVersion::V0_2_0);
}

#[test]
fn every_case_passes_through_the_released_0_1_0_plugin() {
    every_case_of_a_released_version_passes(runtime_v0_1_0(), ContractVersion::V0_1_0);
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
    let dir = host_shim_testkit::scratch("conformance", "parser");
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
