//! The 0.4.0 imports, answered by the [`Guard`]: `session-query` is the current one
//! (the same trait, linked under 0.4.0's name), so only `inbox.deliver` differs, by
//! what 0.4.0 has no word for (`undecided`, converted by the 0.4.0 contract module).

use super::Guard;
use crate::contract::latest::harness::sessions::session_query;
use crate::contract::since_v0_4_0::harness::sessions::inbox;
use crate::harness::Harness;
use crate::inbox::delivery::DeliveryRequest;
use wasmtime::component::{HasSelf, Linker};

/// The imports of a version whose `session-query` is the current one and whose
/// `inbox` is its own, keyed and carrying ids (0.4.0, 0.5.0): `add_to_linker`, and
/// `inbox.deliver` as the current delivery, its answer converted by the version's
/// contract module. The invoking module has `inbox`, `session_query`, `Guard`,
/// `Harness`, `DeliveryRequest`, `HasSelf` and `Linker`.
macro_rules! keyed_inbox_host {
    ($version:literal) => {
        /// Adds the version's imports to `linker`, each answered by the [`Guard`]
        /// `guard` finds in the store's data.
        pub fn add_to_linker<T: 'static, H: Harness>(
            linker: &mut Linker<T>,
            guard: fn(&mut T) -> &mut Guard<H>,
        ) -> wasmtime::Result<()> {
            // The world's own `add_to_linker` would link the shared interface under
            // the current version's name, which the version's plugin does not import.
            let mut query =
                linker.instance(concat!("harness:sessions/session-query@", $version))?;
            session_query::add_to_linker_instance::<T, HasSelf<Guard<H>>>(&mut query, guard)?;
            inbox::add_to_linker::<T, HasSelf<Guard<H>>>(linker, guard)
        }

        impl<H: Harness> inbox::Host for Guard<H> {
            fn deliver(
                &mut self,
                target: String,
                body: String,
                mode: inbox::DeliveryMode,
                may_wake: bool,
                key: String,
                ids: inbox::MessageIds,
            ) -> wasmtime::Result<Result<inbox::Delivered, inbox::DeliveryRefusal>> {
                let ids = ids.into();
                let request = DeliveryRequest {
                    target: &target,
                    body: &body,
                    mode: mode.into(),
                    may_wake,
                    key: &key,
                    ids: &ids,
                };
                let answer = Guard::deliver(self, &request)?;
                Ok(answer.map(Into::into).map_err(Into::into))
            }
        }
    };
}
pub(super) use keyed_inbox_host;

keyed_inbox_host!("0.4.0");
