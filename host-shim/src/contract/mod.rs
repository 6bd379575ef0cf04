//! The contract versions a host serves, as Zed keeps them: one module per version
//! (`since_v0_1_0` … `since_v0_6_0`) owning its wasmtime bindings, the
//! current one re-exported as [`latest`], whose types every harness answers in; an
//! older module converts its types to and from `latest`. Below everything else in the
//! kit: nothing here knows a harness or the guard (the guard answers each version's
//! imports, `crate::guard::since_v*`; `crate::plugin` holds the table of versions).

mod convert;
pub mod frames;
pub(crate) mod injected;
pub mod request;
pub mod since_v0_1_0;
pub mod since_v0_2_0;
pub mod since_v0_3_0;
pub mod since_v0_4_0;
pub mod since_v0_5_0;
pub mod since_v0_6_0;

pub use request::CallRequest;
pub use since_v0_6_0 as latest;
