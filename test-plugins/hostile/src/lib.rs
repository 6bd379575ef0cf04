//! A plugin for the `plugin` world that misbehaves on purpose; the tool name picks the
//! misbehaviour. The host-shim's tests load it to show that each is stopped inside its
//! limit and that the runtime serves a good call right after. Built only for wasm, by
//! `test-plugins/artifacts` (a test-only crate). The deliver misbehaviours deliver to
//! the session named by the call's arguments text.

#[cfg(target_arch = "wasm32")]
mod plugin {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "plugin",
    });

    use exports::harness::sessions::tools::{
        Answer, Guest, ReplyWait, ToolAnnotations, ToolSpec, WriteCheck, WriteRefusal,
    };
    use harness::sessions::{claims, inbox, session_query};

    struct Hostile;

    fn no_ids() -> inbox::MessageIds {
        inbox::MessageIds {
            message_id: String::new(),
            in_reply_to: None,
        }
    }

    impl Guest for Hostile {
        fn catalog(settings: String) -> Result<Vec<ToolSpec>, String> {
            // Settings "flood" ask for 16 MiB of tool specs.
            if settings == "flood" {
                let spec = ToolSpec {
                    name: "t".repeat(1 << 20),
                    description: String::new(),
                    input_schema: "{}".to_string(),
                    annotations: ToolAnnotations {
                        title: String::new(),
                        read_only_hint: true,
                        destructive_hint: None,
                        idempotent_hint: None,
                        open_world_hint: false,
                    },
                };
                return Ok(vec![spec; 16]);
            }
            // Settings "title-flood": small specs, each with a 1 MiB title.
            if settings == "title-flood" {
                let spec = ToolSpec {
                    name: "t".to_string(),
                    description: String::new(),
                    input_schema: "{}".to_string(),
                    annotations: ToolAnnotations {
                        title: "t".repeat(1 << 20),
                        read_only_hint: true,
                        destructive_hint: None,
                        idempotent_hint: None,
                        open_world_hint: false,
                    },
                };
                return Ok(vec![spec; 16]);
            }
            Ok(Vec::new())
        }

        fn call(
            _caller: String,
            _call_id: String,
            settings: String,
            tool: String,
            _arguments: String,
        ) -> Result<Answer, String> {
            let text = |text: String| {
                Ok(Answer {
                    text,
                    refusal: None,
                    await_reply: None,
                })
            };
            match tool.as_str() {
                "spin" => loop {
                    core::hint::black_box(0u64);
                },
                "allocate" => {
                    let mut hoard: Vec<Vec<u8>> = Vec::new();
                    loop {
                        hoard.push(core::hint::black_box(vec![7u8; 1 << 20]));
                    }
                }
                "flood" => text("x".repeat(4 << 20)),
                "trap" => panic!("deliberate trap"),
                // Read past the end of linear memory (4 GiB minus 16 bytes).
                "out-of-bounds" => {
                    let far = core::hint::black_box(0xFFFF_FFF0usize) as *const u64;
                    // SAFETY: none; the host must stop this read.
                    let value = unsafe { core::ptr::read_volatile(far) };
                    text(format!("read {value}"))
                }
                "hammer" => loop {
                    core::hint::black_box(session_query::list_sessions());
                },
                // Deliver 1 MiB bodies to the caller's target until stopped.
                "deliver-flood" => {
                    let body = "x".repeat(1 << 20);
                    loop {
                        let _ = inbox::deliver(
                            &_arguments,
                            &body,
                            inbox::DeliveryMode::Queue,
                            true,
                            "",
                            &no_ids(),
                        );
                    }
                }
                // Deliver a small body twice.
                // Writes the claims again and again, as a plugin stuck in its retry.
                "claim-writes" => {
                    for _ in 0..100 {
                        let _ = claims::write(0, &[], &[]);
                    }
                    text("wrote the claims 100 times".to_string())
                }
                "deliver-twice" => {
                    let first = inbox::deliver(
                        &_arguments,
                        "one",
                        inbox::DeliveryMode::Queue,
                        true,
                        "",
                        &no_ids(),
                    );
                    let second = inbox::deliver(
                        &_arguments,
                        "two",
                        inbox::DeliveryMode::Queue,
                        true,
                        "",
                        &no_ids(),
                    );
                    text(format!("{} {}", first.is_ok(), second.is_ok()))
                }
                // Deliver once, then answer with more text than a 10-byte cap.
                "deliver-then-flood" => {
                    let _ = inbox::deliver(
                        &_arguments,
                        "once",
                        inbox::DeliveryMode::Queue,
                        true,
                        "",
                        &no_ids(),
                    );
                    text("x".repeat(100))
                }
                // Deliver to a session that does not exist, each time under a new key
                // of the length the arguments give, until stopped.
                "refused-deliver-flood" => {
                    let key = "k".repeat(_arguments.parse().unwrap_or(8));
                    for n in 0u64.. {
                        let _ = inbox::deliver(
                            "no-such-session",
                            "x",
                            inbox::DeliveryMode::Queue,
                            true,
                            &format!("{n}{key}"),
                            &no_ids(),
                        );
                    }
                    text(String::new())
                }
                // Ask for the session named by the arguments 100,000 times in one
                // batch of each kind (its newest message's seq for get-messages).
                "repeat-batch" => {
                    let ids = vec![_arguments.clone(); 100_000];
                    let headers = session_query::get_sessions(&ids);
                    let titles = session_query::title_snapshots(&ids);
                    let seq = session_query::get_surface(&_arguments, 1)
                        .and_then(|s| s.messages.last().map(|m| m.seq))
                        .unwrap_or(0);
                    let messages = session_query::get_messages(&_arguments, &vec![seq; 100_000]);
                    text(format!(
                        "{} {} {}",
                        headers.len(),
                        titles.len(),
                        messages.iter().flatten().count()
                    ))
                }
                // Ask for inbox counts with ids of the length the arguments give,
                // until stopped.
                "status-flood" => {
                    let id = "s".repeat(_arguments.parse().unwrap_or(1 << 20));
                    loop {
                        core::hint::black_box(session_query::inbox_status(&id, &id));
                    }
                }
                // Deliver to a target of 1 MiB.
                "deliver-long-target" => {
                    let target = "t".repeat(1 << 20);
                    let answer = inbox::deliver(
                        &target,
                        "x",
                        inbox::DeliveryMode::Queue,
                        true,
                        "",
                        &no_ids(),
                    );
                    text(format!("{:?}", answer.is_ok()))
                }
                // An error of 4,400,000 bytes in 200,000 lines.
                "error-flood" => Err("an error line of text\n".repeat(200_000)),
                // Deliver the settings text under one fixed key.
                "deliver-keyed" => {
                    let answer = inbox::deliver(
                        &_arguments,
                        &settings,
                        inbox::DeliveryMode::Queue,
                        true,
                        "9:fixed-key",
                        &no_ids(),
                    );
                    text(format!("{:?}", answer.map(|d| d.repeat)))
                }
                // Ask the host to await a reply for longer than any wait it allows.
                "await-forever" => Ok(Answer {
                    text: "accepted".to_string(),
                    refusal: None,
                    await_reply: Some(ReplyWait {
                        target: _arguments.clone(),
                        message_id: "m-000000000000".to_string(),
                        seconds: u32::MAX,
                    }),
                }),
                _ => text(format!("fine: {tool}")),
            }
        }

        fn reply_awaited(
            _caller: String,
            _settings: String,
            accepted: String,
            wait: ReplyWait,
            reply: Option<String>,
        ) -> Result<Answer, String> {
            Ok(Answer {
                text: format!("{accepted} / waited {} s / reply {reply:?}", wait.seconds),
                refusal: None,
                await_reply: None,
            })
        }

        fn check_write(
            _caller: String,
            _settings: String,
            paths: Vec<String>,
        ) -> Result<WriteCheck, String> {
            Ok(WriteCheck::Refused(WriteRefusal {
                text: format!("refused {} paths", paths.len()),
                claims: Vec::new(),
            }))
        }
    }

    export!(Hostile);
}
