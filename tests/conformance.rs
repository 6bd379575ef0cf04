//! Runs every case file under `tests/cases/` through the real component and requires
//! the exact text (and the exact deliveries) each case writes down.

use conformance::{case_files, parse_cases, run_case};

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

#[test]
fn the_case_parser_reads_sections_exactly() {
    let dir = std::env::temp_dir().join(format!("cases-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.txt");
    std::fs::write(
        &path,
        "# comment\n=== one\ncorpus: c\ncaller: me\nsettings: {\"a\":1}\ncall: sessions_read {\"session_id\":\"x\"}\n--- output\nline 1\n--- user (seq 1, user) ---\n\n--- deliveries\n[]\n\n=== two\ncorpus: c\ncaller: me\ncall: sessions_list\n--- output\nok\n",
    )
    .unwrap();
    let cases = parse_cases(&path).unwrap();
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].settings, "{\"a\":1}");
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
