//! A plugin of the `plugin` world built for `wasm32-wasip2`, as a stock toolchain
//! builds one: the component imports WASI as well. Its one call tries everything WASI
//! could grant and reports what it got, so a test can show the host granted nothing.

#[cfg(target_arch = "wasm32")]
mod plugin {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "plugin",
    });

    use exports::harness::sessions::tools::{Answer, Guest, ReplyWait, ToolSpec, WriteCheck};

    fn outcome<T: ToString, E: std::fmt::Display>(result: Result<T, E>) -> String {
        match result {
            Ok(value) => format!("ok {}", value.to_string()),
            Err(err) => format!("denied ({err})"),
        }
    }

    struct Probe;

    impl Guest for Probe {
        fn catalog(_settings: String) -> Result<Vec<ToolSpec>, String> {
            Ok(Vec::new())
        }

        fn call(
            _caller: String,
            _call_id: String,
            _settings: String,
            _tool: String,
            _arguments: String,
        ) -> Result<Answer, String> {
            println!("to stdout");
            eprintln!("to stderr");
            let lines = [
                format!(
                    "file: {}",
                    outcome(std::fs::read_to_string("/etc/hostname").map(|t| t.len()))
                ),
                format!(
                    "dir: {}",
                    outcome(std::fs::read_dir("/").map(|d| d.count()))
                ),
                format!(
                    "cwd file: {}",
                    outcome(std::fs::read_to_string("Cargo.toml").map(|t| t.len()))
                ),
                format!("HOME: {}", outcome(std::env::var("HOME"))),
                format!("variables: {}", std::env::vars().count()),
                format!("arguments: {}", std::env::args().count()),
                format!(
                    "tcp: {}",
                    outcome(std::net::TcpStream::connect("127.0.0.1:9").map(|_| "connected"))
                ),
            ];
            Ok(Answer {
                text: lines.join("\n"),
                refusal: None,
                await_reply: None,
            })
        }

        fn reply_awaited(
            _caller: String,
            _settings: String,
            accepted: String,
            _wait: ReplyWait,
            _reply: Option<String>,
        ) -> Result<Answer, String> {
            Ok(Answer {
                text: accepted,
                refusal: None,
                await_reply: None,
            })
        }

        fn check_write(
            _caller: String,
            _settings: String,
            _paths: Vec<String>,
        ) -> Result<WriteCheck, String> {
            Ok(WriteCheck::Allowed)
        }
    }

    export!(Probe);
}
