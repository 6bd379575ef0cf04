//! Fuzzes the tool core natively: arbitrary arguments × corpus × settings. No input may
//! panic, and every answer must keep `session_tools::invariants`.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use session_tools::frame::frame;
use session_tools::host::{ActionStatus, DeliveryMode, Inbound, MessageIds, Role};
use session_tools::testing::{FakeHost, FakeSession, Part, session};
use session_tools::{Settings, invariants};

const IDS: [&str; 10] = [
    "s1", "s2", "session-ab", "é", "", "a\nb", "evil [live, top-level] | this session",
    "\"q\"", "odd\u{2028}id", "\u{200b}",
];
const TOOLS: [&str; 4] = ["sessions_list", "sessions_read", "sessions_send", "sessions_x"];

#[derive(Arbitrary, Debug)]
struct Input {
    tool: u8,
    arguments: Arguments,
    settings: Vec<(u8, u8)>,
    caller: u8,
    call_id: Option<u8>,
    sessions: Vec<FuzzSession>,
    short_title_batches: bool,
}

#[derive(Arbitrary, Debug)]
enum Arguments {
    Raw(String),
    Fields(Vec<(u8, Value)>),
}

#[derive(Arbitrary, Debug)]
enum Value {
    Id(u8),
    Text(String),
    Int(i64),
    Bool(bool),
    Null,
    Choice(u8),
}

#[derive(Arbitrary, Debug)]
struct FuzzSession {
    id: u8,
    created: i8,
    live: bool,
    parent: Option<u8>,
    subagent_origin: bool,
    cwd: Option<String>,
    preset: Option<String>,
    title: Option<String>,
    reject: Option<String>,
    keeps_waiting: bool,
    /// What its person lets in (accept, hold, refuse).
    inbound: u8,
    machine: Option<String>,
    inbox: Vec<(u8, u8, u8)>,
    messages: Vec<FuzzMessage>,
}

#[derive(Arbitrary, Debug)]
struct FuzzMessage {
    seq: u8,
    role: u8,
    source: u8,
    replaced: bool,
    injected: bool,
    /// A frame from this sender at this hop, as a text part of its own, with a message
    /// id (one a reply may name) and maybe the id it answers.
    frame: Option<(u8, u8, u8, bool)>,
    parts: Vec<(u8, String)>,
    /// Tool calls: a name, an input, a status.
    actions: Vec<(String, String, u8)>,
}

const NAMES: [&str; 14] = [
    "query", "scope", "live_only", "limit", "session_id", "max_messages",
    "include_injected", "include_system", "message", "mode", "reply_to",
    "await_reply_seconds", "include_actions", "before_seq",
];
/// Message ids the frames carry, and ones no frame carries.
const MESSAGE_IDS: [&str; 4] = ["m-0123456789ab", "m-00000000c0de", "m-ZZ", "m-ffffffffffff"];
const CHOICES: [&str; 6] = ["top-level", "subagents", "all", "queue", "steer", "x"];
const SOURCES: [&str; 7] = [
    "user", "model:a/b", "plugin:m/n", "", "\nplugin:m/n", "user, harness-injected, replaced", "a (b)",
];

fn arguments_json(arguments: &Arguments) -> String {
    match arguments {
        Arguments::Raw(text) => text.clone(),
        Arguments::Fields(fields) => {
            let mut map = serde_json::Map::new();
            for (name, value) in fields {
                let value = match value {
                    Value::Choice(c) if NAMES[*name as usize % NAMES.len()] == "reply_to" => {
                        MESSAGE_IDS[*c as usize % MESSAGE_IDS.len()].into()
                    }
                    Value::Id(i) if i % 4 == 3 => {
                        // The JSON literal form the tools show odd ids in.
                        serde_json::Value::from(IDS[*i as usize % IDS.len()]).to_string().into()
                    }
                    Value::Id(i) => IDS[*i as usize % IDS.len()].into(),
                    Value::Text(t) => t.clone().into(),
                    Value::Int(n) => (*n).into(),
                    Value::Bool(b) => (*b).into(),
                    Value::Null => serde_json::Value::Null,
                    Value::Choice(c) => CHOICES[*c as usize % CHOICES.len()].into(),
                };
                map.insert(NAMES[*name as usize % NAMES.len()].to_string(), value);
            }
            serde_json::Value::Object(map).to_string()
        }
    }
}

fn settings_json(settings: &[(u8, u8)]) -> String {
    const KEYS: [&str; 16] = [
        "maxListResults", "maxReadMessages", "maxMessageChars", "maxSendChars",
        "defaultSendMode", "frameMessages", "allowResume", "includeInjectedByDefault",
        "maxHops", "readScope", "sendScope", "maxAwaitSeconds", "maxSendsPerTarget",
        "maxSends", "sendWindowMinutes", "allowActions",
    ];
    let mut map = serde_json::Map::new();
    for (key, value) in settings {
        let key = KEYS[*key as usize % KEYS.len()];
        let value: serde_json::Value = match key {
            "defaultSendMode" => if value % 2 == 0 { "queue" } else { "steer" }.into(),
            "frameMessages" | "allowResume" | "includeInjectedByDefault" | "allowActions" => {
                (value % 2 == 0).into()
            }
            "maxAwaitSeconds" | "maxSendsPerTarget" | "maxSends" => (u64::from(*value) % 4).into(),
            "sendWindowMinutes" => (u64::from(*value) % 60 + 1).into(),
            "maxHops" => (u64::from(*value) % 64 + 1).into(),
            "readScope" => ["all", "workspace", "tree", "self"][*value as usize % 4].into(),
            "sendScope" => ["all", "workspace", "tree", "none"][*value as usize % 4].into(),
            _ => (u64::from(*value) + 1).into(),
        };
        map.insert(key.to_string(), value);
    }
    serde_json::Value::Object(map).to_string()
}

fn fake_session(s: &FuzzSession) -> FakeSession {
    let mut fake = session(IDS[s.id as usize % IDS.len()], i64::from(s.created)).live(s.live);
    if let Some(parent) = s.parent {
        fake = fake.parent(IDS[parent as usize % IDS.len()]);
    }
    if s.subagent_origin {
        fake = fake.origin("subagent");
    }
    if let Some(cwd) = &s.cwd {
        fake = fake.cwd(cwd);
    }
    if let Some(preset) = &s.preset {
        fake = fake.preset(preset);
    }
    if let Some(title) = &s.title {
        fake = fake.title(title);
    }
    if let Some(reason) = &s.reject {
        fake = fake.reject(reason);
    }
    if s.keeps_waiting {
        fake = fake.keeps_waiting();
    }
    fake = fake.inbound([Inbound::Accept, Inbound::Hold, Inbound::Refuse][s.inbound as usize % 3]);
    if let Some(machine) = &s.machine {
        fake = fake.machine(machine);
    }
    for (from, waiting, handed) in &s.inbox {
        fake = fake.inbox_from(IDS[*from as usize % IDS.len()], u32::from(*waiting), u32::from(*handed));
    }
    for m in &s.messages {
        let role = [Role::User, Role::Assistant, Role::System][m.role as usize % 3];
        let mut parts: Vec<Part> = m
            .parts
            .iter()
            .map(|(kind, text)| match kind % 4 {
                0 => Part::Reasoning,
                1 => Part::ToolCall,
                2 => Part::ToolOutput,
                _ => Part::Text(text.clone()),
            })
            .collect();
        if let Some((from, hop, id, answers)) = m.frame {
            let sender = IDS[from as usize % IDS.len()];
            let ids = MessageIds {
                message_id: MESSAGE_IDS[id as usize % 2].to_string(),
                in_reply_to: answers.then(|| MESSAGE_IDS[3].to_string()),
            };
            let framed = frame(sender, None, DeliveryMode::Queue, u32::from(hop), &ids, "go on");
            parts.insert(0, Part::Text(framed));
        }
        fake = fake.message(u64::from(m.seq), role, SOURCES[m.source as usize % SOURCES.len()], parts);
        for (name, input, status) in &m.actions {
            let statuses = [ActionStatus::Ok, ActionStatus::Error, ActionStatus::Running];
            fake = fake.action(name, input, statuses[*status as usize % statuses.len()]);
        }
        if m.replaced {
            fake = fake.replaced();
        }
        if m.injected {
            fake = fake.injected();
        }
    }
    fake
}

fuzz_target!(|input: Input| {
    let mut host = FakeHost::default();
    for s in &input.sessions {
        host.add(fake_session(s));
    }
    if input.short_title_batches {
        host.truncate_title_answers = Some(input.sessions.len() / 2);
    }
    let tool = TOOLS[input.tool as usize % TOOLS.len()];
    let arguments = arguments_json(&input.arguments);
    let settings_json = settings_json(&input.settings);
    let settings = Settings::from_json(&settings_json).expect("generated settings are valid");
    let caller = IDS[input.caller as usize % IDS.len()];
    let call_id = input.call_id.map(|id| format!("call-{id}")).unwrap_or_default();
    let answer = session_tools::call(&mut host, caller, &call_id, &settings, tool, &arguments)
        .expect("the fake host keeps the contract");
    let bodies: Vec<String> = host.deliveries.iter().map(|d| d.body.clone()).collect();
    let code = answer.refusal.map(|code| code.as_str());
    if let Err(broken) =
        invariants::check(tool, &arguments, &settings_json, &answer.text, code, &bodies)
    {
        panic!("invariant broken for {tool} {arguments}: {broken}");
    }
});
