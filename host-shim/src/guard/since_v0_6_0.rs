//! The 0.6.0 imports, answered by the [`Guard`]: each calls the guard's bounded method
//! of the same name (the current contract's types are the harness's own).

use super::Guard;
use crate::contract::latest::harness::sessions::{claims, inbox, session_query as query};
use crate::contract::latest::{
    Claim, ClaimChange, ClaimSet, Delivered, DeliveryMode, DeliveryRefusal, InboxCount,
    MessageContent, MessageIds, Plugin, SendCounts, SessionHeader, SessionIndex, SurfaceIndex,
    ToolAction, WriteFailure,
};
use crate::harness::Harness;
use crate::inbox::delivery::DeliveryRequest;
use wasmtime::component::{HasSelf, Linker};

super::world_linker!();

impl<H: Harness> query::Host for Guard<H> {
    fn list_sessions(&mut self) -> wasmtime::Result<SessionIndex> {
        Guard::list_sessions(self)
    }

    fn get_session(&mut self, id: String) -> wasmtime::Result<Option<SessionHeader>> {
        Guard::get_session(self, &id)
    }

    fn get_sessions(&mut self, ids: Vec<String>) -> wasmtime::Result<Vec<Option<SessionHeader>>> {
        Guard::get_sessions(self, &ids)
    }

    fn title_snapshots(&mut self, ids: Vec<String>) -> wasmtime::Result<Vec<Option<String>>> {
        Guard::title_snapshots(self, &ids)
    }

    fn get_surface(
        &mut self,
        id: String,
        lead_chars: u32,
    ) -> wasmtime::Result<Option<SurfaceIndex>> {
        Guard::get_surface(self, &id, lead_chars)
    }

    fn get_messages(
        &mut self,
        id: String,
        seqs: Vec<u64>,
    ) -> wasmtime::Result<Vec<Option<MessageContent>>> {
        Guard::get_messages(self, &id, &seqs)
    }

    fn inbox_status(&mut self, target: String, sender: String) -> wasmtime::Result<InboxCount> {
        Guard::inbox_status(self, &target, &sender)
    }

    fn action_seqs(&mut self, id: String) -> wasmtime::Result<Vec<u64>> {
        Guard::action_seqs(self, &id)
    }

    fn get_actions(
        &mut self,
        id: String,
        seqs: Vec<u64>,
    ) -> wasmtime::Result<Vec<Vec<ToolAction>>> {
        Guard::get_actions(self, &id, &seqs)
    }

    fn send_history(
        &mut self,
        sender: String,
        target: String,
        window_minutes: u32,
        limit: u32,
        key: String,
    ) -> wasmtime::Result<SendCounts> {
        let ask = crate::HistoryAsk {
            sender: &sender,
            target: &target,
            window_minutes,
            limit,
            key: &key,
        };
        Guard::send_history(self, &ask)
    }
}

impl<H: Harness> claims::Host for Guard<H> {
    fn read(&mut self) -> wasmtime::Result<Result<ClaimSet, String>> {
        Guard::read_claims(self)
    }

    fn write(
        &mut self,
        revision: u64,
        claims: Vec<Claim>,
        changes: Vec<ClaimChange>,
    ) -> wasmtime::Result<Result<u64, WriteFailure>> {
        Guard::write_claims(self, revision, &claims, &changes)
    }
}

impl<H: Harness> inbox::Host for Guard<H> {
    fn deliver(
        &mut self,
        target: String,
        body: String,
        mode: DeliveryMode,
        may_wake: bool,
        key: String,
        ids: MessageIds,
    ) -> wasmtime::Result<Result<Delivered, DeliveryRefusal>> {
        let request = DeliveryRequest {
            target: &target,
            body: &body,
            mode,
            may_wake,
            key: &key,
            ids: &ids,
        };
        Guard::deliver(self, &request)
    }
}
