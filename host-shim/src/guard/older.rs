//! What the imports of every contract before 0.4.0 share, answered once here and
//! converted by each version's own module: headers in an older shape, a surface and
//! messages with 0.4.0 frames shown without their id lines (an older plugin counts the
//! hop of a frame it knows), and a delivery whose frame carries no ids.

use super::Guard;
use crate::contract::frames::{older_message, older_surface};
use crate::contract::latest::{
    Delivered, DeliveryMode, DeliveryRefusal, MessageContent, SessionHeader, SurfaceIndex,
};
use crate::harness::Harness;
use crate::inbox::delivery::DeliveryRequest;

impl<H: Harness> Guard<H> {
    /// One header, in an older version's shape.
    pub(crate) fn older_header<T: From<SessionHeader>>(
        &mut self,
        id: &str,
    ) -> wasmtime::Result<Option<T>> {
        Ok(self.get_session(id)?.map(Into::into))
    }

    /// A batch of headers, in an older version's shape.
    pub(crate) fn older_headers<T: From<SessionHeader>>(
        &mut self,
        ids: &[String],
    ) -> wasmtime::Result<Vec<Option<T>>> {
        let headers = self.get_sessions(ids)?;
        Ok(headers.into_iter().map(|h| h.map(Into::into)).collect())
    }

    /// A surface's index as an older plugin reads it (its frames fetched whole in one
    /// batch when any message may be one).
    pub(crate) fn older_surface_index(
        &mut self,
        id: &str,
        lead_chars: u32,
    ) -> wasmtime::Result<Option<SurfaceIndex>> {
        let Some(index) = self.get_surface(id, lead_chars)? else {
            return Ok(None);
        };
        older_surface(index, lead_chars, |seqs| self.get_messages(id, seqs)).map(Some)
    }

    /// Whole messages as an older plugin reads them.
    pub(crate) fn older_messages(
        &mut self,
        id: &str,
        seqs: &[u64],
    ) -> wasmtime::Result<Vec<Option<MessageContent>>> {
        let messages = self.get_messages(id, seqs)?;
        Ok(messages.into_iter().map(|m| m.map(older_message)).collect())
    }

    /// A delivery from a plugin whose frames carry no ids.
    pub(crate) fn deliver_without_ids(
        &mut self,
        (target, body): (&str, &str),
        mode: DeliveryMode,
        may_wake: bool,
        key: &str,
    ) -> wasmtime::Result<Result<Delivered, DeliveryRefusal>> {
        self.deliver(
            &DeliveryRequest::new(target, body, mode)
                .may_wake(may_wake)
                .key(key),
        )
    }
}

/// The session lookups every contract before 0.4.0 answers alike (its types differ by
/// version only in name, so no `with:` can share them): inside a version's
/// `impl query::Host for Guard<H>`, with that version's `query` module in scope; a
/// surface's index and a message converted to its shape by `$surface` (given the
/// index and the lead's length) and `$message`.
macro_rules! older_session_lookups {
    (surface: $surface:expr, message: $message:expr $(,)?) => {
        fn get_surface(
            &mut self,
            id: String,
            lead_chars: u32,
        ) -> wasmtime::Result<Option<query::SurfaceIndex>> {
            let index = self.older_surface_index(&id, lead_chars)?;
            let convert = $surface;
            Ok(index.map(|index| convert(index, lead_chars)))
        }

        fn get_messages(
            &mut self,
            id: String,
            seqs: Vec<u64>,
        ) -> wasmtime::Result<Vec<Option<query::MessageContent>>> {
            let messages = self.older_messages(&id, &seqs)?;
            Ok(messages.into_iter().map(|m| m.map($message)).collect())
        }

        fn list_sessions(&mut self) -> wasmtime::Result<query::SessionIndex> {
            Ok(Guard::list_sessions(self)?.into())
        }

        fn get_session(&mut self, id: String) -> wasmtime::Result<Option<query::SessionHeader>> {
            self.older_header(&id)
        }

        fn get_sessions(
            &mut self,
            ids: Vec<String>,
        ) -> wasmtime::Result<Vec<Option<query::SessionHeader>>> {
            self.older_headers(&ids)
        }

        fn title_snapshots(&mut self, ids: Vec<String>) -> wasmtime::Result<Vec<Option<String>>> {
            Guard::title_snapshots(self, &ids)
        }
    };
}
pub(crate) use older_session_lookups;

/// `inbox::Host` for a contract before 0.4.0 (its frames carry no ids): a delivery
/// answered by the guard, its answer converted by `$delivered` (from the current
/// `Delivered`). 0.1.0's deliveries take no key.
macro_rules! older_inbox {
    (without key, $delivered:expr) => {
        $crate::guard::older::older_inbox!(@ $delivered; ; "");
    };
    ($delivered:expr) => {
        $crate::guard::older::older_inbox!(@ $delivered; key: String; &key);
    };
    (@ $delivered:expr; $($key:ident: $key_type:ty)?; $key_value:expr) => {
        impl<H: Harness> inbox::Host for Guard<H> {
            fn deliver(
                &mut self,
                target: String,
                body: String,
                mode: inbox::DeliveryMode,
                may_wake: bool,
                $($key: $key_type,)?
            ) -> wasmtime::Result<Result<inbox::Delivered, inbox::DeliveryRefusal>> {
                let words = (target.as_str(), body.as_str());
                let answer = self.deliver_without_ids(words, mode.into(), may_wake, $key_value)?;
                Ok(answer.map($delivered).map_err(Into::into))
            }
        }
    };
}
pub(crate) use older_inbox;
