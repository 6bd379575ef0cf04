//! The conversions every older contract module needs between its own generated types
//! and [`super::latest`]'s, where the two have the same shape: written once, as a macro
//! each version module invokes with its own interface modules.

/// `From` impls between `latest` and an older version's `session-query` and `inbox`
/// types of the same shape: a session header (without what it added since) and a role
/// to the old version, a delivery mode and a delivery refusal across.
macro_rules! same_shape_conversions {
    ($query:path, $inbox:path) => {
        use $crate::contract::latest;
        use $inbox as old_inbox;
        use $query as old_query;

        impl From<latest::SessionHeader> for old_query::SessionHeader {
            fn from(h: latest::SessionHeader) -> Self {
                old_query::SessionHeader {
                    id: h.id,
                    created_at_ms: h.created_at_ms,
                    live: h.live,
                    parent_id: h.parent_id,
                    origin: h.origin,
                    cwd: h.cwd,
                    preset: h.preset,
                }
            }
        }

        impl From<latest::Role> for old_query::Role {
            fn from(role: latest::Role) -> Self {
                match role {
                    latest::Role::User => old_query::Role::User,
                    latest::Role::Assistant => old_query::Role::Assistant,
                    latest::Role::System => old_query::Role::System,
                }
            }
        }

        $crate::contract::convert::delivery_conversions!(
            old_inbox,
            // An older plugin has no word for the person's refusal: the controller's,
            // in words.
            refused: old_inbox::DeliveryRefusal::Rejected(
                $crate::contract::frames::REFUSED_BY_TARGET.to_string()
            ),
            undecided: |why: String| old_inbox::DeliveryRefusal::Rejected(
                $crate::contract::convert::undecided_in_older_words(&why)
            )
        );
    };
}

/// `From` impls every older version's `inbox` needs (`$old`, its module in scope): its
/// delivery mode into the current one, and the current refusal into its own, `$refused`
/// for the person's refusal and `$undecided` making one from an undecided write's
/// reason (what the version may have no word for).
macro_rules! delivery_conversions {
    ($old:ident, refused: $refused:expr, undecided: $undecided:expr) => {
        impl From<$old::DeliveryMode> for $crate::contract::latest::DeliveryMode {
            fn from(mode: $old::DeliveryMode) -> Self {
                match mode {
                    $old::DeliveryMode::Queue => Self::Queue,
                    $old::DeliveryMode::Steer => Self::Steer,
                }
            }
        }

        impl From<$crate::contract::latest::DeliveryRefusal> for $old::DeliveryRefusal {
            fn from(refusal: $crate::contract::latest::DeliveryRefusal) -> Self {
                use $crate::contract::latest::DeliveryRefusal as Current;
                match refusal {
                    Current::NotFound => Self::NotFound,
                    Current::WouldNeedWake => Self::WouldNeedWake,
                    Current::Rejected(why) => Self::Rejected(why),
                    Current::RefusedByTarget => $refused,
                    Current::Undecided(why) => $undecided(why),
                }
            }
        }
    };
}

/// `From` impls between `latest` and an older version's `inbox` whose deliveries are
/// keyed and carry ids (0.4.0 and 0.5.0): a delivery mode and ids across, an
/// acceptance and a refusal to the old version (`$undecided` makes its refusal of an
/// undecided write from the reason). A wake only started (0.6.0's `wake-started`) is a
/// message waiting, nobody woken, in the words of a version that has no other. The
/// invoking module has `inbox` (its own) and the current contract as `current`.
macro_rules! keyed_inbox_conversions {
    (undecided: $undecided:expr) => {
        $crate::contract::convert::delivery_conversions!(
            inbox,
            refused: inbox::DeliveryRefusal::RefusedByTarget,
            undecided: $undecided
        );

        impl From<inbox::MessageIds> for current::MessageIds {
            fn from(ids: inbox::MessageIds) -> Self {
                current::MessageIds {
                    message_id: ids.message_id,
                    in_reply_to: ids.in_reply_to,
                }
            }
        }

        impl From<current::Delivered> for inbox::Delivered {
            fn from(delivered: current::Delivered) -> Self {
                inbox::Delivered {
                    woke: delivered.woke,
                    repeat: delivered.repeat,
                    state: match delivered.state {
                        current::DeliveryState::Waiting | current::DeliveryState::WakeStarted => {
                            inbox::DeliveryState::Waiting
                        }
                        current::DeliveryState::HandedOver => inbox::DeliveryState::HandedOver,
                        current::DeliveryState::Held => inbox::DeliveryState::Held,
                    },
                    message_id: delivered.message_id,
                }
            }
        }
    };
}

/// `From<latest::SessionIndex>` for a version that lists sessions as an index (0.2.0
/// and later), whose index and entries kept their shape.
macro_rules! index_conversions {
    ($query:path) => {
        use $query as index_query;

        impl From<$crate::contract::latest::SessionIndex> for index_query::SessionIndex {
            fn from(index: $crate::contract::latest::SessionIndex) -> Self {
                index_query::SessionIndex {
                    ids: index.ids,
                    entries: (index.entries.into_iter())
                        .map(|e| index_query::SessionEntry {
                            id_len: e.id_len,
                            created_at_ms: e.created_at_ms,
                            live: e.live,
                            subagent: e.subagent,
                        })
                        .collect(),
                }
            }
        }
    };
}

/// An undecided delivery (0.5.0) as the reason of a controller's refusal, for a plugin
/// before 0.5.0: it will add "nothing was delivered", so the reason says otherwise.
pub(crate) fn undecided_in_older_words(why: &str) -> String {
    format!(
        "the inbox did not confirm the message in time ({why}); it may still arrive: send \
         the same words again to find out"
    )
}

/// `catalog` for an older version whose tool specs have the current shape but for the
/// annotations: `annotated` (0.3.0 and later, the same annotations) or `bare` (0.2.0,
/// none). The invoking module has `PluginPre`, `Store` and the current contract as
/// `current`.
macro_rules! older_catalog {
    (annotated) => {
        $crate::contract::convert::older_catalog!(spec => Some(current::ToolAnnotations {
            title: spec.annotations.title,
            read_only_hint: spec.annotations.read_only_hint,
            destructive_hint: spec.annotations.destructive_hint,
            idempotent_hint: spec.annotations.idempotent_hint,
            open_world_hint: spec.annotations.open_world_hint,
        }));
    };
    (bare) => {
        $crate::contract::convert::older_catalog!(spec => None);
    };
    ($spec:ident => $annotations:expr) => {
        /// The catalog, in the current shape.
        pub fn catalog<T: 'static>(
            pre: &PluginPre<T>,
            store: &mut Store<T>,
            settings: &str,
        ) -> wasmtime::Result<Result<Vec<current::Tool>, String>> {
            let plugin = pre.instantiate(&mut *store)?;
            let tools = plugin
                .harness_sessions_tools()
                .call_catalog(store, settings)?;
            Ok(tools.map(|tools| {
                (tools.into_iter())
                    .map(|$spec| current::Tool {
                        name: $spec.name,
                        description: $spec.description,
                        input_schema: $spec.input_schema,
                        annotations: $annotations,
                    })
                    .collect()
            }))
        }
    };
}

/// `call`: one call of the version's plugin, its answer in the current shape
/// (`$convert` converts it; `current` for the current version itself). A 0.1.0 plugin
/// takes no call id.
macro_rules! call_fn {
    (current) => {
        $crate::contract::convert::call_fn!(@ (|answer| answer); caller, call_id, settings, tool, arguments);
    };
    (without call id, $convert:expr) => {
        $crate::contract::convert::call_fn!(@ ($convert); caller, settings, tool, arguments);
    };
    ($convert:expr) => {
        $crate::contract::convert::call_fn!(@ ($convert); caller, call_id, settings, tool, arguments);
    };
    (@ ($convert:expr); $($field:ident),*) => {
        /// One call, its answer in the current shape.
        pub fn call<T: 'static>(
            pre: &PluginPre<T>,
            store: &mut Store<T>,
            request: &CallRequest,
        ) -> wasmtime::Result<Result<current::Answer, String>> {
            let plugin = pre.instantiate(&mut *store)?;
            let answered = plugin
                .harness_sessions_tools()
                .call_call(store, $(&request.$field),*)?;
            let convert = $convert;
            Ok(answered.map(convert))
        }
    };
}

/// `From` an older version's refusal to the current one: each of its refusals, named
/// as it names them, is the current one of that name.
macro_rules! refusals_into_current {
    ($($refusal:ident),* $(,)?) => {
        impl From<Refusal> for current::Refusal {
            fn from(refusal: Refusal) -> current::Refusal {
                match refusal {
                    $(Refusal::$refusal => current::Refusal::$refusal,)*
                }
            }
        }
    };
}

/// What an older version whose answers may await a reply (0.4.0 and later) converts
/// alike: its reply wait and answer into the current ones (`answer`, for
/// [`call_fn!`]), and `reply_awaited`. The invoking module has `ReplyWait`, `Refusal`
/// (into the current one), `PluginPre`, `Store`, `CallRequest` and the current
/// contract as `current`.
macro_rules! older_answers {
    () => {
        impl From<ReplyWait> for current::ReplyWait {
            fn from(wait: ReplyWait) -> current::ReplyWait {
                current::ReplyWait {
                    target: wait.target,
                    message_id: wait.message_id,
                    seconds: wait.seconds,
                }
            }
        }

        fn answer(answer: exports::harness::sessions::tools::Answer) -> current::Answer {
            current::Answer {
                text: answer.text,
                refusal: answer.refusal.map(Into::into),
                await_reply: answer.await_reply.map(Into::into),
            }
        }

        /// The end of a send that awaited its reply, in a fresh instance.
        pub fn reply_awaited<T: 'static>(
            pre: &PluginPre<T>,
            store: &mut Store<T>,
            request: &CallRequest,
            accepted: &str,
            wait: &current::ReplyWait,
            reply: Option<&str>,
        ) -> wasmtime::Result<Result<current::Answer, String>> {
            let plugin = pre.instantiate(&mut *store)?;
            let wait = ReplyWait {
                target: wait.target.clone(),
                message_id: wait.message_id.clone(),
                seconds: wait.seconds,
            };
            let answered = plugin.harness_sessions_tools().call_reply_awaited(
                store,
                &request.caller,
                &request.settings,
                accepted,
                &wait,
                reply,
            )?;
            Ok(answered.map(answer))
        }
    };
}

pub(crate) use call_fn;
pub(crate) use delivery_conversions;
pub(crate) use index_conversions;
pub(crate) use keyed_inbox_conversions;
pub(crate) use older_answers;
pub(crate) use older_catalog;
pub(crate) use refusals_into_current;
pub(crate) use same_shape_conversions;
