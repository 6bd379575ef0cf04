//! `host-shim inbound SESSION [accept|hold|refuse]`: the person's say over what another
//! session may put into this one. Set in the state folder's inbox (never by a model's
//! tool call); every harness's delivery and hand-over reads it there. Releasing a hold
//! (accept) lets the session's next hook, turn or idle hand-over take what waited.

use crate::flags::InboundArgs;
use anyhow::Result;
use host_shim::contract::latest::InboundPolicy;
use host_shim::inbox::checked_id;

pub fn run(args: &InboundArgs) -> Result<()> {
    let session = checked_id(&args.session).map_err(anyhow::Error::msg)?;
    let inbox = args.state.inbox()?;
    let waiting = inbox.waiting(session)?.messages.len();
    let Some(policy) = args.policy.as_deref() else {
        let now = inbox.inbound(session)?;
        println!(
            "{session}: inbound {} | {}",
            now.as_str(),
            waiting_words(waiting)
        );
        return Ok(());
    };
    let policy = InboundPolicy::parse(policy).expect("clap checked the policy");
    // A setting that does not read is the person's to set again: replaced, and said.
    let before = inbox.inbound(session).map_err(|err| {
        eprintln!("host-shim: the earlier setting did not read ({err:#}); it is replaced");
    });
    inbox.set_inbound(session, policy)?;
    let before = before.unwrap_or(InboundPolicy::Accept);
    let what = match (before, policy) {
        (InboundPolicy::Hold, InboundPolicy::Accept) if waiting > 0 => format!(
            "released: {} handed over at its next turn or hook",
            waiting_words(waiting)
        ),
        (_, InboundPolicy::Hold) => format!(
            "held: messages are kept until you run `host-shim inbound {session} accept` | {}",
            waiting_words(waiting)
        ),
        (_, InboundPolicy::Refuse) => {
            "refused: sends to it are refused (refused-by-target); what already waits stays"
                .to_string()
        }
        _ => format!("accepted | {}", waiting_words(waiting)),
    };
    println!("{session}: inbound {} ({what})", policy.as_str());
    Ok(())
}

fn waiting_words(count: usize) -> String {
    match count {
        0 => "no message waits".to_string(),
        1 => "1 message waits".to_string(),
        n => format!("{n} messages wait"),
    }
}
