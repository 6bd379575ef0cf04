//! `host-shim watch`: a live view for the person running the sessions. The sessions
//! (of the harnesses named, and every one the state folder knows of), live or idle,
//! what each lets in and how many messages wait for it; and the messages between them,
//! newest first: from, to, mode, hop, size, waiting (for how long) or handed over
//! (how long after). Keys read a message and set a session's inbound as
//! `host-shim inbound` does. A session's row counts the claims it holds (`claims=N`),
//! and `--once` lists the claims after the messages. `--once` prints the same view as
//! text and ends. On a
//! machine joined to a cluster the inbox is the cluster's: this machine's sessions,
//! with what waits for them there from any machine, and the messages this machine
//! accepted and handed over (its audit log).
//!
//! Trust model: it reads what the other commands read (the state folder, its audit
//! log, the harnesses' folders, the cluster's inbox), and the only change it makes is
//! the person's own inbound choice for a session, through the inbox as
//! `host-shim inbound` makes it.

use crate::flags::WatchArgs;
use anyhow::Result;
use host_shim::contract::latest::{Claim, InboundPolicy};
use host_shim::inbox::audit::{AuditEvent, AuditRecord, Cursor, body_hash};
use host_shim::inbox::{AuditLog, SharedInbox, StateDir};
use host_shim::{LocalPresence, Store};
use host_shim_profile::Purpose;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// How often the view is read again: a cluster's inbox costs round trips per session.
const REFRESH: Duration = Duration::from_millis(250);
const REFRESH_CLUSTER: Duration = Duration::from_secs(1);
/// The most messages kept in view.
const MESSAGES_KEPT: usize = 500;

/// One session's row.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionRow {
    pub id: String,
    /// The harness holding it; `-` for one only the state folder knows.
    pub harness: &'static str,
    pub title: Option<String>,
    pub live: bool,
    pub idle: bool,
    pub inbound: InboundPolicy,
    pub waiting: usize,
    /// The claims it holds whose time is not up.
    pub claims: usize,
    /// The newest message to or from it (ms), for the order.
    pub last_ms: u64,
}

/// One message's row: its acceptance, and its hand-over once there was one.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageRow {
    pub accepted: AuditRecord,
    pub handed_ms: Option<u64>,
}

/// What the view shows now.
#[derive(Default)]
pub struct Snapshot {
    pub sessions: Vec<SessionRow>,
    /// Newest first.
    pub messages: Vec<MessageRow>,
    /// Every session's claims, as the inbox keeps them.
    pub claims: Vec<Claim>,
}

/// The sources of the view, read again at each refresh (the audit log from where it
/// was last read).
pub struct Watched {
    stores: Vec<Box<dyn Store>>,
    /// The state folder's inbox, or the cluster's.
    inbox: SharedInbox,
    /// The state folder, for the sessions it holds messages or settings for (on one
    /// machine: a cluster's inbox is not a folder to list).
    folder: Option<StateDir>,
    /// On a machine joined to a cluster: its inbox there, for the sessions of this
    /// machine that messages wait for.
    cluster: Option<Arc<host_shim_nats::NatsInbox>>,
    presence: LocalPresence,
    log: AuditLog,
    cursor: Option<Cursor>,
    messages: Vec<MessageRow>,
}

impl Watched {
    pub fn open(args: &WatchArgs) -> Result<Watched> {
        let root = args.state.root()?;
        let inbox = args.state.inbox()?;
        let cluster = args.state.cluster()?.map(|cluster| cluster.inbox());
        let folder = match cluster {
            Some(_) => None,
            None => Some(StateDir::open(&root)?),
        };
        let presence = LocalPresence::open(&root)?;
        let log = AuditLog::open(&root, false)?;
        // Each harness named, looked at only: nothing woken or given (a look confirms
        // what a session's record shows it was given).
        let stores = (args.harnesses).stores(&inbox, &args.state, Purpose::Look)?;
        Ok(Watched {
            stores,
            inbox,
            folder,
            cluster,
            presence,
            log,
            cursor: None,
            messages: Vec::new(),
        })
    }

    /// Reads what changed and returns the view.
    pub fn refresh(&mut self) -> Snapshot {
        let new = match self.cursor.take() {
            None => {
                let (records, _unreadable, cursor) = self.log.read_all();
                self.cursor = Some(cursor);
                records
            }
            Some(cursor) => {
                let (records, cursor) = self.log.read_from(cursor);
                self.cursor = Some(cursor);
                records
            }
        };
        pair(&mut self.messages, new, self.cluster.is_some());
        let excess = self.messages.len().saturating_sub(MESSAGES_KEPT);
        self.messages.drain(..excess);
        // Claims that cannot be read show none (the claims command says why).
        let claims = self
            .inbox
            .read_claims()
            .map_or_else(|_| Vec::new(), |at| at.claims);
        let sessions = self.sessions(&claims);
        Snapshot {
            sessions,
            messages: self.messages.iter().rev().cloned().collect(),
            claims,
        }
    }

    /// The sessions a person watches: live ones, and those the state folder or the log
    /// knows of (messages waiting, or in a conversation); a large harness's other
    /// sessions stay out of the way and cost nothing to read.
    fn sessions(&mut self, claims: &[Claim]) -> Vec<SessionRow> {
        let live = self.presence.live_sessions();
        let now = i64::try_from(now_ms()).unwrap_or(i64::MAX);
        let running: Vec<&Claim> = claims.iter().filter(|c| c.ends_at_ms > now).collect();
        let mut known: HashSet<String> = match (&self.folder, &self.cluster) {
            (Some(folder), _) => folder.sessions().unwrap_or_default(),
            (None, Some(cluster)) => cluster.sessions_waiting().unwrap_or_default(),
            (None, None) => Vec::new(),
        }
        .into_iter()
        .collect();
        known.extend(live.iter().cloned());
        known.extend(running.iter().map(|claim| claim.holder.clone()));
        for message in &self.messages {
            known.insert(message.accepted.to.clone());
            if !message.accepted.from.is_empty() {
                known.insert(message.accepted.from.clone());
            }
        }
        let row =
            |id: String, harness: &'static str, live: bool, title: Option<String>| SessionRow {
                id,
                harness,
                title: title.filter(|t| !t.is_empty()),
                live,
                idle: false,
                inbound: InboundPolicy::Accept,
                waiting: 0,
                claims: 0,
                last_ms: 0,
            };
        let mut rows: Vec<SessionRow> = Vec::new();
        for store in &mut self.stores {
            let index = store.list_sessions();
            let mut at = 0usize;
            let mut shown = Vec::new();
            for entry in &index.entries {
                let id = &index.ids[at..at + entry.id_len as usize];
                at += entry.id_len as usize;
                if !entry.subagent && (entry.live || known.contains(id)) {
                    shown.push((id.to_string(), entry.live));
                }
            }
            let ids: Vec<String> = shown.iter().map(|(id, _)| id.clone()).collect();
            // A look at each one settles the offers its record shows (handed over),
            // as its next hook or read would.
            for id in &ids {
                store.inbox_status(id, "");
            }
            let titles = store.title_snapshots(&ids);
            for ((id, store_live), title) in shown.into_iter().zip(titles) {
                let live = store_live || live.contains(&id);
                rows.push(row(id, store.harness(), live, title));
            }
        }
        let listed: HashSet<String> = rows.iter().map(|row| row.id.clone()).collect();
        for id in known.into_iter().filter(|id| !listed.contains(id)) {
            let live = live.contains(&id);
            rows.push(row(id, "-", live, None));
        }
        for row in &mut rows {
            row.idle = row.live && self.presence.is_idle(&row.id);
            row.inbound = self.inbox.inbound(&row.id).unwrap_or(InboundPolicy::Accept);
            row.waiting = self.inbox.waiting(&row.id).map_or(0, |w| w.messages.len());
            row.claims = running.iter().filter(|c| c.holder == row.id).count();
            row.last_ms = (self.messages.iter())
                .filter(|m| m.accepted.to == row.id || m.accepted.from == row.id)
                .map(|m| m.handed_ms.unwrap_or(m.accepted.at_ms))
                .max()
                .unwrap_or(0);
        }
        rows.sort_by(|a, b| (b.live, b.last_ms, &a.id).cmp(&(a.live, a.last_ms, &b.id)));
        rows
    }

    /// How often the view is read again.
    pub fn refresh_every(&self) -> Duration {
        match self.cluster {
            None => REFRESH,
            Some(_) => REFRESH_CLUSTER,
        }
    }

    /// Sets what `session`'s person lets in (the keys h, a and r).
    pub fn set_inbound(&self, session: &str, policy: InboundPolicy) -> Result<()> {
        self.inbox.set_inbound(session, policy)
    }

    /// A message's body: the log's when it recorded bodies, else the inbox's while the
    /// message waits there.
    pub fn body(&self, message: &MessageRow) -> Option<String> {
        if let Some(body) = &message.accepted.body {
            return Some(body.clone());
        }
        let waiting = self.inbox.waiting(&message.accepted.to).ok()?;
        (waiting.messages.into_iter())
            .map(|w| w.message)
            .find(|m| body_hash(&m.body) == message.accepted.sha256)
            .map(|m| m.body)
    }
}

/// Adds `records` (oldest first) to `messages`: an acceptance is a new row, a
/// hand-over completes the oldest open row of the same message, or, on a machine of a
/// `cluster` (where another machine accepted it), is a row of its own.
fn pair(messages: &mut Vec<MessageRow>, records: Vec<AuditRecord>, cluster: bool) {
    for record in records {
        match record.event {
            // A refused send is a row of its own, never waiting.
            AuditEvent::Accepted | AuditEvent::Refused => messages.push(MessageRow {
                accepted: record,
                handed_ms: None,
            }),
            // Still waiting, for `watch`, until its target's record shows it; claims
            // are not messages (watch reads the claims themselves).
            AuditEvent::Offered
            | AuditEvent::WaitingAgain
            | AuditEvent::Claimed
            | AuditEvent::Released
            | AuditEvent::Lapsed
            | AuditEvent::WriteRefused => {}
            AuditEvent::HandedOver => {
                let open = messages.iter_mut().find(|m| {
                    m.handed_ms.is_none()
                        && m.accepted.refusal.is_none()
                        && m.accepted.to == record.to
                        && m.accepted.sha256 == record.sha256
                });
                match open {
                    Some(open) => open.handed_ms = Some(record.at_ms),
                    None if cluster => messages.push(MessageRow {
                        handed_ms: Some(record.at_ms),
                        accepted: record,
                    }),
                    None => {}
                }
            }
        }
    }
}

/// `12.3 s`, `4 min`, `2 h`.
fn span(ms: u64) -> String {
    match ms {
        0..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        60_000..3_600_000 => format!("{} min", ms / 60_000),
        _ => format!("{} h", ms / 3_600_000),
    }
}

/// A session's line.
pub fn session_line(row: &SessionRow) -> String {
    let mut line = format!(
        "{}  {:<11} {}",
        row.id,
        row.harness,
        match (row.live, row.idle) {
            (true, true) => "live, idle",
            (true, false) => "live",
            (false, _) => "cold",
        }
    );
    match row.inbound {
        InboundPolicy::Accept => {}
        InboundPolicy::Hold => line.push_str("  inbound=hold"),
        InboundPolicy::Refuse => line.push_str("  inbound=refuse"),
    }
    if row.waiting > 0 {
        line.push_str(&format!("  {} waiting", row.waiting));
    }
    if row.claims > 0 {
        line.push_str(&format!("  claims={}", row.claims));
    }
    if let Some(title) = &row.title {
        line.push_str("  ");
        // One line, whatever the title holds.
        let title = title
            .chars()
            .take(60)
            .map(|c| if c.is_control() { ' ' } else { c });
        line.extend(title);
    }
    line
}

/// A message's line, its ages against `now_ms`.
pub fn message_line(row: &MessageRow, now_ms: u64) -> String {
    let accepted = &row.accepted;
    let at = chrono::DateTime::from_timestamp_millis(i64::try_from(accepted.at_ms).unwrap_or(0))
        .map_or_else(String::new, |t| t.format("%H:%M:%S").to_string());
    let from = if accepted.from.is_empty() {
        "(unknown)"
    } else {
        &accepted.from
    };
    let state = match (&accepted.refusal, row.handed_ms) {
        (Some(code), _) => format!("REFUSED ({code})"),
        (None, Some(_)) if accepted.event == AuditEvent::HandedOver => {
            "handed over (accepted on another machine)".to_string()
        }
        (None, Some(handed)) => format!(
            "handed over after {}",
            span(handed.saturating_sub(accepted.at_ms))
        ),
        (None, None) => format!("waiting {}", span(now_ms.saturating_sub(accepted.at_ms))),
    };
    format!(
        "{at}  {from} -> {}  {} hop={} {} chars  {state}",
        accepted.to,
        match accepted.mode {
            host_shim::DeliveryMode::Queue => "queue",
            host_shim::DeliveryMode::Steer => "steer",
        },
        accepted.hop,
        accepted.chars
    )
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

pub fn run(args: &WatchArgs) -> Result<()> {
    let mut watched = Watched::open(args)?;
    if args.once {
        let snapshot = watched.refresh();
        let now = now_ms();
        println!("Sessions");
        for row in &snapshot.sessions {
            println!("  {}", session_line(row));
        }
        println!("Messages (newest first)");
        for row in &snapshot.messages {
            println!("  {}", message_line(row, now));
        }
        println!("Claims");
        let now = i64::try_from(now).unwrap_or(i64::MAX);
        for line in crate::claims::listing(&snapshot.claims, now).lines() {
            println!("  {line}");
        }
        return Ok(());
    }
    tui::run(watched)
}

mod tui {
    //! The terminal view: ratatui over crossterm, redrawn at each refresh and key.

    use super::{Snapshot, Watched, message_line, now_ms, session_line};

    use anyhow::Result;
    use host_shim::contract::latest::InboundPolicy;
    use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};
    use ratatui::layout::{Constraint, Layout};
    use ratatui::style::{Modifier, Style};
    use ratatui::text::Line;
    use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState, Paragraph, Wrap};

    #[derive(Clone, Copy, PartialEq)]
    enum Focus {
        Sessions,
        Messages,
    }

    struct View {
        focus: Focus,
        sessions: ListState,
        messages: ListState,
        /// The message being read, and its text.
        reading: Option<String>,
        said: String,
    }

    pub fn run(mut watched: Watched) -> Result<()> {
        let mut terminal = ratatui::init();
        let outcome = (|| -> Result<()> {
            let mut view = View {
                focus: Focus::Sessions,
                sessions: ListState::default().with_selected(Some(0)),
                messages: ListState::default().with_selected(Some(0)),
                reading: None,
                said: String::new(),
            };
            let mut snapshot = watched.refresh();
            loop {
                terminal.draw(|frame| draw(frame, &snapshot, &mut view))?;
                if !event::poll(watched.refresh_every())? {
                    snapshot = refreshed(&mut watched, &mut view, &snapshot);
                    continue;
                }
                let Event::Key(key) = event::read()? else {
                    continue;
                };
                if key.kind != KeyEventKind::Press {
                    continue;
                }
                let list = match view.focus {
                    Focus::Sessions => (&mut view.sessions, snapshot.sessions.len()),
                    Focus::Messages => (&mut view.messages, snapshot.messages.len()),
                };
                match key.code {
                    KeyCode::Char('q') => return Ok(()),
                    KeyCode::Esc if view.reading.is_some() => view.reading = None,
                    KeyCode::Esc => return Ok(()),
                    KeyCode::Tab => {
                        view.focus = match view.focus {
                            Focus::Sessions => Focus::Messages,
                            Focus::Messages => Focus::Sessions,
                        }
                    }
                    KeyCode::Down | KeyCode::Char('j') => {
                        let next = list
                            .0
                            .selected()
                            .map_or(0, |i| (i + 1).min(list.1.saturating_sub(1)));
                        list.0.select(Some(next));
                    }
                    KeyCode::Up | KeyCode::Char('k') => {
                        let next = list.0.selected().map_or(0, |i| i.saturating_sub(1));
                        list.0.select(Some(next));
                    }
                    KeyCode::Enter if view.focus == Focus::Messages => {
                        if let Some(message) = view
                            .messages
                            .selected()
                            .and_then(|i| snapshot.messages.get(i))
                        {
                            view.reading = Some(watched.body(message).unwrap_or_else(|| {
                                "The body was not recorded and the message no longer waits: \
                                 start the servers with --log-bodies to keep bodies in the log."
                                    .to_string()
                            }));
                        }
                    }
                    KeyCode::Char(c @ ('h' | 'a' | 'r')) if view.focus == Focus::Sessions => {
                        let policy = match c {
                            'h' => InboundPolicy::Hold,
                            'a' => InboundPolicy::Accept,
                            _ => InboundPolicy::Refuse,
                        };
                        if let Some(row) = view
                            .sessions
                            .selected()
                            .and_then(|i| snapshot.sessions.get(i))
                        {
                            view.said = match watched.set_inbound(&row.id, policy) {
                                Ok(()) => format!(
                                    "{}: inbound {}",
                                    row.id,
                                    match policy {
                                        InboundPolicy::Accept => "accept",
                                        InboundPolicy::Hold => "hold",
                                        InboundPolicy::Refuse => "refuse",
                                    }
                                ),
                                Err(err) => format!("{err:#}"),
                            };
                            snapshot = refreshed(&mut watched, &mut view, &snapshot);
                        }
                    }
                    _ => {}
                }
            }
        })();
        ratatui::restore();
        outcome
    }

    /// The view read again, the selected session and message still selected wherever
    /// they moved to.
    fn refreshed(watched: &mut Watched, view: &mut View, old: &Snapshot) -> Snapshot {
        let session = (view.sessions.selected())
            .and_then(|i| old.sessions.get(i))
            .map(|row| row.id.clone());
        let message = (view.messages.selected())
            .and_then(|i| old.messages.get(i))
            .map(|row| (row.accepted.at_ms, row.accepted.sha256.clone()));
        let new = watched.refresh();
        if let Some(at) = session.and_then(|id| new.sessions.iter().position(|row| row.id == id)) {
            view.sessions.select(Some(at));
        }
        let moved = message.and_then(|(at_ms, sha)| {
            (new.messages.iter())
                .position(|row| row.accepted.at_ms == at_ms && row.accepted.sha256 == sha)
        });
        if let Some(at) = moved {
            view.messages.select(Some(at));
        }
        new
    }

    /// One of the two lists: its lines in a titled box, the title bold when focused,
    /// the selected line reversed and marked.
    fn list<'a>(lines: impl Iterator<Item = String>, title: &'a str, focused: bool) -> List<'a> {
        let title_style = if focused {
            Style::default().add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        };
        List::new(lines.map(ListItem::new).collect::<Vec<_>>())
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(title)
                    .title_style(title_style),
            )
            .highlight_style(Style::default().add_modifier(Modifier::REVERSED))
            .highlight_symbol("> ")
    }

    fn draw(frame: &mut ratatui::Frame, snapshot: &Snapshot, view: &mut View) {
        let [top, sessions, messages, bottom] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Percentage(40),
            Constraint::Min(3),
            Constraint::Length(1),
        ])
        .areas(frame.area());
        frame.render_widget(
            Line::from("session-tools watch — Tab switch, ↑↓ select, Enter read, h hold, a accept, r refuse, q quit"),
            top,
        );
        let sessions_list = list(
            snapshot.sessions.iter().map(session_line),
            "Sessions",
            view.focus == Focus::Sessions,
        );
        frame.render_stateful_widget(sessions_list, sessions, &mut view.sessions);
        let now = now_ms();
        let messages_list = list(
            snapshot.messages.iter().map(|row| message_line(row, now)),
            "Messages (newest first)",
            view.focus == Focus::Messages,
        );
        frame.render_stateful_widget(messages_list, messages, &mut view.messages);
        frame.render_widget(Line::from(view.said.as_str()), bottom);
        if let Some(body) = &view.reading {
            let area = messages.inner(ratatui::layout::Margin::new(2, 1));
            frame.render_widget(Clear, area);
            frame.render_widget(
                Paragraph::new(body.as_str())
                    .wrap(Wrap { trim: false })
                    .block(
                        Block::default()
                            .borders(Borders::ALL)
                            .title("Message (Esc closes)"),
                    ),
                area,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(event: AuditEvent, at_ms: u64, to: &str, sha: &str) -> AuditRecord {
        AuditRecord {
            at_ms,
            event,
            from: "s-a".into(),
            to: to.into(),
            mode: host_shim::DeliveryMode::Queue,
            hop: 1,
            chars: 12,
            sha256: sha.into(),
            body: None,
            refusal: None,
            claim: None,
        }
    }

    #[test]
    fn a_hand_over_completes_its_own_message_and_ages_read_as_a_person_reads_them() {
        let mut messages = Vec::new();
        pair(
            &mut messages,
            vec![
                record(AuditEvent::Accepted, 1_000, "s-b", "aa"),
                record(AuditEvent::Accepted, 2_000, "s-b", "bb"),
                record(AuditEvent::Accepted, 2_500, "s-c", "aa"),
                record(AuditEvent::HandedOver, 3_800, "s-b", "bb"),
            ],
            false,
        );
        let handed: Vec<Option<u64>> = messages.iter().map(|m| m.handed_ms).collect();
        assert_eq!(handed, [None, Some(3_800), None]);
        assert!(
            message_line(&messages[1], 10_000)
                .ends_with("  s-a -> s-b  queue hop=1 12 chars  handed over after 1.8 s"),
            "{}",
            message_line(&messages[1], 10_000)
        );
        assert!(message_line(&messages[0], 3_601_000).ends_with("waiting 1 h"));
        assert!(message_line(&messages[2], 182_500).ends_with("waiting 3 min"));
        // A refused send is its own row, marked with its rail, never completed.
        let refused = AuditRecord::refused(
            "s-a",
            "s-b",
            host_shim::DeliveryMode::Queue,
            "bb",
            "loop-guard",
            false,
        );
        let mut handed = record(AuditEvent::HandedOver, 9_000, "s-b", &refused.sha256);
        handed.at_ms = refused.at_ms + 1;
        pair(&mut messages, vec![refused, handed], false);
        assert_eq!(messages.len(), 4);
        assert_eq!(messages[3].handed_ms, None);
        assert!(
            message_line(&messages[3], 0).ends_with("  REFUSED (loop-guard)"),
            "{}",
            message_line(&messages[3], 0)
        );
        // On a machine of a cluster, a hand-over of a message another machine accepted
        // is a row of its own; on one machine, a hand-over with no acceptance is none.
        let elsewhere = record(AuditEvent::HandedOver, 9_500, "s-d", "dd");
        pair(&mut messages, vec![elsewhere.clone()], false);
        assert_eq!(messages.len(), 4);
        pair(&mut messages, vec![elsewhere], true);
        assert_eq!(messages.len(), 5);
        assert!(
            message_line(&messages[4], 10_000).ends_with(
                "  s-a -> s-d  queue hop=1 12 chars  handed over (accepted on another machine)"
            ),
            "{}",
            message_line(&messages[4], 10_000)
        );
    }

    #[test]
    fn a_session_line_says_what_a_person_needs() {
        let row = SessionRow {
            id: "s-b".into(),
            harness: "toy",
            title: Some("Plan the beds".into()),
            live: true,
            idle: true,
            inbound: InboundPolicy::Hold,
            waiting: 2,
            claims: 1,
            last_ms: 0,
        };
        assert_eq!(
            session_line(&row),
            "s-b  toy         live, idle  inbound=hold  2 waiting  claims=1  Plan the beds"
        );
        // A title of several lines is shown on one.
        let row = SessionRow {
            title: Some("Plan\nthe\tbeds".into()),
            ..row
        };
        assert!(session_line(&row).ends_with("claims=1  Plan the beds"));
    }
}
