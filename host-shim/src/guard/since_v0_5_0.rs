//! The 0.5.0 imports, answered by the [`Guard`]: `session-query` and `inbox` are the
//! current ones (the same traits, linked under 0.5.0's names); 0.5.0 imports no claims.

use super::Guard;
use crate::contract::latest::harness::sessions::{inbox, session_query};
use crate::harness::Harness;
use wasmtime::component::{HasSelf, Linker};

/// Adds the 0.5.0 imports to `linker`, each answered by the [`Guard`] `guard` finds
/// in the store's data.
pub fn add_to_linker<T: 'static, H: Harness>(
    linker: &mut Linker<T>,
    guard: fn(&mut T) -> &mut Guard<H>,
) -> wasmtime::Result<()> {
    // The world's own `add_to_linker` would link the shared interfaces under the
    // current version's names, which a 0.5.0 plugin does not import.
    let mut query = linker.instance("harness:sessions/session-query@0.5.0")?;
    session_query::add_to_linker_instance::<T, HasSelf<Guard<H>>>(&mut query, guard)?;
    let mut delivery = linker.instance("harness:sessions/inbox@0.5.0")?;
    inbox::add_to_linker_instance::<T, HasSelf<Guard<H>>>(&mut delivery, guard)
}
