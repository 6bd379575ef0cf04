//! The 0.4.0 imports, answered by the [`Guard`]: `session-query` is the current one
//! (the same trait, linked under 0.4.0's name), so only `inbox.deliver` differs, by
//! what 0.4.0 has no word for (`undecided`, converted by the 0.4.0 contract module).

use super::Guard;
use crate::contract::latest::harness::sessions::session_query;
use crate::contract::since_v0_4_0::harness::sessions::inbox;
use crate::harness::Harness;
use crate::inbox::delivery::DeliveryRequest;
use wasmtime::component::{HasSelf, Linker};

/// Adds the 0.4.0 imports to `linker`, each answered by the [`Guard`] `guard` finds
/// in the store's data.
pub fn add_to_linker<T: 'static, H: Harness>(
    linker: &mut Linker<T>,
    guard: fn(&mut T) -> &mut Guard<H>,
) -> wasmtime::Result<()> {
    // The world's own `add_to_linker` would link the shared interface under the
    // current version's name, which a 0.4.0 plugin does not import.
    let mut query = linker.instance("harness:sessions/session-query@0.4.0")?;
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
