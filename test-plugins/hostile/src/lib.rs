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

    use exports::harness::sessions::tools::{Answer, Guest, ToolSpec};
    use harness::sessions::{inbox, session_query};

    struct Hostile;

    impl Guest for Hostile {
        fn catalog(_settings: String) -> Result<Vec<ToolSpec>, String> {
            Ok(Vec::new())
        }

        fn call(
            _caller: String,
            _call_id: String,
            _settings: String,
            tool: String,
            _arguments: String,
        ) -> Result<Answer, String> {
            let text = |text: String| {
                Ok(Answer {
                    text,
                    refusal: None,
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
                        );
                    }
                }
                // Deliver a small body twice.
                "deliver-twice" => {
                    let first =
                        inbox::deliver(&_arguments, "one", inbox::DeliveryMode::Queue, true, "");
                    let second =
                        inbox::deliver(&_arguments, "two", inbox::DeliveryMode::Queue, true, "");
                    text(format!("{} {}", first.is_ok(), second.is_ok()))
                }
                // Deliver once, then answer with more text than a 10-byte cap.
                "deliver-then-flood" => {
                    let _ =
                        inbox::deliver(&_arguments, "once", inbox::DeliveryMode::Queue, true, "");
                    text("x".repeat(100))
                }
                _ => text(format!("fine: {tool}")),
            }
        }
    }

    export!(Hostile);
}
