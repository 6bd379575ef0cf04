//! A plugin for the `plugin` world that misbehaves on purpose; the tool name picks the
//! misbehaviour. The host-shim's tests load it to show that each is stopped inside its
//! limit and that the runtime serves a good call right after. Built only for wasm.

#[cfg(target_arch = "wasm32")]
mod plugin {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "plugin",
    });

    use exports::harness::sessions::tools::{Guest, ToolSpec};
    use harness::sessions::session_query;

    struct Hostile;

    impl Guest for Hostile {
        fn catalog(_settings: String) -> Result<Vec<ToolSpec>, String> {
            Ok(Vec::new())
        }

        fn call(
            _caller: String,
            _settings: String,
            tool: String,
            _arguments: String,
        ) -> Result<String, String> {
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
                "flood" => Ok("x".repeat(4 << 20)),
                "trap" => panic!("deliberate trap"),
                "hammer" => loop {
                    core::hint::black_box(session_query::list_sessions());
                },
                _ => Ok(format!("fine: {tool}")),
            }
        }
    }

    export!(Hostile);
}
