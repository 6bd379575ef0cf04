//! `host-shim nats-user MACHINE`: the NATS user block of one machine, for the
//! deployment's server configuration (`authorization { users: [ … ] }`), as
//! `host_shim_nats::permissions` writes it and the cluster tests start servers with:
//! the administrator's step is this one command per machine.
//!
//! Trust model: it prints text and reads or writes nothing; the password given is put
//! in the block as it is (a bcrypt hash from `nats server passwd` keeps the plain one
//! out of the file).

use crate::flags::NatsUserArgs;
use anyhow::{Context, Result, bail};
use host_shim_nats::MachineName;
use host_shim_nats::permissions::user_block_reaching;

pub fn run(args: &NatsUserArgs) -> Result<()> {
    let machine = MachineName::parse(&args.machine).context("the machine's name")?;
    let bucket = MachineName::parse(&args.bucket)
        .map(|_| args.bucket.clone())
        .context("--bucket: a bucket name is letters, digits, '-' or '_'")?;
    if args.password.is_empty() || args.password.contains(['"', '\\', '\n']) {
        bail!(
            "--password: an empty password, or one with a quote, backslash or line break, cannot be written into the block; use a bcrypt hash from `nats server passwd`"
        );
    }
    let reaches = match &args.reaches {
        None => None,
        Some(list) => Some(
            (list.split(',').map(str::trim).filter(|m| !m.is_empty()))
                .map(|m| MachineName::parse(m).with_context(|| format!("--reaches: {m:?}")))
                .collect::<Result<Vec<_>>>()?,
        ),
    };
    println!(
        "{}",
        user_block_reaching(&bucket, &machine, &args.password, reaches.as_deref())
    );
    Ok(())
}
