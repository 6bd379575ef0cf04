//! End-to-end properties of the real component that a text case cannot show: what it
//! imports, what it asks the host for, and what it never does.

use conformance::{
    PLUGIN_V0_1_0, PLUGIN_V0_2_0, PLUGIN_V0_3_0, PLUGIN_V0_4_0, PLUGIN_V0_5_0, TestHost, call,
    call_on, corpus, runtime, runtime_v0_2_0, runtime_v0_3_0, text,
};
use host_shim::{CallRequest, ContractVersion, CorpusHost, HostStats, Refusal, Runtime};
use host_shim_plugin::PLUGIN_WASM;
use wasmtime::component::Component;

#[test]
fn the_component_imports_exactly_the_contracts_interfaces() {
    let engine = runtime().engine();
    // A plugin's imports and its component type, its imports sorted.
    let imports_of = |plugin: &[u8]| {
        let ty = Component::from_binary(engine, plugin)
            .unwrap()
            .component_type();
        let mut imports: Vec<String> = ty
            .imports(engine)
            .map(|(name, _)| name.to_string())
            .collect();
        imports.sort();
        (imports, ty)
    };
    let interfaces = |version: &str, names: &[&str]| -> Vec<String> {
        (names.iter())
            .map(|name| format!("harness:sessions/{name}@{version}"))
            .collect()
    };
    let (current, _) = imports_of(PLUGIN_WASM);
    assert_eq!(
        current,
        interfaces("0.6.0", &["claims", "inbox", "session-query"])
    );
    for (plugin, version) in [
        (PLUGIN_V0_5_0, "0.5.0"),
        (PLUGIN_V0_4_0, "0.4.0"),
        (PLUGIN_V0_3_0, "0.3.0"),
        (PLUGIN_V0_2_0, "0.2.0"),
        (PLUGIN_V0_1_0, "0.1.0"),
    ] {
        let (imports, ty) = imports_of(plugin);
        assert_eq!(imports, interfaces(version, &["inbox", "session-query"]));
        let exports: Vec<String> = ty
            .exports(engine)
            .map(|(name, _)| name.to_string())
            .collect();
        assert_eq!(exports, [format!("harness:sessions/tools@{version}")]);
    }
}

#[test]
fn every_contract_version_loads_and_says_which() {
    let current: Runtime<CorpusHost> = Runtime::from_component(PLUGIN_WASM).unwrap();
    assert_eq!(current.contract_version(), ContractVersion::V0_6_0);
    let v0_5_0: Runtime<CorpusHost> = Runtime::from_component(PLUGIN_V0_5_0).unwrap();
    assert_eq!(v0_5_0.contract_version(), ContractVersion::V0_5_0);
    let v0_4_0: Runtime<CorpusHost> = Runtime::from_component(PLUGIN_V0_4_0).unwrap();
    assert_eq!(v0_4_0.contract_version(), ContractVersion::V0_4_0);
    let v0_3_0: Runtime<CorpusHost> = Runtime::from_component(PLUGIN_V0_3_0).unwrap();
    assert_eq!(v0_3_0.contract_version(), ContractVersion::V0_3_0);
    let v0_2_0: Runtime<CorpusHost> = Runtime::from_component(PLUGIN_V0_2_0).unwrap();
    assert_eq!(v0_2_0.contract_version(), ContractVersion::V0_2_0);
    let v0_1_0: Runtime<CorpusHost> = Runtime::from_component(PLUGIN_V0_1_0).unwrap();
    assert_eq!(v0_1_0.contract_version(), ContractVersion::V0_1_0);
    // The same three tools (0.4.0 takes more arguments); 0.3.0 and later annotate them.
    let bare = |runtime: &Runtime<CorpusHost>| -> Vec<(String, String, String)> {
        (runtime.catalog("").unwrap().into_iter())
            .map(|t| (t.name, t.description, t.input_schema))
            .collect()
    };
    // 0.5.0 changed no tool: the same catalog, annotations included; 0.6.0 added a
    // fourth after the three.
    assert_eq!(v0_5_0.catalog("").unwrap(), v0_4_0.catalog("").unwrap());
    let current_tools = current.catalog("").unwrap();
    assert_eq!(current_tools[..3], v0_5_0.catalog("").unwrap()[..]);
    assert_eq!(current_tools[3].name, "sessions_claim");
    assert_eq!(bare(&v0_3_0), bare(&v0_2_0));
    assert_eq!(bare(&v0_3_0), bare(&v0_1_0));
    let names = |tools: Vec<(String, String, String)>| -> Vec<String> {
        tools.into_iter().map(|t| t.0).collect()
    };
    assert_eq!(names(bare(&current))[..3], names(bare(&v0_3_0))[..]);
    assert!(bare(&current)[2].2.contains("\"reply_to\""));
    let annotated = |runtime: &Runtime<CorpusHost>| {
        (runtime.catalog("").unwrap().iter()).all(|t| t.annotations.is_some())
    };
    assert!(annotated(&current) && annotated(&v0_3_0));
    assert!(
        !annotated(&v0_2_0)
            && !(v0_1_0.catalog("").unwrap().iter()).any(|t| t.annotations.is_some())
    );
    let request = CallRequest {
        caller: "me".into(),
        tool: "sessions_kill".into(),
        ..CallRequest::default()
    };
    let host = || CorpusHost::new(std::sync::Arc::new(host_shim::Corpus::demo()));
    let new = current.call(host(), &request).answer.unwrap();
    let middle = v0_2_0.call(host(), &request).answer.unwrap();
    let old = v0_1_0.call(host(), &request).answer.unwrap();
    // 0.6.0 names its fourth tool; the rest of the refusal is as 0.1.0 wrote it.
    assert_eq!(
        new.text,
        old.text.replace(
            "sessions_read and sessions_send.",
            "sessions_read, sessions_send and sessions_claim."
        )
    );
    assert_eq!(middle.text, old.text);
    assert_eq!(new.refusal, middle.refusal);
    assert_eq!(
        (new.refusal, old.refusal),
        (Some(Refusal::UnknownTool), None)
    );
}

#[test]
fn a_linker_with_only_the_contracts_interfaces_loads_it() {
    // Runtime links session-query, claims and inbox and nothing else (no WASI).
    let runtime: Runtime<CorpusHost> = Runtime::from_component(PLUGIN_WASM).unwrap();
    let tools = runtime.catalog("").unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        [
            "sessions_list",
            "sessions_read",
            "sessions_send",
            "sessions_claim"
        ]
    );
}

#[test]
fn the_catalog_is_small_and_disabled_deployments_have_none() {
    let tools = runtime().catalog("{}").unwrap();
    let bytes: usize = tools
        .iter()
        .map(|t| t.name.len() + t.description.len() + t.input_schema.len())
        .sum();
    assert!(bytes <= 2000, "catalog is {bytes} bytes");
    for tool in &tools {
        let schema: serde_json::Value = serde_json::from_str(&tool.input_schema).unwrap();
        assert_eq!(schema["type"], "object");
    }
    assert!(
        runtime()
            .catalog(r#"{"enabled": false}"#)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn bad_settings_are_a_clear_error_from_catalog_and_call() {
    let err = runtime()
        .catalog(r#"{"maxReadMessage": 5}"#)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("invalid settings: unknown key \"maxReadMessage\""),
        "{err}"
    );
    let err = runtime()
        .catalog(r#"{"allowResume": "no"}"#)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "invalid settings: allowResume must be true or false (got \"no\")"
    );
    // 0.3.0's settings get the same: the key, what it takes, what it got.
    for (settings, error) in [
        (
            r#"{"maxHops": 0}"#,
            "maxHops must be an integer from 1 to 64 (got 0)",
        ),
        (
            r#"{"maxHops": 65}"#,
            "maxHops must be an integer from 1 to 64 (got 65)",
        ),
        (
            r#"{"maxHops": "5"}"#,
            "maxHops must be an integer from 1 to 64 (got \"5\")",
        ),
        (
            r#"{"readScope": "team"}"#,
            "readScope must be \"all\", \"workspace\", \"tree\" or \"self\" (got \"team\")",
        ),
        (
            r#"{"sendScope": "self"}"#,
            "sendScope must be \"all\", \"workspace\", \"tree\" or \"none\" (got \"self\")",
        ),
    ] {
        let err = runtime().catalog(settings).unwrap_err().to_string();
        assert_eq!(err, format!("invalid settings: {error}"));
        let outcome = call(&corpus("harness"), "s-me", settings, "sessions_list", "");
        assert_eq!(
            outcome.answer.unwrap_err().to_string(),
            format!("invalid settings: {error}")
        );
    }
    let outcome = call(
        &corpus("harness"),
        "s-me",
        r#"{"maxListResults": -1}"#,
        "sessions_list",
        "",
    );
    let err = outcome.answer.unwrap_err().to_string();
    host_shim_testkit::has(&err, "maxListResults must be an integer");
    let outcome = call(
        &corpus("harness"),
        "s-me",
        r#"{"enabled": false}"#,
        "sessions_list",
        "",
    );
    assert!(outcome.answer.unwrap_err().to_string().contains("disabled"));
}

#[test]
fn an_empty_query_asks_one_title_batch_for_the_rows_shown() {
    let corpus = corpus("harness");
    let outcome = call(
        &corpus,
        "s-me",
        "",
        "sessions_list",
        r#"{"scope": "all", "limit": 3}"#,
    );
    let out = outcome.answer.unwrap().text;
    let rows = out.lines().filter(|l| l.starts_with("- ")).count();
    assert_eq!(rows, 3);
    assert_eq!(outcome.stats.header_lists, 1);
    assert_eq!(outcome.stats.title_batches, 1);
    assert_eq!(outcome.stats.title_ids_asked, 3);
}

#[test]
fn a_query_listing_asks_one_title_batch() {
    let outcome = call(
        &corpus("harness"),
        "s-me",
        "",
        "sessions_list",
        r#"{"query": "review", "scope": "all"}"#,
    );
    assert!(
        outcome
            .answer
            .unwrap()
            .text
            .contains("1 of 1 considered sessions")
    );
    assert_eq!(outcome.stats.title_batches, 1);
    // Every candidate needs its title to decide "review"; none is asked twice.
    assert_eq!(outcome.stats.title_ids_asked, 8);
}

fn untouched() -> HostStats {
    HostStats::default()
}

/// The host-call counts, without the byte count (which follows the corpus's text).
fn calls(stats: HostStats) -> HostStats {
    HostStats {
        lowered_bytes: 0,
        lifted_bytes: 0,
        ..stats
    }
}

#[test]
fn a_read_never_wakes_delivers_or_resumes() {
    let corpus = corpus("harness");
    for target in ["s-live", "s-cold", "s-kid"] {
        let outcome = call(
            &corpus,
            "s-me",
            "",
            "sessions_read",
            &format!(r#"{{"session_id": "{target}"}}"#),
        );
        let out = outcome.answer.unwrap().text;
        assert!(out.starts_with(&format!("session {target} [")));
        assert!(outcome.deliveries.is_empty());
        // Whole text crosses for the messages shown, in one batch, and no others.
        let shown = out.lines().filter(|l| l.starts_with("--- ")).count() as u32;
        assert_eq!(
            calls(outcome.stats),
            HostStats {
                header_gets: 1,
                title_batches: 1,
                title_ids_asked: 1,
                surface_reads: 1,
                message_batches: u32::from(shown > 0),
                messages_asked: shown,
                inbox_status_reads: 1,
                claim_reads: 1,
                ..untouched()
            },
            "{target}"
        );
    }
    // One host across calls, which a wake would change: reads leave it cold, and the
    // same host does turn live once a send wakes it.
    let read = r#"{"session_id": "s-cold"}"#;
    let mut host = TestHost::new(corpus.clone());
    for _ in 0..3 {
        let report = call_on(host, "s-me", "", "sessions_read", read);
        assert!(
            report
                .answer
                .unwrap()
                .text
                .starts_with("session s-cold [cold, top-level]")
        );
        host = report.harness;
    }
    let send = r#"{"session_id": "s-cold", "message": "wake up"}"#;
    let report = call_on(host, "s-me", "", "sessions_send", send);
    assert!(
        report
            .answer
            .unwrap()
            .text
            .contains("(woke a cold session)")
    );
    let report = call_on(report.harness, "s-me", "", "sessions_read", read);
    assert!(
        report
            .answer
            .unwrap()
            .text
            .starts_with("session s-cold [live, top-level]")
    );
}

#[test]
fn truncation_starts_exactly_past_4000_chars() {
    let out = text(
        &corpus("harness"),
        "s-me",
        "",
        "sessions_read",
        r#"{"session_id": "s-cold"}"#,
    );
    let exact = "é".repeat(4000);
    assert!(
        out.contains(&format!(
            "--- assistant (seq 2, model:openai/gpt) ---\n{exact}…[truncated 1 chars]\n"
        )),
        "4001 chars are cut by one"
    );
    assert!(
        out.ends_with(&format!("--- user (seq 1, user) ---\n{exact}")),
        "4000 chars are not cut"
    );
}

#[test]
fn the_send_cap_is_8000_chars_by_default() {
    let corpus = corpus("harness");
    let at_cap =
        serde_json::json!({"session_id": "s-live", "message": "🦀".repeat(8000)}).to_string();
    let outcome = call(&corpus, "s-me", "", "sessions_send", &at_cap);
    assert!(
        outcome
            .answer
            .unwrap()
            .text
            .starts_with("accepted for s-live | mode=queue | chars=8000 | hop=1 | id=m-")
    );
    assert_eq!(outcome.deliveries.len(), 1);
    let over =
        serde_json::json!({"session_id": "s-live", "message": "🦀".repeat(8001)}).to_string();
    let outcome = call(&corpus, "s-me", "", "sessions_send", &over);
    assert_eq!(
        outcome.answer.unwrap().text,
        "invalid arguments: message must be at most 8000 chars (maxSendChars) (got 8001 chars); nothing was delivered: shorten it and send again"
    );
    assert_eq!(calls(outcome.stats), untouched());
}

#[test]
fn refusals_touch_the_target_no_further_than_their_check() {
    let corpus = corpus("harness");
    let send = |settings: &str, target: &str| {
        call(
            &corpus,
            "s-me",
            settings,
            "sessions_send",
            &format!(r#"{{"session_id": "{target}", "message": "hi"}}"#),
        )
    };
    // not-messageable: one header lookup, nothing else.
    let outcome = send("", "s-kid");
    let answer = outcome.answer.unwrap();
    assert!(answer.text.contains("(not-messageable)"));
    assert_eq!(answer.refusal, Some(Refusal::NotMessageable));
    assert_eq!(
        calls(outcome.stats),
        HostStats {
            header_gets: 1,
            ..untouched()
        }
    );
    // resume-disabled: decided from the header (after the caller's own surface told
    // its chain); the target is never resolved.
    // (The sending caps are counted before it, from the inbox.)
    let outcome = send(r#"{"allowResume": false}"#, "s-cold");
    assert_eq!(
        outcome.answer.unwrap().refusal,
        Some(Refusal::ResumeDisabled)
    );
    assert_eq!(
        calls(outcome.stats),
        HostStats {
            header_gets: 1,
            surface_reads: 1,
            send_histories: 1,
            ..untouched()
        }
    );
    // not-found: the header lookup, then a listing for near ids.
    let outcome = send("", "s-nope");
    assert_eq!(outcome.answer.unwrap().refusal, Some(Refusal::NotFound));
    assert_eq!(
        calls(outcome.stats),
        HostStats {
            header_gets: 1,
            header_lists: 1,
            ..untouched()
        }
    );
    // rejected by the controller: one attempt, nothing accepted.
    let outcome = send("", "s-busy");
    assert_eq!(outcome.answer.unwrap().refusal, Some(Refusal::Rejected));
    assert_eq!(
        (outcome.stats.delivery_attempts, outcome.stats.deliveries),
        (1, 0)
    );
    assert!(outcome.deliveries.is_empty());
}

#[test]
fn an_accepted_send_delivers_exactly_once_and_reports_the_wake() {
    let corpus = corpus("harness");
    let outcome = call(
        &corpus,
        "s-me",
        "",
        "sessions_send",
        r#"{"session_id": "s-cold", "message": "hi"}"#,
    );
    assert!(
        outcome
            .answer
            .unwrap()
            .text
            .contains("(woke a cold session)")
    );
    assert_eq!(
        (
            outcome.stats.delivery_attempts,
            outcome.stats.deliveries,
            outcome.stats.wakes
        ),
        (1, 1, 1)
    );
    assert_eq!(outcome.deliveries.len(), 1);
    assert!(outcome.deliveries[0].woke);
}

#[test]
fn every_call_reports_only_its_own_deliveries() {
    let corpus = corpus("harness");
    let args = r#"{"session_id": "s-live", "message": "once"}"#;
    let other = r#"{"session_id": "s-live", "message": "twice"}"#;
    // The same host for both calls: it holds both deliveries afterwards, but each
    // call's report holds only its own (other words: the same would be a repeat).
    let first = call_on(TestHost::new(corpus), "s-me", "", "sessions_send", args);
    let second = call_on(first.harness, "s-me", "", "sessions_send", other);
    assert_ne!(
        first.answer.as_ref().unwrap(),
        second.answer.as_ref().unwrap()
    );
    assert_eq!(
        second.deliveries.len(),
        1,
        "no delivery carried over from the first call"
    );
    assert_eq!(calls(first.stats), calls(second.stats));
    let target = second.harness.corpus.session("s-live").unwrap();
    // Twelve messages in the corpus, and the two deliveries after them.
    assert_eq!(target.messages.len(), 14, "the host kept both deliveries");
    assert_eq!(target.captured_through_seq, 14);
}

#[test]
fn a_send_retried_with_its_call_id_delivers_once() {
    let corpus = corpus("harness");
    let request = CallRequest {
        caller: "s-me".into(),
        call_id: "toolu_01A".into(),
        tool: "sessions_send".into(),
        arguments: r#"{"session_id": "s-cold", "message": "once"}"#.into(),
        ..CallRequest::default()
    };
    let first = runtime().call(TestHost::new(corpus), &request);
    let retry = runtime().call(first.harness, &request);
    // Two accepted answers, the same text (the wake the first delivery did included).
    let answer = first.answer.unwrap();
    host_shim_testkit::has(&answer.text, "(woke a cold session)");
    assert_eq!(answer.refusal, None);
    assert_eq!(retry.answer.unwrap(), answer);
    // One delivery: the retry is a repeat the inbox recognised by its key.
    assert_eq!(first.deliveries.len(), 1);
    assert_eq!(first.deliveries[0].key, "4:s-metoolu_01A");
    assert!(retry.deliveries.is_empty());
    assert_eq!((retry.stats.deliveries, retry.stats.repeats), (0, 1));
    let target = retry.harness.corpus.session("s-cold").unwrap();
    assert_eq!(
        target
            .messages
            .iter()
            .filter(|m| m
                .text()
                .is_some_and(|t| t.ends_with("once\n--- message ends ---")))
            .count(),
        1
    );
    // Another call id with the same words is a model's retry (SPEC, "Repeats a host
    // should catch"): a repeat within ten minutes. Other words deliver.
    let other = CallRequest {
        call_id: "toolu_01B".into(),
        ..request
    };
    let third = runtime().call(retry.harness, &other);
    assert!(third.deliveries.is_empty());
    assert_eq!((third.stats.deliveries, third.stats.repeats), (0, 1));
    assert_eq!(third.answer.unwrap(), answer);
    let new_words = CallRequest {
        call_id: "toolu_01C".into(),
        arguments: r#"{"session_id": "s-cold", "message": "twice"}"#.into(),
        ..other
    };
    let fourth = runtime().call(third.harness, &new_words);
    assert_eq!(fourth.deliveries.len(), 1);
}

#[test]
fn a_listing_copies_headers_and_titles_only_for_the_rows_shown() {
    let sessions: Vec<host_shim::Session> = (0..10_000)
        .map(|i| host_shim::Session::new(&format!("session-{i:05}"), i))
        .collect();
    let corpus = std::sync::Arc::new(host_shim::Corpus::new(None, sessions));
    let outcome = call(&corpus, "me", "", "sessions_list", r#"{"limit": 20}"#);
    assert!(
        outcome
            .answer
            .unwrap()
            .text
            .contains("\n20 of 10000 considered sessions")
    );
    assert_eq!(
        calls(outcome.stats),
        HostStats {
            header_lists: 1,
            header_batches: 1,
            header_ids_asked: 20,
            title_batches: 1,
            title_ids_asked: 20,
            claim_reads: 1,
            ..untouched()
        }
    );
    // The index: each id once, and 24 bytes of entry per session, nothing more.
    let ids: usize = (0..10_000).map(|i| format!("session-{i:05}").len()).sum();
    assert!(outcome.stats.lowered_bytes < (ids + 24 * 10_000 + 20 * 200) as u64);
}

#[test]
fn a_send_reads_the_callers_surface_index_once_and_at_most_one_whole_message() {
    let corpus = corpus("guard-rails");
    // "me" has a frame at hop 2 under a reply, a reminder and injected text.
    let outcome = call(
        &corpus,
        "me",
        "",
        "sessions_send",
        r#"{"session_id": "peer", "message": "Handing back the schema."}"#,
    );
    assert!(outcome.answer.unwrap().text.contains("| hop=3 | id=m-"));
    assert_eq!(
        calls(outcome.stats),
        HostStats {
            header_gets: 1,
            surface_reads: 1,
            message_batches: 1,
            messages_asked: 1,
            title_batches: 1,
            title_ids_asked: 1,
            send_histories: 1,
            delivery_attempts: 1,
            deliveries: 1,
            ..untouched()
        }
    );
    // A caller whose newest user message is a person's: the index settles it.
    let outcome = call(
        &corpus,
        "reset",
        r#"{"readScope": "all"}"#,
        "sessions_send",
        r#"{"session_id": "peer", "message": "New task."}"#,
    );
    assert!(outcome.answer.unwrap().text.contains("| hop=1 | id=m-"));
    assert_eq!(
        (outcome.stats.surface_reads, outcome.stats.message_batches),
        (1, 0)
    );
}

/// A deployment that runs two plugin versions still stops loops: a frame the 0.4.0
/// plugin wrote (with its `message-id:` line) reaches a 0.3.0 plugin without its id
/// lines, so it counts the frame's hop instead of taking it for a person's message
/// and starting again at hop 1. Likewise a 0.2.0 plugin reads the frame as it knew
/// frames.
#[test]
fn a_released_plugin_counts_the_hops_of_a_current_frame() {
    let corpus = corpus("conversations");
    let send = |host: TestHost, runtime: &Runtime<TestHost>, caller: &str, to: &str| {
        let request = CallRequest {
            caller: caller.to_string(),
            tool: "sessions_send".to_string(),
            arguments: format!(r#"{{"session_id": "{to}", "message": "pass it on"}}"#),
            ..CallRequest::default()
        };
        runtime.call(host, &request)
    };
    // chatty (current) to answerer: hop 1, a frame with an id on answerer's surface.
    let first = send(
        TestHost::new(corpus.clone()),
        runtime(),
        "chatty",
        "answerer",
    );
    let text = first.answer.as_ref().unwrap().text.clone();
    assert!(
        text.starts_with("accepted for answerer | mode=queue | chars=10 | hop=1 | id=m-"),
        "{text}"
    );
    assert!(first.deliveries[0].body.contains("\nmessage-id: m-"));
    // answerer (0.3.0) passes it on: the chain goes on at hop 2.
    let second = send(first.harness, runtime_v0_3_0(), "answerer", "reviewer");
    let text = second.answer.as_ref().unwrap().text.clone();
    assert!(
        text.starts_with("accepted for reviewer | mode=queue | chars=10 | hop=2\n"),
        "{text}"
    );
    // The 0.3.0 plugin's guard stops the chain at the deployment's maxHops.
    let request = CallRequest {
        caller: "reviewer".to_string(),
        settings: r#"{"maxHops": 2}"#.to_string(),
        tool: "sessions_send".to_string(),
        arguments: r#"{"session_id": "chatty", "message": "and on"}"#.to_string(),
        ..CallRequest::default()
    };
    let third = runtime_v0_3_0().call(second.harness, &request);
    let text = third.answer.unwrap().text;
    assert!(
        text.starts_with("sessions_send refused (loop-guard): this message would be hop 3"),
        "{text}"
    );
    // A 0.2.0 plugin reads the current frame without its id line.
    let read = CallRequest {
        caller: "reviewer".to_string(),
        tool: "sessions_read".to_string(),
        arguments: r#"{"session_id": "answerer"}"#.to_string(),
        ..CallRequest::default()
    };
    let old = runtime_v0_2_0()
        .call(third.harness, &read)
        .answer
        .unwrap()
        .text;
    host_shim_testkit::has(&old, "delivery: queue\nhop: 1\n\\--- message begins ---");
    assert!(!old.contains("message-id:"), "{old}");
}

/// Claims through the real component: a claim made by one session keeps another
/// session's write out (the harness asks `check-write`), shows in listings, and ends
/// when released; a plugin before 0.6.0 is never asked.
#[test]
fn a_claim_keeps_other_sessions_writes_out_until_released() {
    let corpus = corpus("harness");
    let host = TestHost::new(corpus.clone());
    let claimed = call_on(
        host,
        "s-live",
        "",
        "sessions_claim",
        r#"{"paths": ["lib.rs"], "reason": "parser rewrite"}"#,
    );
    let answer = claimed.answer.unwrap();
    assert!(answer.text.starts_with("claimed c-"), "{}", answer.text);
    assert!(answer.text.contains("/w/parser/lib.rs"), "{}", answer.text);
    assert_eq!(claimed.stats.claim_writes, 1);

    let paths = vec!["/w/parser/lib.rs".to_string(), "/w/me/notes.md".to_string()];
    let (check, host) = runtime().check_write(claimed.harness, "s-me", "", &paths);
    let host_shim::WriteCheck::Refused(refusal) = check.unwrap() else {
        panic!("the write was not refused");
    };
    assert_eq!(refusal.claims.len(), 1);
    let text = refusal.text;
    assert!(
        text.starts_with(
            "write refused (claimed): /w/parser/lib.rs is claimed by another session:\n- s-live "
        ),
        "{text}"
    );
    host_shim_testkit::has(&text, "\"parser rewrite\"");

    let listed = call_on(host, "s-me", "", "sessions_list", "{}");
    let listing = listed.answer.unwrap().text;
    let row = listing
        .lines()
        .find(|l| l.starts_with("- s-live "))
        .unwrap();
    host_shim_testkit::has(row, " | claims=1");

    let released = call_on(
        listed.harness,
        "s-live",
        "",
        "sessions_claim",
        r#"{"release": true}"#,
    );
    assert!(released.answer.unwrap().text.starts_with("released c-"));
    let (check, host) = runtime().check_write(released.harness, "s-me", "", &paths);
    assert_eq!(check.unwrap(), host_shim::WriteCheck::Allowed);

    let older: Runtime<TestHost> = Runtime::from_component(PLUGIN_V0_5_0).unwrap();
    let (check, _) = older.check_write(host, "s-me", "", &paths);
    assert_eq!(check.unwrap(), host_shim::WriteCheck::Allowed);
}

/// A wake only started (0.6.0's `wake-started`) is never told as "woke": the current
/// plugin says the wake was started and the message waits; each released plugin reads
/// it as a message waiting.
#[test]
fn a_wake_only_started_is_told_as_woke_by_no_version() {
    let corpus = host_shim::Corpus::from_json(
        r#"{"sessions": [
            {"id": "s-me", "created_at": "2026-12-01T00:00:00Z", "live": true},
            {"id": "s-cold", "created_at": "2026-12-01T00:00:00Z", "delivery_state": "wake-started"}
        ]}"#,
        "test",
    )
    .unwrap();
    let corpus = std::sync::Arc::new(corpus);
    let send = CallRequest {
        caller: "s-me".to_string(),
        tool: "sessions_send".to_string(),
        arguments: r#"{"session_id": "s-cold", "message": "hi"}"#.to_string(),
        ..CallRequest::default()
    };
    let versions = [
        PLUGIN_WASM,
        PLUGIN_V0_5_0,
        PLUGIN_V0_4_0,
        PLUGIN_V0_3_0,
        PLUGIN_V0_2_0,
        PLUGIN_V0_1_0,
    ];
    for (i, plugin) in versions.into_iter().enumerate() {
        let runtime: Runtime<TestHost> = Runtime::from_component(plugin).unwrap();
        let report = runtime.call(TestHost::new(corpus.clone()), &send);
        let text = report.answer.unwrap().text;
        assert!(text.starts_with("accepted for s-cold"), "{text}");
        assert!(!text.contains("(woke a cold session)"), "{text}");
        assert_eq!(
            text.contains("(started a wake for a cold session)"),
            i == 0,
            "{text}"
        );
        assert!(!report.deliveries[0].woke);
    }
}
