//! The one delivery path every harness's `deliver` takes: the corpus, Claude Code,
//! Codex, and an embedder's own harness alike. In this order:
//!
//! 1. A key this process answered before gets that answer again ([`AnsweredKeys`]).
//! 2. The harness resolves the target ([`Recipient::resolve`]): unknown, a subagent,
//!    a controller's refusal, or whether it is live.
//! 3. A key the inbox accepted before, in any process, is a repeat; so are the same
//!    words from the same sender within [`REPEAT_WINDOW`] (a retry under a new call
//!    id; SPEC, "Repeats a host should catch").
//! 4. A target whose person refuses inbound is refused (`refused-by-target`); a cold
//!    target the call may not wake is refused (`would-need-wake`).
//! 5. A target whose person holds inbound gets the message kept, `held`: not woken,
//!    not handed over. Otherwise the harness may wake the target ([`Recipient::wake`],
//!    asked only now, for a new message), and the message is put into the inbox, once.
//! 6. The harness does what it can with it at once ([`Recipient::accepted`]: hand it
//!    over, start a wake command) and says where it is.
//!
//! A message another process put for one of the harness's sessions (another machine's
//! call, through a cluster) takes steps 5 and 6 here when that process says so
//! ([`arrived`]), by this harness's rules.
//!
//! A repeat answers with where the first message is now. What a call delivered is
//! recorded by the runtime's guard (`--deliveries`), for every harness the same.
//!
//! A put the inbox sent but could not confirm ([`super::UndecidedWrite`]) is answered
//! `undecided` and not remembered for its key: a retry looks again. A retry under a new
//! key in the same words (the model sending it again) is taken as a retry of that
//! message ([`Desk`] keeps it): its key is looked up and the same message put again, so
//! it is stored at most once.

use super::{
    InboxBackend, Located, Put, SharedInbox, SpooledMessage, Waiting, is_undecided, key_sender,
};
use crate::call_memo::CallMemo;
use crate::contract::latest::MessageIds;
use crate::contract::latest::{
    Delivered, DeliveryMode, DeliveryRefusal, DeliveryState, InboundPolicy,
};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// How long an identical message from the same sender to the same target counts as a
/// repeat (SPEC, "Repeats a host should catch").
pub const REPEAT_WINDOW: Duration = Duration::from_secs(600);

/// How many delivery keys a process remembers, and for how long: a harness that
/// retries a send does so within seconds, and a long-lived server must not grow with
/// every send. A key older than [`KEYS_KEPT_FOR`], or pushed out by [`KEYS_KEPT`]
/// newer ones, is forgotten here (the inbox still knows it).
pub const KEYS_KEPT: usize = 4096;
/// See [`KEYS_KEPT`].
pub const KEYS_KEPT_FOR: Duration = Duration::from_secs(600);

/// A process's answers by delivery key: a key answered before gets that answer again
/// (an acceptance with `repeat` set) and the delivery is not attempted; an empty key is
/// never remembered. At most [`KEYS_KEPT`] keys are kept, each for [`KEYS_KEPT_FOR`].
#[derive(Clone, Debug, Default)]
pub struct AnsweredKeys {
    answers: HashMap<String, Result<Delivered, DeliveryRefusal>>,
    /// Keys oldest first, with when they were answered.
    order: VecDeque<(String, Instant)>,
}

impl AnsweredKeys {
    /// The first answer to `key`, or `deliver`'s, remembered for next time.
    pub fn once(
        &mut self,
        key: &str,
        deliver: impl FnOnce() -> Result<Delivered, DeliveryRefusal>,
    ) -> Result<Delivered, DeliveryRefusal> {
        self.once_decided(key, || (deliver(), true))
    }

    /// As [`AnsweredKeys::once`], `deliver`'s answer remembered only when it says it
    /// is decided: an attempt the inbox failed mid-way may have stored the message, so
    /// the next try under the key looks again instead of hearing this answer.
    pub fn once_decided(
        &mut self,
        key: &str,
        deliver: impl FnOnce() -> (Result<Delivered, DeliveryRefusal>, bool),
    ) -> Result<Delivered, DeliveryRefusal> {
        let now = Instant::now();
        self.forget_older_than(now);
        if let Some(first) = self.answers.get(key) {
            return first.clone().map(|delivered| Delivered {
                repeat: true,
                ..delivered
            });
        }
        let (answer, decided) = deliver();
        if !key.is_empty() && decided {
            if self.order.len() == KEYS_KEPT
                && let Some((oldest, _)) = self.order.pop_front()
            {
                self.answers.remove(&oldest);
            }
            self.answers.insert(key.to_string(), answer.clone());
            self.order.push_back((key.to_string(), now));
        }
        answer
    }

    /// How many keys are remembered now.
    pub fn len(&self) -> usize {
        self.answers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    fn forget_older_than(&mut self, now: Instant) {
        while let Some((key, at)) = self.order.front() {
            if now.duration_since(*at) < KEYS_KEPT_FOR {
                break;
            }
            self.answers.remove(key);
            self.order.pop_front();
        }
    }
}

/// What a store keeps for the delivery path: its inbox backend, the keys this
/// process answered, the session calling now, and what each session's person lets in
/// as this call has read it.
pub struct Desk {
    inbox: SharedInbox,
    answered: AnsweredKeys,
    /// Messages whose put went undecided, with when: a send in the same words is their
    /// retry (at most [`KEYS_KEPT`], each for [`REPEAT_WINDOW`]).
    undecided: VecDeque<(SpooledMessage, Instant)>,
    caller: String,
    /// Read once per session per call (a listing's rows ask for many).
    inbound_seen: CallMemo<String, InboundPolicy>,
}

impl Desk {
    pub fn new(inbox: SharedInbox) -> Desk {
        Desk {
            inbox,
            answered: AnsweredKeys::default(),
            undecided: VecDeque::new(),
            caller: String::new(),
            inbound_seen: CallMemo::default(),
        }
    }

    /// What the person using `session` lets in, for a header (an inbox that cannot say
    /// reads as accept here; a delivery to it is refused naming why): read once per
    /// call.
    pub fn inbound(&mut self, session: &str) -> InboundPolicy {
        let inbox = &self.inbox;
        (self.inbound_seen).get_or(session, || super::inbound_or_accept(&**inbox, session))
    }

    /// The call has ended: the next question looks afresh.
    pub fn end_call(&mut self) {
        self.inbound_seen.end();
    }

    /// The session whose call this is (the store's `begin_call`): a delivery without a
    /// key is still counted as its (sending caps, the repeat window).
    pub fn set_caller(&mut self, caller: &str) {
        self.caller.clear();
        self.caller.push_str(caller);
        self.inbound_seen.begin();
    }

    /// The inbox backend deliveries go to.
    pub fn inbox(&self) -> &SharedInbox {
        &self.inbox
    }

    /// How many delivery keys this desk remembers now (at most [`KEYS_KEPT`]).
    pub fn answered_keys(&self) -> usize {
        self.answered.len()
    }

    /// The undecided message a send of `body` from `sender` to `target` retries, taken
    /// out (put back by the path when it is undecided again).
    fn take_undecided_like(
        &mut self,
        target: &str,
        sender: &str,
        body: &str,
    ) -> Option<SpooledMessage> {
        let now = Instant::now();
        (self.undecided).retain(|(_, at)| now.duration_since(*at) < REPEAT_WINDOW);
        let at = self.undecided.iter().position(|(m, _)| {
            m.target == target && m.sender == sender && !sender.is_empty() && m.same_words(body)
        })?;
        self.undecided.remove(at).map(|(message, _)| message)
    }

    /// `message`'s put went undecided: a send in the same words retries it. One without
    /// a key is not kept: put again, it would be a second message.
    fn keep_undecided(&mut self, message: SpooledMessage) {
        // Kept once: a retry's put may have kept it again already.
        if message.key.is_empty() || self.undecided.iter().any(|(m, _)| m.key == message.key) {
            return;
        }
        if self.undecided.len() == KEYS_KEPT {
            self.undecided.pop_front();
        }
        self.undecided.push_back((message, Instant::now()));
    }
}

/// What a harness adds to the delivery path. A store that implements it is an `Inbox`
/// whose deliveries take this path ([`deliver`]).
pub trait Recipient {
    /// What the harness's wake step hands its `accepted` step for one new message (a
    /// daemon connection and its plan, say): `()` when it has nothing to hand.
    type Plan: Default;

    /// The store's desk.
    fn desk(&mut self) -> &mut Desk;

    /// The inbox a reply to the caller arrives in, for a send that awaits it (see
    /// `Inbox::reply_inbox`): the desk's by default.
    fn inbox_for_replies(&mut self) -> Option<SharedInbox> {
        Some(self.desk().inbox().clone())
    }

    /// The target as the harness knows it now: whether it is live, or why it takes no
    /// message (`not-found` for an unknown id; `rejected` for a subagent, with where
    /// to send instead; a controller's own refusal).
    fn resolve(&mut self, target: &str) -> Result<bool, DeliveryRefusal>;

    /// What the harness's own settings let into the target (Claude Code's
    /// `crossSessionInbound`): the stricter of it and what the inbox holds for the
    /// person wins. Accept by default.
    fn inbound(&mut self, _target: &str) -> InboundPolicy {
        InboundPolicy::Accept
    }

    /// Asked only for a new message the call may deliver, just before it is put:
    /// whether the target was or will be woken with it (a store may wake it here), and
    /// what [`Recipient::accepted`] needs from this step. Nothing wakes by default.
    fn wake(&mut self, _arriving: &Arriving) -> Woken<Self::Plan> {
        Woken::default()
    }

    /// The message is in the inbox: what the harness does with it at once, with what
    /// its wake step planned, and the answer (whether the target woke, where the
    /// message is now). By default it waits for the harness's hand-over, as woken as
    /// [`Recipient::wake`] said.
    fn accepted(&mut self, waiting: &Waiting, _plan: Self::Plan) -> Delivered {
        Delivered {
            woke: waiting.message.woke,
            repeat: false,
            state: DeliveryState::Waiting,
            message_id: waiting.message.message_id.clone(),
        }
    }
}

/// What a call asks `Inbox::deliver` to deliver: the WIT function's arguments.
#[derive(Clone, Copy, Debug)]
pub struct DeliveryRequest<'a> {
    /// The session the message is for.
    pub target: &'a str,
    /// The message as the plugin framed it.
    pub body: &'a str,
    /// `queue` (its next turn) or `steer` (into the turn that runs).
    pub mode: DeliveryMode,
    /// Whether a cold target may be woken; without it a cold target is refused
    /// (`WouldNeedWake`).
    pub may_wake: bool,
    /// The delivery key: one delivery per non-empty key, whatever retries it.
    pub key: &'a str,
    /// The ids the body's frame carries (none from a plugin before 0.4.0).
    pub ids: &'a MessageIds,
}

/// The ids of a message whose frame carries none.
static NO_IDS: MessageIds = MessageIds::none();

impl<'a> DeliveryRequest<'a> {
    /// `body` for `target` in `mode`, with no key and no ids, and no waking.
    pub fn new(target: &'a str, body: &'a str, mode: DeliveryMode) -> DeliveryRequest<'a> {
        DeliveryRequest {
            target,
            body,
            mode,
            may_wake: false,
            key: "",
            ids: &NO_IDS,
        }
    }

    /// The same, a cold target woken (`true`) or refused.
    pub fn may_wake(self, may_wake: bool) -> DeliveryRequest<'a> {
        DeliveryRequest { may_wake, ..self }
    }

    /// The same, under a delivery key.
    pub fn key(self, key: &'a str) -> DeliveryRequest<'a> {
        DeliveryRequest { key, ..self }
    }

    /// The same, with the ids its frame carries.
    pub fn ids(self, ids: &'a MessageIds) -> DeliveryRequest<'a> {
        DeliveryRequest { ids, ..self }
    }
}

/// A new message about to be put for a target, as the wake step is asked about it.
#[derive(Clone, Copy, Debug)]
pub struct Arriving<'a> {
    pub target: &'a str,
    pub mode: DeliveryMode,
    /// Whether [`Recipient::resolve`] found the target live.
    pub live: bool,
    /// Whether the call may wake a cold target.
    pub may_wake: bool,
}

/// What the wake step decided: whether the target was or will be woken with the
/// message, and the plan it hands [`Recipient::accepted`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Woken<P> {
    pub woke: bool,
    pub plan: P,
}

/// Delivers the request through `recipient`'s harness, exactly once or not at all
/// (the module's opening says in what order).
pub fn deliver<R: Recipient + ?Sized>(
    recipient: &mut R,
    request: &DeliveryRequest,
) -> Result<Delivered, DeliveryRefusal> {
    let desk = recipient.desk();
    let inbox = desk.inbox.clone();
    let mut answered = std::mem::take(&mut desk.answered);
    // The sender a key names, else the caller the store was told of.
    let sender = match key_sender(request.key) {
        Some(sender) => sender.to_string(),
        None => desk.caller.clone(),
    };
    let answer = answered.once_decided(request.key, || {
        let retry_of =
            (recipient.desk()).take_undecided_like(request.target, &sender, request.body);
        let mut inbox_failed = false;
        let kept = retry_of.clone();
        let mut answer = accept(
            recipient,
            &*inbox,
            request,
            &sender,
            retry_of,
            &mut inbox_failed,
        );
        // With an undecided message in the same words, that message was looked up and
        // put again instead of a new one: the answer is a repeat.
        match (&mut answer, kept) {
            (Ok(delivered), kept) => delivered.repeat |= kept.is_some(),
            // Refused before it was put again: still undecided, for the next retry.
            (Err(_), Some(first)) => recipient.desk().keep_undecided(first),
            (Err(_), None) => {}
        }
        // An undecided answer is never the last word for its key.
        let undecided = matches!(answer, Err(DeliveryRefusal::Undecided(_)));
        (answer, !inbox_failed && !undecided)
    });
    recipient.desk().answered = answered;
    answer
}

/// A message another process put into `recipient`'s inbox for `target` under `handle`
/// (another machine's call, through a cluster) is there: steps 5 and 6 of the path for
/// it, by this harness's rules. Nothing when `target` is not this harness's session,
/// its person (in the inbox, or the harness's own settings) does not accept messages
/// now, it is cold and may not be woken, or the message no longer waits.
pub fn arrived<R: Recipient + ?Sized>(
    recipient: &mut R,
    target: &str,
    handle: &str,
    may_wake: bool,
) -> Option<Delivered> {
    let live = recipient.resolve(target).ok()?;
    let inbox = recipient.desk().inbox.clone();
    let inbound = (inbox.inbound(target).ok()?).stricter(recipient.inbound(target));
    if inbound != InboundPolicy::Accept || (!live && !may_wake) {
        return None;
    }
    let mut waiting = inbox.waiting_one(target, handle).ok()??;
    let woken = recipient.wake(&Arriving {
        target,
        mode: waiting.message.mode,
        live,
        may_wake,
    });
    waiting.message.woke = woken.woke;
    Some(recipient.accepted(&waiting, woken.plan))
}

/// The reason the model reads when the inbox failed a step: a failure of this
/// machine's files (a full disk, a folder it may not write) in the system's words,
/// without the machine's paths, which are the person's to see (`host-shim doctor`);
/// any other failure (a cluster's) as the inbox gave it.
fn inbox_unusable(err: &anyhow::Error) -> String {
    match err
        .chain()
        .find_map(|cause| cause.downcast_ref::<std::io::Error>())
    {
        Some(io) => format!(
            "the inbox cannot take messages now: this machine's state folder could not be written ({io}); `host-shim doctor` names the folder"
        ),
        None => format!("the inbox cannot take messages now: {err:#}"),
    }
}

/// Steps 2 to 6 of the path, for a key not answered in this process, from `sender`
/// (with `retry_of`, an undecided message in the same words, that message again);
/// `inbox_failed` says when the inbox failed a step, so the answer is not the last word.
fn accept<R: Recipient + ?Sized>(
    recipient: &mut R,
    inbox: &dyn InboxBackend,
    request: &DeliveryRequest,
    sender: &str,
    retry_of: Option<SpooledMessage>,
    inbox_failed: &mut bool,
) -> Result<Delivered, DeliveryRefusal> {
    let DeliveryRequest {
        target,
        body,
        mode,
        may_wake,
        key,
        ids,
    } = *request;
    let mut unusable = |err: anyhow::Error| {
        *inbox_failed = true;
        match is_undecided(&err) {
            true => DeliveryRefusal::Undecided(format!("{err:#}")),
            false => DeliveryRefusal::Rejected(inbox_unusable(&err)),
        }
    };
    let key = retry_of.as_ref().map_or(key, |first| first.key.as_str());
    let live = recipient.resolve(target)?;
    let repeat = |first: Located| repeat_of(&first.message, first.state);
    if let Some(first) = inbox.find(target, key).map_err(&mut unusable)? {
        return Ok(repeat(first));
    }
    let identical = inbox.find_identical(target, sender, body, REPEAT_WINDOW);
    if let Some(first) = identical.map_err(&mut unusable)? {
        return Ok(repeat(first));
    }
    let inbound =
        (inbox.inbound(target).map_err(&mut unusable)?).stricter(recipient.inbound(target));
    if inbound == InboundPolicy::Refuse {
        return Err(DeliveryRefusal::RefusedByTarget);
    }
    let new_message = |woke: bool| match &retry_of {
        Some(first) => SpooledMessage {
            woke,
            ..first.clone()
        },
        None => SpooledMessage::new(target, mode, body, key, woke)
            .with_ids(ids)
            .from(sender),
    };
    if inbound == InboundPolicy::Hold {
        // Kept for the person's release: not woken, not handed over.
        let message = new_message(false);
        let put = put(recipient, inbox, &message).map_err(&mut unusable);
        let (repeat, message_id) = match put? {
            Put::Repeat(first) => (true, first.message_id),
            Put::New(_) => (false, message.message_id),
        };
        return Ok(Delivered {
            woke: false,
            repeat,
            state: DeliveryState::Held,
            message_id,
        });
    }
    if !live && !may_wake {
        return Err(DeliveryRefusal::WouldNeedWake);
    }
    let Woken { woke, plan } = recipient.wake(&Arriving {
        target,
        mode,
        live,
        may_wake,
    });
    let message = new_message(woke);
    match put(recipient, inbox, &message).map_err(&mut unusable)? {
        // Another writer of this key landed first, a moment ago.
        Put::Repeat(first) => Ok(repeat_of(&first, DeliveryState::Waiting)),
        Put::New(handle) => Ok(recipient.accepted(&Waiting { handle, message }, plan)),
    }
}

/// The answer to a repeat: the first delivery's, `first` being where `state` says.
/// A wake decided for a message that still waits is told as started, not as done: the
/// woken session may not run yet (it ran once the message is handed over).
fn repeat_of(first: &SpooledMessage, state: DeliveryState) -> Delivered {
    let started = first.woke && state == DeliveryState::Waiting;
    Delivered {
        woke: first.woke && !started,
        repeat: true,
        state: match started {
            true => DeliveryState::WakeStarted,
            false => state,
        },
        message_id: first.message_id.clone(),
    }
}

/// Puts `message`, keeping it on the desk for a retry in the same words when the
/// inbox cannot tell whether it stored it.
fn put<R: Recipient + ?Sized>(
    recipient: &mut R,
    inbox: &dyn InboxBackend,
    message: &SpooledMessage,
) -> anyhow::Result<Put> {
    let put = inbox.put_unseen(message);
    if let Err(err) = &put
        && is_undecided(err)
    {
        recipient.desk().keep_undecided(message.clone());
    }
    put
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::latest::InboxCount;
    use crate::inbox::MemoryInbox;
    use std::sync::Arc;

    #[test]
    fn a_call_reads_each_sessions_inbound_once_and_the_next_looks_afresh() {
        let inbox: SharedInbox = Arc::new(MemoryInbox::default());
        let mut desk = Desk::new(inbox.clone());
        let hold = || inbox.set_inbound("s1", InboundPolicy::Hold).unwrap();
        // Outside a call every question reads the inbox.
        assert_eq!(desk.inbound("s1"), InboundPolicy::Accept);
        hold();
        assert_eq!(desk.inbound("s1"), InboundPolicy::Hold);
        inbox.set_inbound("s1", InboundPolicy::Accept).unwrap();
        // In a call the first answer stands (one read per session, however many rows).
        desk.set_caller("me");
        assert_eq!(desk.inbound("s1"), InboundPolicy::Accept);
        hold();
        assert_eq!(desk.inbound("s1"), InboundPolicy::Accept);
        assert_eq!(desk.inbound("s2"), InboundPolicy::Accept);
        desk.end_call();
        assert_eq!(desk.inbound("s1"), InboundPolicy::Hold);
    }

    #[test]
    fn a_file_failure_is_told_without_the_machines_paths() {
        let full = std::io::Error::from_raw_os_error(28);
        let err = anyhow::Error::new(full)
            .context("cannot write /home/ada/.local/state/session-tools/inbox/s1/m-1");
        let said = inbox_unusable(&err);
        assert!(!said.contains("/home/ada"), "{said}");
        assert!(said.contains("No space left on device"), "{said}");
        let cluster = anyhow::anyhow!("timed out").context("cannot write m.beta");
        assert_eq!(
            inbox_unusable(&cluster),
            "the inbox cannot take messages now: cannot write m.beta: timed out"
        );
    }

    #[test]
    fn keys_are_kept_up_to_their_bound_oldest_forgotten_first() {
        let mut keys = AnsweredKeys::default();
        let accepted = || {
            Ok(Delivered {
                woke: false,
                repeat: false,
                state: DeliveryState::Waiting,
                message_id: String::new(),
            })
        };
        for n in 0..KEYS_KEPT + 10 {
            keys.once(&format!("k{n}"), accepted).unwrap();
        }
        assert_eq!(keys.len(), KEYS_KEPT);
        // The newest is a repeat; the oldest was forgotten, so it delivers again.
        assert!(
            keys.once(&format!("k{}", KEYS_KEPT + 9), accepted)
                .unwrap()
                .repeat
        );
        assert!(!keys.once("k0", accepted).unwrap().repeat);
        // An empty key is never kept.
        keys.once("", accepted).unwrap();
        assert!(!keys.once("", accepted).unwrap().repeat);
    }

    /// A harness of two sessions: "live" and "cold"; "kid" is a subagent.
    struct Two {
        desk: Desk,
        wakes: u32,
        resolved: u32,
    }

    impl Recipient for Two {
        type Plan = ();
        fn desk(&mut self) -> &mut Desk {
            &mut self.desk
        }
        fn resolve(&mut self, target: &str) -> Result<bool, DeliveryRefusal> {
            self.resolved += 1;
            match target {
                "live" => Ok(true),
                "cold" => Ok(false),
                "kid" => Err(DeliveryRefusal::Rejected("a subagent".into())),
                _ => Err(DeliveryRefusal::NotFound),
            }
        }
        fn wake(&mut self, arriving: &Arriving) -> Woken<()> {
            self.wakes += 1;
            Woken {
                woke: !arriving.live,
                plan: (),
            }
        }
    }

    /// An inbox whose next write is answered as timed out, as a cluster's write whose
    /// acknowledgement did not come in time: stored (`stores` set) or not.
    struct Unacknowledged {
        inner: MemoryInbox,
        fail_next_put: std::sync::atomic::AtomicBool,
        stores: bool,
    }

    impl InboxBackend for Unacknowledged {
        fn find(&self, session: &str, key: &str) -> anyhow::Result<Option<Located>> {
            self.inner.find(session, key)
        }
        fn find_same_words(
            &self,
            ask: &crate::inbox::SameWords,
        ) -> anyhow::Result<Option<Located>> {
            self.inner.find_same_words(ask)
        }
        fn count_from(&self, session: &str, sender: &str) -> anyhow::Result<InboxCount> {
            self.inner.count_from(session, sender)
        }
        fn put_unseen(&self, message: &SpooledMessage) -> anyhow::Result<Put> {
            let fail = (self.fail_next_put).swap(false, std::sync::atomic::Ordering::SeqCst);
            if fail && !self.stores {
                return Err(crate::inbox::undecided(anyhow::anyhow!(
                    "cannot write the message: timed out: didn't receive ack in time"
                )));
            }
            let put = self.inner.put_unseen(message)?;
            if fail {
                return Err(crate::inbox::undecided(anyhow::anyhow!(
                    "cannot write the message: timed out: didn't receive ack in time"
                )));
            }
            Ok(put)
        }
        fn waiting(&self, session: &str) -> anyhow::Result<crate::inbox::InboxContents> {
            self.inner.waiting(session)
        }
        fn hand(&self, handing: crate::inbox::Handing) -> anyhow::Result<Vec<SpooledMessage>> {
            self.inner.hand(handing)
        }
        fn settle(
            &self,
            session: &str,
            expire_after: std::time::Duration,
            shown: crate::inbox::ReadShown,
        ) -> anyhow::Result<crate::inbox::Settled> {
            self.inner.settle(session, expire_after, shown)
        }
        fn sent_since(
            &self,
            sender: &str,
            since_ns: u128,
        ) -> anyhow::Result<Vec<crate::inbox::Sent>> {
            self.inner.sent_since(sender, since_ns)
        }
        fn inbound(&self, session: &str) -> anyhow::Result<InboundPolicy> {
            self.inner.inbound(session)
        }
        fn set_inbound(&self, session: &str, policy: InboundPolicy) -> anyhow::Result<()> {
            self.inner.set_inbound(session, policy)
        }
    }

    fn unacknowledged(stores: bool) -> (Arc<Unacknowledged>, Two) {
        let inbox = Arc::new(Unacknowledged {
            inner: MemoryInbox::new(),
            fail_next_put: true.into(),
            stores,
        });
        let harness = Two {
            desk: Desk::new(inbox.clone()),
            wakes: 0,
            resolved: 0,
        };
        (inbox, harness)
    }

    #[test]
    fn a_write_the_inbox_failed_is_not_the_last_word_a_retry_finds_it() {
        let (inbox, mut harness) = unacknowledged(true);
        // The write timed out, though it was stored: the call is told it cannot be told.
        let first = send(&mut harness, "live", "hello", false, "5:alicec1");
        assert!(
            matches!(&first, Err(DeliveryRefusal::Undecided(why))
                if why.starts_with("the inbox did not acknowledge the write: ")
                    && why.contains("timed out")),
            "{first:?}"
        );
        // The retry under the same key is not told the same: the key is looked up, and
        // the message it stored is the answer (accepted, once).
        let again = send(&mut harness, "live", "hello", false, "5:alicec1").unwrap();
        assert!(again.repeat, "{again:?}");
        assert_eq!(inbox.waiting("live").unwrap().messages.len(), 1);
        // A decided answer is remembered as before: the third try asks nothing.
        let resolved = harness.resolved;
        assert!(
            send(&mut harness, "live", "hello", false, "5:alicec1")
                .unwrap()
                .repeat
        );
        assert_eq!(harness.resolved, resolved);
    }

    /// The model sending the same words again, under a new call id, after an undecided
    /// answer: the first message is looked up (stored: a repeat) or put again under its
    /// own key (not stored: stored now, once), never a second message.
    #[test]
    fn the_same_words_after_an_undecided_write_retry_that_write() {
        for stores in [true, false] {
            let (inbox, mut harness) = unacknowledged(stores);
            let ids = MessageIds {
                message_id: "m-000000000001".into(),
                in_reply_to: None,
            };
            let first = DeliveryRequest::new("live", "hello", DeliveryMode::Queue)
                .key("5:alicec1")
                .ids(&ids);
            let said = deliver(&mut harness, &first);
            assert!(
                matches!(said, Err(DeliveryRefusal::Undecided(_))),
                "{said:?}"
            );
            let other_ids = MessageIds {
                message_id: "m-000000000002".into(),
                in_reply_to: None,
            };
            let again = DeliveryRequest::new("live", "hello", DeliveryMode::Queue)
                .key("5:alicec2")
                .ids(&other_ids);
            let answer = deliver(&mut harness, &again).unwrap();
            assert!(answer.repeat, "stored={stores}: {answer:?}");
            assert_eq!(answer.message_id, "m-000000000001", "stored={stores}");
            let waiting = inbox.waiting("live").unwrap().messages;
            assert_eq!(waiting.len(), 1, "stored={stores}");
            assert_eq!(waiting[0].message.key, "5:alicec1");
            // Other words are a new message.
            let other = DeliveryRequest::new("live", "bye", DeliveryMode::Queue).key("5:alicec3");
            assert!(!deliver(&mut harness, &other).unwrap().repeat);
            assert_eq!(inbox.waiting("live").unwrap().messages.len(), 2);
        }
    }

    /// A retry in the same words refused before its put (here: the person refused
    /// messages for a moment) leaves the first message undecided: the next retry still
    /// puts it under its own key, never a second message.
    #[test]
    fn a_retry_refused_before_its_put_keeps_the_first_write_undecided() {
        let (inbox, mut harness) = unacknowledged(false);
        assert!(matches!(
            send(&mut harness, "live", "hello", false, "5:alicec1"),
            Err(DeliveryRefusal::Undecided(_))
        ));
        inbox.set_inbound("live", InboundPolicy::Refuse).unwrap();
        assert_eq!(
            send(&mut harness, "live", "hello", false, "5:alicec2"),
            Err(DeliveryRefusal::RefusedByTarget)
        );
        inbox.set_inbound("live", InboundPolicy::Accept).unwrap();
        let answer = send(&mut harness, "live", "hello", false, "5:alicec3").unwrap();
        assert!(answer.repeat, "{answer:?}");
        let waiting = inbox.waiting("live").unwrap().messages;
        assert_eq!(waiting.len(), 1);
        assert_eq!(waiting[0].message.key, "5:alicec1");
    }

    fn two() -> Two {
        Two {
            desk: Desk::new(Arc::new(MemoryInbox::new())),
            wakes: 0,
            resolved: 0,
        }
    }

    fn send(
        to: &mut Two,
        target: &str,
        body: &str,
        may_wake: bool,
        key: &str,
    ) -> Result<Delivered, DeliveryRefusal> {
        let request = DeliveryRequest::new(target, body, DeliveryMode::Queue)
            .may_wake(may_wake)
            .key(key);
        deliver(to, &request)
    }

    #[test]
    fn the_path_resolves_then_catches_repeats_then_checks_the_wake_then_puts_once() {
        let mut harness = two();
        assert_eq!(
            send(&mut harness, "nobody", "x", true, "5:alicec1"),
            Err(DeliveryRefusal::NotFound)
        );
        assert!(matches!(
            send(&mut harness, "kid", "x", true, "5:alicec2"),
            Err(DeliveryRefusal::Rejected(_))
        ));
        assert_eq!(
            send(&mut harness, "cold", "x", false, "5:alicec3"),
            Err(DeliveryRefusal::WouldNeedWake)
        );
        assert_eq!(harness.wakes, 0, "asked only for a message it may deliver");
        let first = send(&mut harness, "cold", "hello", true, "5:alicec4").unwrap();
        assert!(first.woke && !first.repeat);
        // The same key again: this process's answer, nothing resolved or asked.
        let resolved = harness.resolved;
        assert!(
            send(&mut harness, "cold", "hello", true, "5:alicec4")
                .unwrap()
                .repeat
        );
        assert_eq!(harness.resolved, resolved);
        // The same words from the same sender under a new call id: a repeat, no wake.
        // Its message still waits: the wake is told as started, not as seen.
        let again = send(&mut harness, "cold", "hello", true, "5:alicec5").unwrap();
        assert!(again.repeat && !again.woke);
        assert_eq!(again.state, DeliveryState::WakeStarted);
        assert_eq!(harness.wakes, 1);
        // Another sender, or other words: new messages.
        assert!(
            !send(&mut harness, "cold", "hello", true, "3:bobc6")
                .unwrap()
                .repeat
        );
        assert!(
            !send(&mut harness, "cold", "hello!", true, "5:alicec7")
                .unwrap()
                .repeat
        );
        let waiting = harness.desk.inbox().waiting("cold").unwrap().messages;
        let bodies: Vec<&str> = waiting.iter().map(|w| w.message.body.as_str()).collect();
        assert_eq!(bodies, ["hello", "hello", "hello!"]);
    }

    #[test]
    fn a_message_another_process_put_takes_the_last_steps_by_this_harness_s_rules() {
        let mut harness = two();
        let inbox = harness.desk.inbox().clone();
        let put = |target: &str, words: &str| -> String {
            let message = SpooledMessage::new(target, DeliveryMode::Queue, words, "", false);
            match inbox.put_unseen(&message).unwrap() {
                Put::New(handle) => handle.as_str().to_string(),
                Put::Repeat(_) => panic!("a repeat"),
            }
        };
        let live = put("live", "hi");
        let cold = put("cold", "wake up");
        // Not this harness's session, a handle that names no waiting message, a cold
        // session the sender may not wake: nothing done, nothing asked of the harness.
        assert_eq!(arrived(&mut harness, "nobody", &live, true), None);
        assert_eq!(arrived(&mut harness, "live", "no-such-handle", true), None);
        assert_eq!(arrived(&mut harness, "cold", &cold, false), None);
        assert_eq!(harness.wakes, 0);
        // Held by its person: left for the release.
        inbox.set_inbound("live", InboundPolicy::Hold).unwrap();
        assert_eq!(arrived(&mut harness, "live", &live, true), None);
        inbox.set_inbound("live", InboundPolicy::Accept).unwrap();
        // Otherwise the harness wakes it as it would its own message, and says where it is.
        let delivered = arrived(&mut harness, "cold", &cold, true).unwrap();
        assert!(delivered.woke && delivered.state == DeliveryState::Waiting);
        let delivered = arrived(&mut harness, "live", &live, true).unwrap();
        assert!(!delivered.woke && !delivered.repeat);
        assert_eq!(harness.wakes, 2);
    }

    #[test]
    fn a_key_another_process_put_is_a_repeat_with_where_its_message_is_now() {
        let inbox: SharedInbox = Arc::new(MemoryInbox::new());
        let mut one = Two {
            desk: Desk::new(inbox.clone()),
            wakes: 0,
            resolved: 0,
        };
        let mut other = Two {
            desk: Desk::new(inbox.clone()),
            wakes: 0,
            resolved: 0,
        };
        send(&mut one, "live", "hi", false, "5:alicec1").unwrap();
        let waiting = inbox.waiting("live").unwrap().messages;
        inbox.hand_over("live", waiting, &mut |_| Ok(())).unwrap();
        let repeat = send(&mut other, "live", "hi", false, "5:alicec1").unwrap();
        assert!(repeat.repeat);
        assert_eq!(repeat.state, DeliveryState::HandedOver);
    }
}
