//! A harness added by adding files: a toy in-memory harness (this file only), listed
//! and messaged beside the corpus in one listing, through the plugin, with deliveries
//! taking the kit's one delivery path over the in-memory inbox backend. Nothing of the
//! corpus, Claude Code or Codex changes for it.

use host_shim::harnesses::surface::Surface;
use host_shim::inbox::{Desk, Recipient, Waiting};
use host_shim::{
    Corpus, CorpusHost, Delivered, DeliveryRefusal, DeliveryState, Harnesses, InboxCount,
    MemoryInbox, MessageContent, Session, SessionHeader, SessionIndex, SessionQuery, Store,
    SurfaceIndex,
};
use std::sync::Arc;

/// The toy: sessions that hold the messages handed to them, which is at once.
struct Toy {
    sessions: Vec<(SessionHeader, Vec<String>)>,
    desk: Desk,
}

impl Toy {
    fn new(ids: &[&str]) -> Toy {
        let header = |id: &str| SessionHeader {
            live: true,
            cwd: Some("/toy".to_string()),
            preset: Some("toy-1".to_string()),
            ..SessionHeader::top_level(id, 1_800_000_000_000)
        };
        Toy {
            sessions: ids.iter().map(|id| (header(id), Vec::new())).collect(),
            desk: Desk::new(Arc::new(MemoryInbox::new())),
        }
    }

    fn find(&self, id: &str) -> Option<&(SessionHeader, Vec<String>)> {
        self.sessions.iter().find(|(h, _)| h.id == id)
    }
}

impl Store for Toy {
    fn harness(&self) -> &'static str {
        "toy"
    }
}

impl SessionQuery for Toy {
    fn list_sessions(&mut self) -> SessionIndex {
        SessionIndex::of(self.sessions.iter().map(|(h, _)| h))
    }
    fn get_session(&mut self, id: &str) -> Option<SessionHeader> {
        self.find(id).map(|(h, _)| h.clone())
    }
    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<SessionHeader>> {
        ids.iter().map(|id| self.get_session(id)).collect()
    }
    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        ids.iter()
            .map(|id| self.find(id).map(|(h, _)| format!("Toy {}", h.id)))
            .collect()
    }
    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<SurfaceIndex> {
        let (_, messages) = self.find(id)?;
        Some(Surface::of_person_texts(messages).index(lead_chars))
    }
    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<MessageContent>> {
        let surface = self.find(id).map(|(_, m)| Surface::of_person_texts(m));
        Surface::messages(surface.as_ref(), seqs)
    }
    fn inbox_status(&mut self, target: &str, sender: &str) -> InboxCount {
        let count = self.desk.inbox().count_from(target, sender);
        count.unwrap_or(InboxCount::NONE)
    }
}

/// The toy's part of the delivery path: every session takes messages, at once.
impl Recipient for Toy {
    type Plan = ();

    fn desk(&mut self) -> &mut Desk {
        &mut self.desk
    }
    fn resolve(&mut self, target: &str) -> Result<bool, DeliveryRefusal> {
        (self.find(target).map(|(h, _)| h.live)).ok_or(DeliveryRefusal::NotFound)
    }
    fn accepted(&mut self, waiting: &Waiting, (): ()) -> Delivered {
        let target = waiting.message.target.clone();
        let inbox = self.desk.inbox().clone();
        let mut handed = Vec::new();
        let _ = inbox.hand_over(&target, vec![waiting.clone()], &mut |messages| {
            handed.extend(messages.iter().map(|m| m.body.clone()));
            Ok(())
        });
        if let Some((_, messages)) = self.sessions.iter_mut().find(|(h, _)| h.id == target) {
            messages.extend(handed);
        }
        Delivered {
            woke: false,
            repeat: false,
            state: DeliveryState::HandedOver,
            message_id: waiting.message.message_id.clone(),
        }
    }
}

fn corpus() -> CorpusHost {
    let mut me = Session::new("corpus-me", 1_700_000_000_000);
    me.header.live = true;
    me.title = Some("A corpus session".to_string());
    CorpusHost::new(Arc::new(Corpus::new(None, vec![me])))
}

fn call(harnesses: Harnesses, caller: &str, tool: &str, arguments: &str) -> (String, Harnesses) {
    let call_id = format!("call-{tool}-{caller}");
    host_shim_testkit::call_through_plugin(harnesses, caller, &call_id, tool, arguments)
}

/// A hook that refuses a call before the plugin sees it (Gemini's stamps the arguments,
/// so it cannot pass altered text on) says what the plugin says of it, to the letter.
#[test]
fn a_hooks_words_for_text_that_is_not_unicode_are_the_plugins() {
    let one = || Harnesses::new(vec![Box::new(corpus())]);
    let message = r#"{"session_id": "corpus-me", "message": "x\ud800"}"#;
    let (said, _) = call(one(), "corpus-me", "sessions_send", message);
    assert_eq!(said, host_shim::json::not_unicode_refusal("message"));
    let name = r#"{"session_id": "corpus-me", "m\udc00": "x"}"#;
    let (said, _) = call(one(), "corpus-me", "sessions_send", name);
    assert_eq!(said, host_shim::json::not_unicode_refusal(""));
}

#[test]
fn a_toy_harness_beside_the_corpus_is_listed_and_messaged_in_one_listing() {
    let both = Harnesses::new(vec![Box::new(corpus()), Box::new(Toy::new(&["toy-a"]))]);
    let (list, both) = call(both, "corpus-me", "sessions_list", r#"{"scope": "all"}"#);
    host_shim_testkit::has(
        &list,
        "- toy-a [live, top-level] | cwd=/toy | preset=toy-1\n  Toy toy-a",
    );
    host_shim_testkit::has(&list, "- corpus-me [live, top-level] | this session");
    // The corpus session messages the toy's; the toy has it at once.
    let send = r#"{"session_id": "toy-a", "message": "Hello from the corpus."}"#;
    let (sent, mut both) = call(both, "corpus-me", "sessions_send", send);
    host_shim_testkit::begins(&sent, "accepted for toy-a | mode=queue");
    let toy = both.find_mut::<Toy>().unwrap();
    assert!(toy.sessions[0].1[0].contains("\nHello from the corpus.\n"));
    // And the toy's session messages the corpus's, and reads its own surface back.
    let send = r#"{"session_id": "corpus-me", "message": "Hello back."}"#;
    let (sent, both) = call(both, "toy-a", "sessions_send", send);
    assert!(sent.starts_with("accepted for corpus-me"), "{sent}");
    let (read, _) = call(
        both,
        "corpus-me",
        "sessions_read",
        r#"{"session_id": "toy-a"}"#,
    );
    host_shim_testkit::has(&read, "your messages to it: 1 handed over");
    host_shim_testkit::has(&read, "Hello from the corpus.");
}
