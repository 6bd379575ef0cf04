//! One enum over the contract versions a host serves: a component is linked and
//! pre-instantiated for the version it exports, and every call goes through the
//! version's own module ([`crate::since_v0_1_0`], [`crate::since_v0_2_0`],
//! [`crate::since_v0_3_0`]). Adding a version is one module and one arm here.
//!
//! This is also the lower layer for a harness that already runs wasmtime: it adds the
//! plugin's imports to its own [`Linker`] over its own store data (which holds a
//! [`Guard`] around its harness), as `wasmtime_wasi::p2::add_to_linker_sync` does, and
//! calls [`PluginPre::call`] in its own [`Store`]. [`crate::Runtime`] is the
//! convenience on top (engine, limits, pool, cache).

use crate::bindings::{self, Answer, ContractVersion, Tool};
use crate::guard::Guard;
use crate::harness::Harness;
use crate::runtime::CallRequest;
use crate::{since_v0_1_0, since_v0_2_0, since_v0_3_0};
use wasmtime::Store;
use wasmtime::component::{InstancePre, Linker};

/// Adds the imports of contract `version` to `linker`; `guard` finds the [`Guard`] in
/// the store's data.
pub fn add_to_linker<T: 'static, H: Harness>(
    linker: &mut Linker<T>,
    version: ContractVersion,
    guard: fn(&mut T) -> &mut Guard<H>,
) -> wasmtime::Result<()> {
    match version {
        ContractVersion::V0_1_0 => since_v0_1_0::add_to_linker(linker, guard),
        ContractVersion::V0_2_0 => since_v0_2_0::add_to_linker(linker, guard),
        ContractVersion::V0_3_0 => since_v0_3_0::add_to_linker(linker, guard),
    }
}

/// A plugin pre-instantiated for the contract version it was built against.
pub enum PluginPre<T: 'static> {
    V0_1_0(since_v0_1_0::PluginPre<T>),
    V0_2_0(since_v0_2_0::PluginPre<T>),
    V0_3_0(bindings::PluginPre<T>),
}

impl<T: 'static> PluginPre<T> {
    /// Wraps `instance_pre` (from a linker [`add_to_linker`] prepared for `version`).
    pub fn new(version: ContractVersion, instance_pre: InstancePre<T>) -> wasmtime::Result<Self> {
        Ok(match version {
            ContractVersion::V0_1_0 => {
                PluginPre::V0_1_0(since_v0_1_0::PluginPre::new(instance_pre)?)
            }
            ContractVersion::V0_2_0 => {
                PluginPre::V0_2_0(since_v0_2_0::PluginPre::new(instance_pre)?)
            }
            ContractVersion::V0_3_0 => PluginPre::V0_3_0(bindings::PluginPre::new(instance_pre)?),
        })
    }

    pub fn version(&self) -> ContractVersion {
        match self {
            PluginPre::V0_1_0(_) => ContractVersion::V0_1_0,
            PluginPre::V0_2_0(_) => ContractVersion::V0_2_0,
            PluginPre::V0_3_0(_) => ContractVersion::V0_3_0,
        }
    }

    /// The catalog for the settings, in a fresh instance in `store`.
    pub fn catalog(
        &self,
        store: &mut Store<T>,
        settings: &str,
    ) -> wasmtime::Result<Result<Vec<Tool>, String>> {
        match self {
            PluginPre::V0_1_0(pre) => since_v0_1_0::catalog(pre, store, settings),
            PluginPre::V0_2_0(pre) => since_v0_2_0::catalog(pre, store, settings),
            PluginPre::V0_3_0(pre) => since_v0_3_0::catalog(pre, store, settings),
        }
    }

    /// One tool call, in a fresh instance in `store`.
    pub fn call(
        &self,
        store: &mut Store<T>,
        request: &CallRequest,
    ) -> wasmtime::Result<Result<Answer, String>> {
        match self {
            PluginPre::V0_1_0(pre) => since_v0_1_0::call(pre, store, request),
            PluginPre::V0_2_0(pre) => since_v0_2_0::call(pre, store, request),
            PluginPre::V0_3_0(pre) => since_v0_3_0::call(pre, store, request),
        }
    }
}
