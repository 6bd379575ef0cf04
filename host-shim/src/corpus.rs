//! The in-memory corpus: sessions, titles and model surfaces read from JSON, and the
//! host side of both interfaces over it ([`CorpusHost`]), with counters of every host
//! call so tests and benchmarks can see what the plugin asked for.

use anyhow::{Context, Result};
use serde::{Deserialize, Deserializer, Serialize};
use session_tools::host::{
    ContentPart, Delivered, DeliveryMode, DeliveryRefusal, Inbox, ModelSurface, Role,
    SessionHeader, SessionQuery, SurfaceMessage,
};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// A corpus file: `{"caller": ID, "sessions": [...]}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusFile {
    #[serde(default)]
    caller: Option<String>,
    #[serde(default)]
    sessions: Vec<SessionFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionFile {
    id: String,
    #[serde(deserialize_with = "rfc3339_ms")]
    created_at: i64,
    #[serde(default)]
    live: bool,
    #[serde(default)]
    parent: Option<String>,
    #[serde(default)]
    origin: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    preset: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    captured_through_seq: Option<u64>,
    #[serde(default)]
    reject: Option<String>,
    #[serde(default)]
    refuse_delivery: Option<RefusalFile>,
    #[serde(default)]
    messages: Vec<MessageFile>,
}

/// A controller answer a corpus can script, for the refusals a header cannot predict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RefusalFile {
    /// The controller lost the session between its header and the delivery.
    NotFound,
    /// The controller will not wake this session, even where waking is allowed.
    WouldNeedWake,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageFile {
    seq: u64,
    role: RoleFile,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    replaced: bool,
    #[serde(default)]
    parts: Vec<PartFile>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RoleFile {
    User,
    Assistant,
    System,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum PartFile {
    Text(String),
    // Any JSON; only the kind is kept (the plugin never sees the content).
    Reasoning(serde::de::IgnoredAny),
    ToolCall(serde::de::IgnoredAny),
    ToolResult(serde::de::IgnoredAny),
}

fn rfc3339_ms<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    let text = String::deserialize(deserializer)?;
    chrono::DateTime::parse_from_rfc3339(&text)
        .map(|time| time.timestamp_millis())
        .map_err(|err| {
            serde::de::Error::custom(format!(
                "expected an RFC 3339 time such as \"2026-01-31T12:00:00Z\", got {text:?} ({err})"
            ))
        })
}

/// One session as the host knows it.
#[derive(Clone, Debug)]
pub struct Session {
    pub header: SessionHeader,
    pub title: Option<String>,
    pub surface: ModelSurface,
    /// The controller refuses deliveries to this session with this reason.
    pub reject: Option<String>,
    /// The controller answers every delivery to this session with this refusal.
    pub refuse_delivery: Option<RefusalFile>,
}

impl From<SessionFile> for Session {
    fn from(file: SessionFile) -> Session {
        let messages: Vec<SurfaceMessage> = file
            .messages
            .into_iter()
            .map(|message| {
                let role = match message.role {
                    RoleFile::User => Role::User,
                    RoleFile::Assistant => Role::Assistant,
                    RoleFile::System => Role::System,
                };
                SurfaceMessage {
                    seq: message.seq,
                    role,
                    source: message.source.unwrap_or_else(|| role.as_str().to_string()),
                    replaced: message.replaced,
                    parts: message
                        .parts
                        .into_iter()
                        .map(|part| match part {
                            PartFile::Text(text) => ContentPart::Text(text),
                            // Only the kind crosses to the plugin (see the WIT).
                            PartFile::Reasoning(_) => ContentPart::Reasoning,
                            PartFile::ToolCall(_) => ContentPart::ToolCall,
                            PartFile::ToolResult(_) => ContentPart::ToolOutput,
                        })
                        .collect(),
                }
            })
            .collect();
        let last_seq = messages.iter().map(|m| m.seq).max().unwrap_or(0);
        Session {
            header: SessionHeader {
                id: file.id,
                created_at_ms: file.created_at,
                live: file.live,
                parent_id: file.parent,
                origin: file.origin.unwrap_or_else(|| "user".to_string()),
                cwd: file.cwd,
                preset: file.preset,
            },
            title: file.title,
            surface: ModelSurface {
                messages,
                captured_through_seq: file.captured_through_seq.unwrap_or(last_seq),
            },
            reject: file.reject,
            refuse_delivery: file.refuse_delivery,
        }
    }
}

/// Every session of a harness, indexed by id (the first of repeated ids wins a
/// lookup; a listing shows what the host holds, repeats included).
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    caller: Option<String>,
    sessions: Vec<Session>,
    index: HashMap<String, usize>,
}

impl Corpus {
    pub fn new(caller: Option<String>, sessions: Vec<Session>) -> Corpus {
        let mut index = HashMap::with_capacity(sessions.len());
        for (position, session) in sessions.iter().enumerate() {
            index.entry(session.header.id.clone()).or_insert(position);
        }
        Corpus {
            caller,
            sessions,
            index,
        }
    }

    /// Parses corpus JSON; `origin` names the source in errors (a file path, say).
    /// An error names the field's path and what was expected.
    pub fn from_json(text: &str, origin: &str) -> Result<Corpus> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let file: CorpusFile =
            serde_path_to_error::deserialize(&mut deserializer).map_err(|err| {
                let path = err.path().to_string();
                anyhow::anyhow!("{origin}: at {path}: {}", err.into_inner())
            })?;
        Ok(Corpus::new(
            file.caller,
            file.sessions.into_iter().map(Session::from).collect(),
        ))
    }

    /// Reads a corpus file.
    pub fn from_file(path: &Path) -> Result<Corpus> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read corpus file {}", path.display()))?;
        Corpus::from_json(&text, &path.display().to_string())
    }

    /// The corpus the demo and the CLI use when no file is given.
    pub fn demo() -> Corpus {
        Corpus::from_json(DEMO_CORPUS, "the embedded demo corpus")
            .expect("the embedded demo corpus is valid")
    }

    /// The session the corpus file names as the caller, if any.
    pub fn caller(&self) -> Option<&str> {
        self.caller.as_deref()
    }

    pub fn sessions(&self) -> &[Session] {
        &self.sessions
    }

    pub fn session(&self, id: &str) -> Option<&Session> {
        self.index.get(id).map(|&position| &self.sessions[position])
    }

    /// Applies accepted deliveries, as a harness would after a call: a woken target
    /// is live, and the delivered body is its newest (user-kind) message.
    pub fn apply(&mut self, deliveries: &[Delivery]) {
        for delivery in deliveries {
            let Some(&position) = self.index.get(&delivery.target) else {
                continue;
            };
            let session = &mut self.sessions[position];
            session.header.live = true;
            let seq = session.surface.captured_through_seq.max(
                session
                    .surface
                    .messages
                    .iter()
                    .map(|m| m.seq)
                    .max()
                    .unwrap_or(0),
            ) + 1;
            session.surface.messages.push(SurfaceMessage {
                seq,
                role: Role::User,
                source: "user".to_string(),
                replaced: false,
                parts: vec![ContentPart::Text(delivery.body.clone())],
            });
            session.surface.captured_through_seq = seq;
        }
    }
}

/// The embedded demo corpus (`host-shim/demo/corpus.json`).
pub const DEMO_CORPUS: &str = include_str!("../demo/corpus.json");

/// One message the inbox accepted, as `--deliveries` writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    pub target: String,
    pub mode: String,
    pub body: String,
    pub woke: bool,
}

/// Counts of host calls made during one tool call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HostStats {
    /// `list-sessions` calls.
    pub header_lists: u32,
    /// `get-session` calls.
    pub header_gets: u32,
    /// `title-snapshots` calls.
    pub title_batches: u32,
    /// Ids asked for across all title batches.
    pub title_ids_asked: u32,
    /// `get-surface` calls.
    pub surface_reads: u32,
    /// `deliver` calls, accepted or not.
    pub delivery_attempts: u32,
    /// Deliveries the inbox accepted.
    pub deliveries: u32,
    /// Cold sessions woken by a delivery.
    pub wakes: u32,
}

/// Misbehaviours a test can ask the host to simulate, to show the plugin copes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostFaults {
    /// Answer title batches with one entry too few.
    pub short_title_batches: bool,
    /// Answer title batches with one entry too many.
    pub long_title_batches: bool,
}

/// The host side of both interfaces over a corpus, for one tool call.
pub struct CorpusHost {
    corpus: Arc<Corpus>,
    pub faults: HostFaults,
    pub stats: HostStats,
    pub deliveries: Vec<Delivery>,
}

impl CorpusHost {
    pub fn new(corpus: Arc<Corpus>) -> CorpusHost {
        CorpusHost {
            corpus,
            faults: HostFaults::default(),
            stats: HostStats::default(),
            deliveries: Vec::new(),
        }
    }
}

fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl SessionQuery for CorpusHost {
    fn list_sessions(&mut self) -> Vec<SessionHeader> {
        self.stats.header_lists += 1;
        self.corpus
            .sessions
            .iter()
            .map(|s| s.header.clone())
            .collect()
    }

    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        self.stats.header_gets += 1;
        self.corpus.session(id).map(|s| s.header.clone())
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        self.stats.title_batches += 1;
        self.stats.title_ids_asked = self
            .stats
            .title_ids_asked
            .saturating_add(saturating_u32(ids.len()));
        let mut titles: Vec<Option<String>> = ids
            .iter()
            .map(|id| self.corpus.session(id).and_then(|s| s.title.clone()))
            .collect();
        if self.faults.short_title_batches {
            titles.pop();
        }
        if self.faults.long_title_batches {
            titles.push(Some("a title nobody asked for".to_string()));
        }
        titles
    }

    fn get_surface(&mut self, id: &str) -> Option<ModelSurface> {
        self.stats.surface_reads += 1;
        self.corpus.session(id).map(|s| s.surface.clone())
    }
}

impl Inbox for CorpusHost {
    fn deliver(
        &mut self,
        target: &str,
        body: &str,
        mode: DeliveryMode,
        may_wake: bool,
    ) -> Result<Delivered, DeliveryRefusal> {
        self.stats.delivery_attempts += 1;
        let Some(session) = self.corpus.session(target) else {
            return Err(DeliveryRefusal::NotFound);
        };
        match session.refuse_delivery {
            Some(RefusalFile::NotFound) => return Err(DeliveryRefusal::NotFound),
            Some(RefusalFile::WouldNeedWake) => return Err(DeliveryRefusal::WouldNeedWake),
            None => {}
        }
        if let Some(reason) = &session.reject {
            return Err(DeliveryRefusal::Rejected(reason.clone()));
        }
        let woke = !session.header.live;
        if woke && !may_wake {
            return Err(DeliveryRefusal::WouldNeedWake);
        }
        self.stats.deliveries += 1;
        if woke {
            self.stats.wakes += 1;
        }
        self.deliveries.push(Delivery {
            target: target.to_string(),
            mode: mode.as_str().to_string(),
            body: body.to_string(),
            woke,
        });
        Ok(Delivered { woke })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_optional_fields() {
        let corpus = Corpus::from_json(
            r#"{"sessions":[{"id":"a","created_at":"2026-01-01T00:00:01Z",
                "messages":[{"seq":4,"role":"assistant","parts":[{"text":"hi"},{"tool_call":{"name":"x"}}]}]}]}"#,
            "test",
        )
        .unwrap();
        let session = corpus.session("a").unwrap();
        assert_eq!(session.header.created_at_ms, 1_767_225_601_000);
        assert_eq!(session.header.origin, "user");
        assert!(!session.header.live);
        assert_eq!(session.surface.captured_through_seq, 4);
        let message = &session.surface.messages[0];
        assert_eq!(message.source, "assistant");
        assert_eq!(message.parts[1], ContentPart::ToolCall);
    }

    #[test]
    fn errors_name_the_origin_the_path_and_the_expectation() {
        let err = Corpus::from_json(
            r#"{"sessions":[{"id":"a","created_at":"2026-01-01T00:00:00Z"},{"id":"b","created_at":"yesterday"}]}"#,
            "corpus.json",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("corpus.json: at sessions[1].created_at: expected an RFC 3339 time"),
            "{err}"
        );
        let err = Corpus::from_json(
            r#"{"sessions":[{"id":"a","created_at":"2026-01-01T00:00:00Z","messages":[{"seq":1,"role":"robot"}]}]}"#,
            "c.json",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("c.json: at sessions[0].messages[0].role: unknown variant `robot`"),
            "{err}"
        );
        let err = Corpus::from_json(
            r#"{"sessions":[{"id":"a","created_at":"2026-01-01T00:00:00Z","titel":"x"}]}"#,
            "c.json",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("unknown field `titel`"), "{err}");
    }

    #[test]
    fn the_demo_corpus_loads() {
        assert!(Corpus::demo().sessions().len() >= 5);
    }

    #[test]
    fn a_cold_target_is_woken_only_when_allowed() {
        let corpus = Arc::new(Corpus::demo());
        let cold = corpus
            .sessions()
            .iter()
            .find(|s| !s.header.live && !s.header.is_subagent())
            .unwrap();
        let id = cold.header.id.clone();
        let mut host = CorpusHost::new(corpus);
        assert_eq!(
            host.deliver(&id, "x", DeliveryMode::Queue, false),
            Err(DeliveryRefusal::WouldNeedWake)
        );
        assert_eq!(
            host.deliver(&id, "x", DeliveryMode::Queue, true),
            Ok(Delivered { woke: true })
        );
        assert_eq!(
            (
                host.stats.delivery_attempts,
                host.stats.deliveries,
                host.stats.wakes
            ),
            (2, 1, 1)
        );
    }
}
