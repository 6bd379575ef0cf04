//! Properties every tool answer must have, whatever the input: checked by the fuzz
//! target (natively) and the property tests (through the component). They hold only
//! because of the rules, so a broken rule shows up here as a counterexample.

use crate::list::ListRequest;
use crate::read::ReadRequest;
use crate::send::SendRequest;
use crate::settings::Settings;

const SEND_CODES: &[&str] = &[
    "not-found",
    "not-messageable",
    "resume-disabled",
    "empty-body",
    "rejected",
];

/// Checks one answer. `deliveries` is how many messages the inbox accepted during the
/// call.
pub fn check(
    tool: &str,
    arguments: &str,
    settings: &Settings,
    output: &str,
    deliveries: usize,
) -> Result<(), String> {
    let fail = |what: &str| Err(format!("{what}\n--- output ---\n{output}"));
    if output.is_empty() {
        return fail("empty answer");
    }
    if output.starts_with("invalid arguments: ") || output.starts_with("unknown tool ") {
        if output.contains('\n') {
            return fail("an argument refusal spans more than one line");
        }
        if deliveries != 0 {
            return fail("a refused call delivered");
        }
        return Ok(());
    }
    match tool {
        crate::list::NAME => {
            let Ok(request) = ListRequest::parse(arguments, settings) else {
                return fail("valid-looking answer to invalid arguments");
            };
            check_list(&request, output).or_else(|what| fail(&what))
        }
        crate::read::NAME => {
            let Ok(request) = ReadRequest::parse(arguments, settings) else {
                return fail("valid-looking answer to invalid arguments");
            };
            check_read(&request, output).or_else(|what| fail(&what))
        }
        crate::send::NAME => {
            if SendRequest::parse(arguments, settings).is_err() {
                return fail("valid-looking answer to invalid arguments");
            }
            check_send(output, deliveries).or_else(|what| fail(&what))
        }
        _ => fail("an unknown tool got an answer"),
    }
}

/// "Caller last" is not checked here: with arbitrary host text, ids can fold alike and
/// a workspace path can end in ` | this session`, so the caller's row cannot be told
/// from the text alone. The unit and end-to-end tests pin that rule on known corpora.
fn check_list(request: &ListRequest, output: &str) -> Result<(), String> {
    let lines: Vec<&str> = output.lines().collect();
    let rows: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("- "))
        .collect();
    if rows.len() > request.limit {
        return Err(format!(
            "{} rows for a limit of {}",
            rows.len(),
            request.limit
        ));
    }
    // Each row is exactly two lines; then a blank line, the footer and one more line.
    let expected_lines = rows.len() * 2 + usize::from(!rows.is_empty()) + 2;
    if lines.len() != expected_lines {
        return Err(format!("{} lines for {} rows", lines.len(), rows.len()));
    }
    for (index, row) in rows.iter().enumerate() {
        if lines[index * 2] != *row || !lines[index * 2 + 1].starts_with("  ") {
            return Err(format!("row {index} is not a row line and a title line"));
        }
    }
    let footer = lines[lines.len() - 2];
    let counts: Vec<&str> = footer.split(' ').collect();
    let shown: usize = counts
        .first()
        .and_then(|n| n.parse().ok())
        .ok_or("no footer")?;
    let considered: usize = counts
        .get(2)
        .and_then(|n| n.parse().ok())
        .ok_or("no footer")?;
    if counts.get(1) != Some(&"of") || !footer.contains(" considered sessions") {
        return Err("the footer is not `N of M considered sessions`".to_string());
    }
    if shown != rows.len() || considered < shown {
        return Err(format!(
            "footer {shown} of {considered} for {} rows",
            rows.len()
        ));
    }
    Ok(())
}

fn check_read(request: &ReadRequest, output: &str) -> Result<(), String> {
    if let Some(rest) = output.strip_prefix("sessions_read refused (") {
        if !rest.starts_with("not-found): ") || output.lines().count() != 2 {
            return Err("a read refusal is not the not-found format".to_string());
        }
        return Ok(());
    }
    let lines: Vec<&str> = output.lines().collect();
    if lines.len() < 3
        || !lines[0].starts_with("session ")
        || !lines[1].starts_with("title: ")
        || !lines[2].starts_with("readable messages: ")
    {
        return Err("the read header is not three lines".to_string());
    }
    let readable: usize = lines[2]
        .strip_prefix("readable messages: ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .ok_or("no readable count")?;
    // Bodies are escaped, so every line starting with `--- ` is a real header.
    let headers = lines.iter().filter(|l| l.starts_with("--- ")).count();
    let expected = readable.min(request.max_messages);
    if headers != expected {
        return Err(format!("{headers} message headers; expected {expected}"));
    }
    let omitted = readable - expected;
    let last = lines[lines.len() - 1];
    if omitted > 0 && last != format!("({omitted} earlier messages omitted)") {
        return Err(format!("missing the omission line for {omitted} messages"));
    }
    Ok(())
}

fn check_send(output: &str, deliveries: usize) -> Result<(), String> {
    if output.starts_with("accepted for ") {
        if deliveries != 1 {
            return Err(format!("accepted with {deliveries} deliveries"));
        }
        if output.lines().count() != 2 {
            return Err("an acceptance is not two lines".to_string());
        }
        return Ok(());
    }
    let Some(rest) = output.strip_prefix("sessions_send refused (") else {
        return Err("a send answer is neither accepted nor refused".to_string());
    };
    let code = rest.split(')').next().unwrap_or("");
    if !SEND_CODES.contains(&code) {
        return Err(format!("unknown refusal code {code:?}"));
    }
    if deliveries != 0 {
        return Err("a refused send delivered".to_string());
    }
    let lines: Vec<&str> = output.lines().collect();
    if lines.len() != 2 || !lines[1].starts_with("Next step: ") {
        return Err("a refusal is not a cause line and a next-step line".to_string());
    }
    Ok(())
}
