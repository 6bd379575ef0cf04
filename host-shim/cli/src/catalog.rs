//! `host-shim catalog`: the plugin's tools as JSON, as a client would list them.

use crate::call::call_error;
use crate::flags::{plugin_bytes, read_settings};
use anyhow::Result;
use host_shim::{CorpusHost, Runtime, RuntimeOptions};
use std::path::{Path, PathBuf};

pub fn catalog(
    settings_path: Option<&Path>,
    plugin: Option<&Path>,
    cache_dir: Option<PathBuf>,
) -> Result<()> {
    let settings = read_settings(settings_path)?;
    let options = RuntimeOptions {
        cache_dir,
        ..RuntimeOptions::default()
    };
    let runtime: Runtime<CorpusHost> = Runtime::with_options(&plugin_bytes(plugin)?, &options)?;
    crate::flags::say_wasi(&runtime);
    let tools = runtime
        .catalog(&settings)
        .map_err(|err| call_error(settings_path, err))?;
    let json: Vec<serde_json::Value> = tools
        .into_iter()
        .map(|tool| {
            let schema: serde_json::Value =
                serde_json::from_str(&tool.input_schema).unwrap_or(tool.input_schema.into());
            let mut shown = serde_json::json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": schema,
            });
            if let Some(annotations) = &tool.annotations {
                shown["annotations"] = annotations.to_mcp_json();
            }
            shown
        })
        .collect();
    println!("{}", serde_json::to_string_pretty(&json)?);
    Ok(())
}
