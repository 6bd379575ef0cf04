//! The thin edge between the component model and the tool core: wit-bindgen types in,
//! core types out, and back. No tool logic lives here.

wit_bindgen::generate!({
    path: "../wit",
    world: "plugin",
});

use crate::host;
use crate::text::{Answer as CoreAnswer, RefusalCode, ReplyWait as CoreReplyWait};
use exports::harness::sessions::tools::{
    Answer, Guest, Refusal, ReplyWait, ToolAnnotations, ToolSpec, WriteCheck, WriteRefusal,
};
use harness::sessions::{claims, inbox, session_query as query};

/// The imports of the world, as the core's host traits.
struct Imports;

fn header(h: query::SessionHeader) -> host::SessionHeader {
    host::SessionHeader {
        id: h.id,
        created_at_ms: h.created_at_ms,
        live: h.live,
        parent_id: h.parent_id,
        origin: h.origin,
        cwd: h.cwd,
        preset: h.preset,
        inbound: match h.inbound {
            query::InboundPolicy::Accept => host::Inbound::Accept,
            query::InboundPolicy::Hold => host::Inbound::Hold,
            query::InboundPolicy::Refuse => host::Inbound::Refuse,
        },
        machine: h.machine,
    }
}

fn role(role: query::Role) -> host::Role {
    match role {
        query::Role::User => host::Role::User,
        query::Role::Assistant => host::Role::Assistant,
        query::Role::System => host::Role::System,
    }
}

impl host::SessionQuery for Imports {
    fn list_sessions(&mut self) -> host::SessionIndex {
        let index = query::list_sessions();
        host::SessionIndex {
            ids: index.ids,
            entries: index
                .entries
                .into_iter()
                .map(|e| host::SessionEntry {
                    id_len: e.id_len,
                    created_at_ms: e.created_at_ms,
                    live: e.live,
                    subagent: e.subagent,
                })
                .collect(),
        }
    }

    fn get_session(&mut self, id: &str) -> Option<host::SessionHeader> {
        query::get_session(id).map(header)
    }

    fn get_sessions(&mut self, ids: &[String]) -> Vec<Option<host::SessionHeader>> {
        query::get_sessions(ids)
            .into_iter()
            .map(|h| h.map(header))
            .collect()
    }

    fn title_snapshots(&mut self, ids: &[String]) -> Vec<Option<String>> {
        query::title_snapshots(ids)
    }

    fn get_surface(&mut self, id: &str, lead_chars: u32) -> Option<host::SurfaceIndex> {
        query::get_surface(id, lead_chars).map(|surface| host::SurfaceIndex {
            messages: surface
                .messages
                .into_iter()
                .map(|m| host::MessageEntry {
                    seq: m.seq,
                    role: role(m.role),
                    replaced: m.replaced,
                    injected: m.injected,
                    source_lead_len: m.source_lead_len,
                    text_lead_len: m.text_lead_len,
                    text_chars: m.text_chars,
                })
                .collect(),
            source_leads: surface.source_leads,
            text_leads: surface.text_leads,
            captured_through_seq: surface.captured_through_seq,
        })
    }

    fn get_messages(&mut self, id: &str, seqs: &[u64]) -> Vec<Option<host::MessageContent>> {
        query::get_messages(id, seqs)
            .into_iter()
            .map(|m| {
                m.map(|m| host::MessageContent {
                    source: m.source,
                    text: m.text,
                    injected: m.injected,
                })
            })
            .collect()
    }

    fn action_seqs(&mut self, id: &str) -> Vec<u64> {
        query::action_seqs(id)
    }

    fn get_actions(&mut self, id: &str, seqs: &[u64]) -> Vec<Vec<host::ToolAction>> {
        (query::get_actions(id, seqs).into_iter())
            .map(|calls| {
                (calls.into_iter())
                    .map(|call| host::ToolAction {
                        name: call.name,
                        input: call.input,
                        status: match call.status {
                            query::ActionStatus::Ok => host::ActionStatus::Ok,
                            query::ActionStatus::Error => host::ActionStatus::Error,
                            query::ActionStatus::Running => host::ActionStatus::Running,
                        },
                    })
                    .collect()
            })
            .collect()
    }

    fn send_history(
        &mut self,
        sender: &str,
        target: &str,
        window_minutes: u32,
        limit: u32,
        key: &str,
    ) -> host::SendCounts {
        let history = query::send_history(sender, target, window_minutes, limit, key);
        host::SendCounts {
            now_ms: history.now_ms,
            to_target: history.to_target,
            to_any: history.to_any,
            to_target_times: history.to_target_times,
            to_any_times: history.to_any_times,
            key_accepted: history.key_accepted,
        }
    }

    fn inbox_status(&mut self, target: &str, sender: &str) -> host::InboxCount {
        let count = query::inbox_status(target, sender);
        host::InboxCount {
            waiting: count.waiting,
            handed_over: count.handed_over,
        }
    }
}

fn claim_from(c: claims::Claim) -> host::Claim {
    host::Claim {
        id: c.id,
        holder: c.holder,
        paths: c.paths,
        mode: match c.mode {
            claims::ClaimMode::Exclusive => host::ClaimMode::Exclusive,
            claims::ClaimMode::Shared => host::ClaimMode::Shared,
        },
        reason: c.reason,
        made_at_ms: c.made_at_ms,
        ends_at_ms: c.ends_at_ms,
        seen_live_ms: c.seen_live_ms,
    }
}

fn claim_to(c: &host::Claim) -> claims::Claim {
    claims::Claim {
        id: c.id.clone(),
        holder: c.holder.clone(),
        paths: c.paths.clone(),
        mode: match c.mode {
            host::ClaimMode::Exclusive => claims::ClaimMode::Exclusive,
            host::ClaimMode::Shared => claims::ClaimMode::Shared,
        },
        reason: c.reason.clone(),
        made_at_ms: c.made_at_ms,
        ends_at_ms: c.ends_at_ms,
        seen_live_ms: c.seen_live_ms,
    }
}

impl host::Claims for Imports {
    fn read_claims(&mut self) -> Result<host::ClaimSet, String> {
        let set = claims::read()?;
        Ok(host::ClaimSet {
            claims: set.claims.into_iter().map(claim_from).collect(),
            revision: set.revision,
            now_ms: set.now_ms,
        })
    }

    fn write_claims(
        &mut self,
        revision: u64,
        written: &[host::Claim],
        changes: &[host::ClaimChange],
    ) -> Result<u64, host::WriteFailure> {
        let written: Vec<claims::Claim> = written.iter().map(claim_to).collect();
        let changes: Vec<claims::ClaimChange> = (changes.iter())
            .map(|change| claims::ClaimChange {
                kind: match change.kind {
                    host::ChangeKind::Made => claims::ChangeKind::Made,
                    host::ChangeKind::Released => claims::ChangeKind::Released,
                    host::ChangeKind::Lapsed => claims::ChangeKind::Lapsed,
                },
                claim: claim_to(&change.claim),
            })
            .collect();
        claims::write(revision, &written, &changes).map_err(|failure| match failure {
            claims::WriteFailure::Stale => host::WriteFailure::Stale,
            claims::WriteFailure::Unavailable(why) => host::WriteFailure::Unavailable(why),
        })
    }
}

impl host::Inbox for Imports {
    fn deliver(
        &mut self,
        target: &str,
        body: &str,
        mode: host::DeliveryMode,
        may_wake: bool,
        key: &str,
        ids: &host::MessageIds,
    ) -> Result<host::Delivered, host::DeliveryRefusal> {
        let mode = match mode {
            host::DeliveryMode::Queue => inbox::DeliveryMode::Queue,
            host::DeliveryMode::Steer => inbox::DeliveryMode::Steer,
        };
        let ids = inbox::MessageIds {
            message_id: ids.message_id.clone(),
            in_reply_to: ids.in_reply_to.clone(),
        };
        match inbox::deliver(target, body, mode, may_wake, key, &ids) {
            Ok(delivered) => Ok(host::Delivered {
                woke: delivered.woke,
                repeat: delivered.repeat,
                state: match delivered.state {
                    inbox::DeliveryState::Waiting => host::DeliveryState::Waiting,
                    inbox::DeliveryState::HandedOver => host::DeliveryState::HandedOver,
                    inbox::DeliveryState::Held => host::DeliveryState::Held,
                    inbox::DeliveryState::WakeStarted => host::DeliveryState::WakeStarted,
                },
                message_id: delivered.message_id,
            }),
            Err(inbox::DeliveryRefusal::NotFound) => Err(host::DeliveryRefusal::NotFound),
            Err(inbox::DeliveryRefusal::WouldNeedWake) => Err(host::DeliveryRefusal::WouldNeedWake),
            Err(inbox::DeliveryRefusal::Rejected(reason)) => {
                Err(host::DeliveryRefusal::Rejected(reason))
            }
            Err(inbox::DeliveryRefusal::RefusedByTarget) => {
                Err(host::DeliveryRefusal::RefusedByTarget)
            }
            Err(inbox::DeliveryRefusal::Undecided(reason)) => {
                Err(host::DeliveryRefusal::Undecided(reason))
            }
        }
    }
}

fn answer(answer: CoreAnswer) -> Answer {
    Answer {
        text: answer.text,
        refusal: answer.refusal.map(|code| match code {
            RefusalCode::InvalidArguments => Refusal::InvalidArguments,
            RefusalCode::UnknownTool => Refusal::UnknownTool,
            RefusalCode::NotFound => Refusal::NotFound,
            RefusalCode::NotMessageable => Refusal::NotMessageable,
            RefusalCode::NotPermitted => Refusal::NotPermitted,
            RefusalCode::RefusedByTarget => Refusal::RefusedByTarget,
            RefusalCode::LoopGuard => Refusal::LoopGuard,
            RefusalCode::RateLimited => Refusal::RateLimited,
            RefusalCode::ResumeDisabled => Refusal::ResumeDisabled,
            RefusalCode::EmptyBody => Refusal::EmptyBody,
            RefusalCode::Rejected => Refusal::Rejected,
            RefusalCode::Undecided => Refusal::Undecided,
            RefusalCode::Claimed => Refusal::Claimed,
        }),
        await_reply: answer.await_reply.map(|wait| ReplyWait {
            target: wait.target,
            message_id: wait.message_id,
            seconds: wait.seconds,
        }),
    }
}

struct Plugin;

impl Guest for Plugin {
    fn catalog(settings: String) -> Result<Vec<ToolSpec>, String> {
        Ok(crate::catalog_for(&settings)?
            .into_iter()
            .map(|tool| ToolSpec {
                name: tool.name.to_string(),
                description: tool.description.to_string(),
                input_schema: tool.input_schema,
                annotations: ToolAnnotations {
                    title: tool.annotations.title.to_string(),
                    read_only_hint: tool.annotations.read_only,
                    destructive_hint: tool.annotations.destructive,
                    idempotent_hint: tool.annotations.idempotent,
                    open_world_hint: tool.annotations.open_world,
                },
            })
            .collect())
    }

    fn call(
        caller_id: String,
        call_id: String,
        settings: String,
        tool_name: String,
        arguments: String,
    ) -> Result<Answer, String> {
        crate::call_with_settings(
            &mut Imports,
            &caller_id,
            &call_id,
            &settings,
            &tool_name,
            &arguments,
        )
        .map(answer)
    }

    fn reply_awaited(
        _caller_id: String,
        settings: String,
        accepted: String,
        wait: ReplyWait,
        reply: Option<String>,
    ) -> Result<Answer, String> {
        let wait = CoreReplyWait {
            target: wait.target,
            message_id: wait.message_id,
            seconds: wait.seconds,
        };
        crate::reply_awaited_with_settings(&settings, &accepted, &wait, reply.as_deref())
            .map(answer)
    }

    fn check_write(
        caller_id: String,
        settings: String,
        paths: Vec<String>,
    ) -> Result<WriteCheck, String> {
        Ok(
            match crate::check_write_with_settings(&mut Imports, &caller_id, &settings, &paths)? {
                crate::WriteCheck::Allowed => WriteCheck::Allowed,
                crate::WriteCheck::Refused { text, claims } => {
                    WriteCheck::Refused(WriteRefusal { text, claims })
                }
                crate::WriteCheck::Unchecked(text) => WriteCheck::Unchecked(text),
            },
        )
    }
}

export!(Plugin);
