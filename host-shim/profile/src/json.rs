//! A harness's JSON configuration file, read and written back in its own style: keys in
//! their order (a value of its own, so the library's `serde_json` keeps its sorted
//! maps), the file's indent, and its last newline or none.

use anyhow::{Result, bail};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::path::Path;

/// A JSON value whose objects keep their keys in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Object),
}

/// A JSON object's entries, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Object(Vec<(String, Json)>);

impl Object {
    pub fn get(&self, key: &str) -> Option<&Json> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets `key`, in its place when it is there, else last.
    pub fn insert(&mut self, key: &str, value: Json) {
        match self.get_mut(key) {
            Some(slot) => *slot = value,
            None => self.0.push((key.to_string(), value)),
        }
    }

    pub fn remove(&mut self, key: &str) {
        self.0.retain(|(k, _)| k != key);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// An object of these entries, in this order.
    pub fn of<const N: usize>(entries: [(&str, Json); N]) -> Object {
        Object(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )
    }
}

impl Json {
    pub fn str(text: &str) -> Json {
        Json::String(text.to_string())
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(text) => Some(text),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(object) => object.get(key),
            _ => None,
        }
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => n.serialize(serializer),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => items.serialize(serializer),
            Json::Object(object) => {
                let mut map = serializer.serialize_map(Some(object.0.len()))?;
                for (key, value) in &object.0 {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Json, D::Error> {
        struct JsonVisitor;
        impl<'de> Visitor<'de> for JsonVisitor {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Json, E> {
                Ok(serde_json::Number::from_f64(n).map_or(Json::Null, Json::Number))
            }
            fn visit_str<E>(self, s: &str) -> Result<Json, E> {
                Ok(Json::String(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> Result<Json, E> {
                Ok(Json::String(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut object = Object::default();
                while let Some((key, value)) = map.next_entry::<String, Json>()? {
                    // A repeated key: the last one counts, as in every JSON reader.
                    object.insert(&key, value);
                }
                Ok(Json::Object(object))
            }
        }
        deserializer.deserialize_any(JsonVisitor)
    }
}

/// A JSON file as read: its bytes (none when it is not there) and its object.
pub struct JsonFile {
    pub bytes: Option<String>,
    pub object: Object,
}

impl JsonFile {
    /// Reads `path`; a file that is not there is an empty object. A file that is not a
    /// JSON object is an error that names it and says what to do.
    pub fn read(path: &Path) -> Result<JsonFile> {
        let bytes = match std::fs::read_to_string(path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(JsonFile {
                    bytes: None,
                    object: Object::default(),
                });
            }
            Err(err) => bail!("cannot read {}: {err}", path.display()),
        };
        if bytes.trim().is_empty() {
            return Ok(JsonFile {
                bytes: Some(bytes),
                object: Object::default(),
            });
        }
        match serde_json::from_str::<Json>(&bytes) {
            Ok(Json::Object(object)) => Ok(JsonFile {
                bytes: Some(bytes),
                object,
            }),
            Ok(_) => bail!(
                "{} is not a JSON object; nothing was changed. Fix or move it, then run setup again",
                path.display()
            ),
            Err(err) => bail!(
                "{} is not valid JSON ({err}); nothing was changed. Fix or move it, then run setup again",
                path.display()
            ),
        }
    }

    /// The object as this file would be written: in the file's indent (two spaces for
    /// a new file) and ending as the file did (a new file with a newline).
    pub fn render(&self) -> String {
        let indent = self.bytes.as_deref().and_then(indent_of).unwrap_or("  ");
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
        Json::Object(self.object.clone())
            .serialize(&mut serializer)
            .expect("a JSON value serializes");
        let mut text = String::from_utf8(out).expect("serde_json writes UTF-8");
        if self.bytes.as_deref().is_none_or(|b| b.ends_with('\n')) {
            text.push('\n');
        }
        text
    }

    /// The rendered object, or no file when the object is empty (all it held was
    /// what setup had added).
    pub fn after(&self) -> Option<String> {
        (!self.object.is_empty()).then(|| self.render())
    }
}

/// The white space before the first indented line's key.
fn indent_of(bytes: &str) -> Option<&str> {
    let line = bytes.lines().nth(1)?;
    let indent = &line[..line.len() - line.trim_start().len()];
    (!indent.is_empty()).then_some(indent)
}

/// The object at `key` in `object`, made when missing; an error naming `file` when it
/// is there and not an object.
pub fn object_at<'a>(object: &'a mut Object, key: &str, file: &Path) -> Result<&'a mut Object> {
    if object.get(key).is_none() {
        object.insert(key, Json::Object(Object::default()));
    }
    match object.get_mut(key) {
        Some(Json::Object(inner)) => Ok(inner),
        _ => bail!(
            "\"{key}\" in {} is not a JSON object; nothing was changed. Fix it, then run setup again",
            file.display()
        ),
    }
}

/// The array at `key` in `object`, made when missing; an error naming `file` when it is
/// there and not an array.
pub fn array_at<'a>(object: &'a mut Object, key: &str, file: &Path) -> Result<&'a mut Vec<Json>> {
    if object.get(key).is_none() {
        object.insert(key, Json::Array(Vec::new()));
    }
    match object.get_mut(key) {
        Some(Json::Array(inner)) => Ok(inner),
        _ => bail!(
            "\"{key}\" in {} is not a JSON array; nothing was changed. Fix it, then run setup again",
            file.display()
        ),
    }
}

/// Drops `key` from `object` when its value is an empty object or array.
pub fn drop_if_empty(object: &mut Object, key: &str) {
    let empty = match object.get(key) {
        Some(Json::Object(inner)) => inner.is_empty(),
        Some(Json::Array(inner)) => inner.is_empty(),
        _ => false,
    };
    if empty {
        object.remove(key);
    }
}

/// Takes the server `name` out of `config`'s `mcpServers` when it is setup's (its
/// command is a `host-shim`), dropping `mcpServers` once empty; a server of that name
/// that is someone else's is left. An `mcpServers` that is not an object is named.
pub fn remove_our_server(config: &mut Object, name: &str, file: &Path) -> Result<()> {
    let Some(servers) = config.get_mut("mcpServers") else {
        return Ok(());
    };
    let Json::Object(servers) = servers else {
        anyhow::bail!(
            "\"mcpServers\" in {} is not a JSON object; nothing was changed",
            file.display()
        );
    };
    let ours = servers
        .get(name)
        .and_then(|s| s.get("command"))
        .and_then(Json::as_str)
        .and_then(|c| Path::new(c).file_name())
        .is_some_and(|n| n == "host-shim");
    if ours {
        servers.remove(name);
        drop_if_empty(config, "mcpServers");
    }
    Ok(())
}

/// The command and arguments of the server `name` in `config`'s `mcpServers` (no
/// command: not there).
pub fn server_in(config: &Object, name: &str) -> (Option<String>, Vec<String>) {
    command_and_args((config.get("mcpServers")).and_then(|servers| servers.get(name)))
}

/// The command and arguments of an MCP server's entry (`{"command", "args"}`; no
/// command: no server).
pub fn command_and_args(server: Option<&Json>) -> (Option<String>, Vec<String>) {
    let command = server.and_then(|s| s.get("command")).and_then(Json::as_str);
    let args = match server.and_then(|s| s.get("args")) {
        Some(Json::Array(args)) => (args.iter())
            .filter_map(Json::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    (command.map(str::to_string), args)
}
