//! The table of contract versions a host serves, and the dispatch it makes: a component
//! is linked and pre-instantiated for the version it exports, and every call goes
//! through that version's modules (its contract module `crate::contract::since_v*` for
//! the exports, the guard's `crate::guard::since_v*` for the imports). Releasing a
//! version is its two modules, one row here, and `latest` moved to it.
//!
//! This is also the lower layer for a harness that already runs wasmtime: it adds the
//! plugin's imports to its own [`Linker`] over its own store data (which holds a
//! [`Guard`] around its harness), as `wasmtime_wasi::p2::add_to_linker_sync` does, and
//! calls [`PluginPre::call`] in its own [`Store`]. [`crate::Runtime`] is the
//! convenience on top (engine, limits, pool, cache).

use crate::contract::latest::{Answer, Tool, WriteCheck};
use crate::contract::{self, CallRequest};
use crate::guard::{self, Guard};
use crate::harness::Harness;
use wasmtime::Store;
use wasmtime::component::{InstancePre, Linker};

/// The table of versions: each row names the version's variant, its modules and its
/// number. Everything that lists versions is made from it.
macro_rules! versions {
    ($($variant:ident => $module:ident, $number:literal;)+) => {
        /// The contract version a plugin was built against, as host-shim serves it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum ContractVersion {
            $(#[doc = concat!("`harness:sessions@", $number, "` (`", stringify!($module), "`).")]
            $variant,)+
        }

        impl ContractVersion {
            /// Every version served, oldest first.
            pub const ALL: &[ContractVersion] = &[$(ContractVersion::$variant,)+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(ContractVersion::$variant => $number,)+
                }
            }

            /// The version whose `tools` interface a component exports, from the names
            /// of its exports.
            pub fn exported_by<'a>(
                mut exports: impl Iterator<Item = &'a str>,
            ) -> Option<ContractVersion> {
                exports.find_map(|name| match name {
                    $(concat!("harness:sessions/tools@", $number) => Some(ContractVersion::$variant),)+
                    _ => None,
                })
            }
        }

        /// Adds the imports of contract `version` to `linker`; `guard` finds the
        /// [`Guard`] in the store's data.
        pub fn add_to_linker<T: 'static, H: Harness>(
            linker: &mut Linker<T>,
            version: ContractVersion,
            guard: fn(&mut T) -> &mut Guard<H>,
        ) -> wasmtime::Result<()> {
            match version {
                $(ContractVersion::$variant => guard::$module::add_to_linker(linker, guard),)+
            }
        }

        /// A plugin pre-instantiated for the contract version it was built against.
        pub enum PluginPre<T: 'static> {
            $($variant(contract::$module::PluginPre<T>),)+
        }

        impl<T: 'static> PluginPre<T> {
            /// Wraps `instance_pre` (from a linker [`add_to_linker`] prepared for
            /// `version`).
            pub fn new(
                version: ContractVersion,
                instance_pre: InstancePre<T>,
            ) -> wasmtime::Result<Self> {
                Ok(match version {
                    $(ContractVersion::$variant => {
                        PluginPre::$variant(contract::$module::PluginPre::new(instance_pre)?)
                    })+
                })
            }

            pub fn version(&self) -> ContractVersion {
                match self {
                    $(PluginPre::$variant(_) => ContractVersion::$variant,)+
                }
            }

            /// The catalog for the settings, in a fresh instance in `store`.
            pub fn catalog(
                &self,
                store: &mut Store<T>,
                settings: &str,
            ) -> wasmtime::Result<Result<Vec<Tool>, String>> {
                match self {
                    $(PluginPre::$variant(pre) => contract::$module::catalog(pre, store, settings),)+
                }
            }

            /// One tool call, in a fresh instance in `store`.
            pub fn call(
                &self,
                store: &mut Store<T>,
                request: &CallRequest,
            ) -> wasmtime::Result<Result<Answer, String>> {
                match self {
                    $(PluginPre::$variant(pre) => contract::$module::call(pre, store, request),)+
                }
            }
        }
    };
}

versions! {
    V0_1_0 => since_v0_1_0, "0.1.0";
    V0_2_0 => since_v0_2_0, "0.2.0";
    V0_3_0 => since_v0_3_0, "0.3.0";
    V0_4_0 => since_v0_4_0, "0.4.0";
    V0_5_0 => since_v0_5_0, "0.5.0";
    V0_6_0 => since_v0_6_0, "0.6.0";
}

impl<T: 'static> PluginPre<T> {
    /// The end of a send that awaited its reply ([`Answer::await_reply`]), in a fresh
    /// instance in `store`: `accepted` is the answer that asked to wait, `reply` the
    /// reply's body the host took for the caller (none when none came). Only a plugin
    /// of 0.4.0 or later asks to wait; an older one's answer is returned as it is.
    pub fn reply_awaited(
        &self,
        store: &mut Store<T>,
        request: &CallRequest,
        accepted: &Answer,
        reply: Option<&str>,
    ) -> wasmtime::Result<Result<Answer, String>> {
        // The same call for each version that awaits (0.4.0 and later).
        macro_rules! awaited {
            ($module:ident, $pre:expr, $wait:expr) => {
                contract::$module::reply_awaited($pre, store, request, &accepted.text, $wait, reply)
            };
        }
        match (self, &accepted.await_reply) {
            (PluginPre::V0_6_0(pre), Some(wait)) => awaited!(since_v0_6_0, pre, wait),
            (PluginPre::V0_5_0(pre), Some(wait)) => awaited!(since_v0_5_0, pre, wait),
            (PluginPre::V0_4_0(pre), Some(wait)) => awaited!(since_v0_4_0, pre, wait),
            _ => Ok(Ok(accepted.clone())),
        }
    }

    /// Whether `caller` may write `paths` now (`tools.check-write`), in a fresh
    /// instance in `store`. A plugin before 0.6.0 makes no claims: the write is
    /// allowed without asking it.
    pub fn check_write(
        &self,
        store: &mut Store<T>,
        caller: &str,
        settings: &str,
        paths: &[String],
    ) -> wasmtime::Result<Result<WriteCheck, String>> {
        match self {
            PluginPre::V0_6_0(pre) => {
                contract::since_v0_6_0::check_write(pre, store, caller, settings, paths)
            }
            _ => Ok(Ok(WriteCheck::Allowed)),
        }
    }
}
