#!/usr/bin/env python3
"""The npm package as a new user gets it, in CI (.ci/run, after the real-client suites):

1. build.py builds both binaries and the tarballs (the workspace's version);
2. the aarch64 binary, under qemu-user-static, answers `catalog` and a call of each
   tool on the demo corpus byte for byte as the x86_64 one does;
3. on a fresh HOME and a PATH with no cargo and no rustc, from an empty npm cache with
   the tarballs local: `npx <package> setup claude` alone; then, on another, `npm
   install -g` then `host-shim setup claude` and `host-shim doctor`: the harness runs
   the installed binary, not anything of target/;
4. the real Claude Code suite (its list, send and hand-over checks among the rest) with
   that installed command as HOST_SHIM, on that PATH;
5. with the checkout's target/ gone (what `cargo clean` does to it; moved aside and put
   back), the installed set-up is untouched: doctor finds nothing wrong, a call answers;
6. an upgrade to a second version built here (x86_64): the same configuration holds,
   doctor finds nothing wrong and the server is the new version.

Prints the measured install time and size; exits non-zero naming each failed check.

What it touches: its own folders under the temporary folder (each HOME, each npm cache,
removed after), target/npm (build.py's), and, for step 5 only, the checkout's target/,
renamed to target.npm-test-aside and renamed back however the step ends; a run killed
in that step leaves it aside, and the next run puts it back before anything else.

    python3 host-shim/npm/test.py
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from suite_kit.real_client import check, doctor_finds_nothing_wrong, finish  # noqa: E402

OUT = ROOT / "target" / "npm"
# Where step 5 keeps the checkout's target/ while it checks the set-up without it.
ASIDE = "target.npm-test-aside"


def put_back_a_target_left_aside():
    """A run killed while target/ was aside left it there: put it back (a target/ made
    since is a build the person started; then say so and stop, touching neither)."""
    target, aside = ROOT / "target", ROOT / ASIDE
    if not aside.exists():
        return
    if target.exists():
        sys.exit(f"test.py: both {target} and {aside} are here (a run was killed while "
                 f"target/ was aside, and a build made another); keep one and run again")
    aside.rename(target)
QEMU = "/usr/bin/qemu-aarch64-static"


def built(version=None, targets="x86_64,aarch64", out=OUT):
    command = [sys.executable, HERE / "build.py", "--targets", targets, "--out", out]
    if version:
        command += ["--version", version]
    subprocess.run(command, check=True)
    return json.loads((out / "sizes.json").read_text())


def tarballs(sizes, out=OUT):
    """The main package's tarball and this machine's platform package's (npm refuses
    to install another platform's by name: EBADPLATFORM)."""
    return [str(out / "tarballs" / sizes[what]["file"])
            for what in ("main", "x86_64-unknown-linux-musl")]


def smoke(sizes):
    """The aarch64 binary under qemu answers as the x86_64 one, byte for byte."""
    x86 = ROOT / "target" / "x86_64-unknown-linux-musl" / "dist" / "host-shim"
    arm = ROOT / "target" / "aarch64-unknown-linux-musl" / "dist" / "host-shim"
    for binary, machine in ((x86, 62), (arm, 183)):
        kind = elf_kind(binary)
        check(kind == (machine, False),
              f"{binary.parent.parent.name} is a static executable for its machine", kind)
    calls = [
        ["catalog"],
        ["call", "sessions_list", '{"scope": "all"}'],
        ["call", "sessions_read",
         '{"session_id": "session-e218a09e-8736-4483-9a04-2bf13608630c"}'],
        ["call", "sessions_send",
         '{"session_id": "session-c0ffee00-1111-4a2b-9c3d-5e6f7a8b9c0d", '
         '"message": "The runbook review is at 3."}'],
        ["call", "sessions_send", '{"session_id": "nobody"}'],
    ]
    for words in calls:
        answers = []
        for binary, runner in ((x86, []), (arm, [QEMU])):
            with tempfile.TemporaryDirectory() as home:
                # Each its own state folder and cache: the answers, not shared state.
                extra = ["--state-dir", f"{home}/state"] if words[0] == "call" else []
                run = subprocess.run(runner + [binary, "--cache-dir", f"{home}/cache"] + words
                                     + extra, capture_output=True, env={"HOME": home,
                                                                        "PATH": "/usr/bin:/bin"})
                answers.append((run.returncode, run.stdout, run.stderr))
        check(answers[0] == answers[1] and answers[0][0] == 0 and answers[0][1],
              f"under qemu, aarch64 answers `{' '.join(words[:2])}` as x86_64 does, byte for byte",
              answers)
    for triple in ("x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"):
        print(f"  {triple}: binary {sizes[triple]['binary']:,} bytes, "
              f"tarball {sizes[triple]['tarball']:,} bytes")


def elf_kind(binary):
    """An ELF executable's machine (62 x86_64, 183 aarch64) and whether it names an
    interpreter (a dynamic loader): a static binary names none."""
    import struct
    data = binary.read_bytes()
    if data[:6] != b"\x7fELF\x02\x01":
        return ("not a 64-bit little-endian ELF file", None)
    machine = struct.unpack_from("<H", data, 18)[0]
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    types = [struct.unpack_from("<I", data, phoff + i * phentsize)[0] for i in range(phnum)]
    return (machine, 3 in types)  # PT_INTERP


def user_environment(home):
    """A person's environment with node and npm but no Rust: PATH without cargo's."""
    node = Path(shutil.which("node")).parent
    path = f"{home}/.npm-global/bin{os.pathsep}{node}{os.pathsep}/usr/bin{os.pathsep}/bin"
    check(shutil.which("cargo", path=path) is None and shutil.which("rustc", path=path) is None,
          "the new user's PATH has no cargo and no rustc", path)
    return {"HOME": str(home), "PATH": path, "LANG": "C.UTF-8"}


def npm_install(env, home, files):
    """`npm install -g` of the tarballs, from an empty cache, offline: what it took."""
    cache = Path(tempfile.mkdtemp(prefix="npm-cache-"))
    started = time.monotonic()
    run = subprocess.run(["npm", "install", "-g", "--prefix", f"{home}/.npm-global",
                          "--cache", cache, "--offline", "--no-audit", "--no-fund",
                          "--no-update-notifier", *files],
                         env=env, capture_output=True, text=True)
    took = time.monotonic() - started
    shutil.rmtree(cache, ignore_errors=True)
    check(run.returncode == 0, "npm install -g of the tarballs, offline, from an empty cache",
          run.stdout + run.stderr)
    return took


def npx_set_up(sizes):
    """`npx <package> setup claude` on another fresh HOME: the whole set-up, the command
    npx unpacked (in its own folder of npm's cache) what the harness runs."""
    home = Path(tempfile.mkdtemp(prefix="npx-user-"))
    try:
        env = user_environment(home)
        packages = [f"--package={tarball}" for tarball in tarballs(sizes)]
        setup = subprocess.run(["npx", "-y", "--offline", "--no-update-notifier", *packages,
                                "host-shim", "setup", "claude"], env=env, capture_output=True,
                               text=True, cwd=home)
        check(setup.returncode == 0 and "Claude Code is set up" in setup.stdout,
              "npx <package> setup claude sets Claude Code up", setup.stdout + setup.stderr)
        command = configured_command(home)
        check("/_npx/" in command and command.endswith("host-shim-linux-x64/bin/host-shim"),
              "the harness runs the binary npx unpacked", command)
        doctor_finds_nothing_wrong(command, [], env, "an npx set-up")
    finally:
        shutil.rmtree(home, ignore_errors=True)


def host_shim(env, *words, cwd=None):
    return subprocess.run(["host-shim", *words], env=env, capture_output=True, text=True,
                          cwd=cwd or env["HOME"])


def configured_command(home):
    claude = json.loads((home / ".claude.json").read_text())
    return claude["mcpServers"]["session-tools"]["command"]


def main():
    put_back_a_target_left_aside()
    sizes = built()
    smoke(sizes)
    npx_set_up(sizes)

    home = Path(tempfile.mkdtemp(prefix="npm-user-"))
    try:
        env = user_environment(home)
        took = npm_install(env, home, tarballs(sizes))
        installed = home / ".npm-global"
        size = sum(f.stat().st_size for f in installed.rglob("*") if f.is_file())
        print(f"  install: {took:.1f} s, {size:,} bytes under the npm prefix")
        version = host_shim(env, "--version")
        check(version.stdout.strip() == f"host-shim {sizes_version(sizes)}",
              "the installed command runs, and names the package's version", version)

        setup = host_shim(env, "setup", "claude")
        check(setup.returncode == 0 and "Claude Code is set up" in setup.stdout
              and "Cargo build folder" not in setup.stdout,
              "host-shim setup claude from the package, with no note of a build folder",
              setup.stdout + setup.stderr)
        command = configured_command(home)
        check(command.startswith(str(installed)) and command.endswith("/bin/host-shim")
              and "host-shim-linux-x64" in command,
              "Claude Code runs the package's own binary (not target/, not Node)", command)
        doctor_finds_nothing_wrong("host-shim", [], env, "npm install and setup")

        # The real Claude Code with the installed command, its own HOME as its page says.
        suite = subprocess.run(
            [sys.executable, ROOT / "host-shim/harnesses/claude-code/suite/suite.py"],
            env=dict(os.environ, PATH=env["PATH"], HOST_SHIM=str(installed / "bin/host-shim")))
        check(suite.returncode == 0,
              "the real Claude Code suite holds with the installed command", suite.returncode)

        # What `cargo clean` takes from the checkout (its target/) changes nothing here.
        target, aside = ROOT / "target", ROOT / ASIDE
        target.rename(aside)
        try:
            doctor_finds_nothing_wrong("host-shim", [], env, "the checkout's target/ went")
            listed = host_shim(env, "call", "sessions_list")
            check(listed.returncode == 0 and "considered" in listed.stdout,
                  "a call answers with the checkout's target/ gone", listed)
        finally:
            # A process an earlier step left behind (a failed suite's) may have written
            # into target/ meanwhile: that goes, and the checkout's target/ comes back.
            if target.exists():
                shutil.rmtree(target)
            aside.rename(target)

        # An upgrade: a second version, built here, installed over the first.
        newer = sizes_version(sizes) + "-upgrade.1"
        upgrade = built(newer, "x86_64", OUT / "upgrade")
        npm_install(env, home, tarballs(upgrade, OUT / "upgrade"))
        check(configured_command(home) == command,
              "the upgrade keeps the configured command's path", configured_command(home))
        version = host_shim(env, "--version")
        check(version.stdout.strip() == f"host-shim {newer}", "the upgraded command runs",
              version)
        report = doctor_finds_nothing_wrong("host-shim", [], env, "the upgrade")
        check(f"{command}) starts and lists sessions_list" in report,
              "doctor started the configured (upgraded) server", report)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    finish()


def sizes_version(sizes):
    """The version the tarballs were built with, from the main tarball's name."""
    name = sizes["main"]["file"]  # session-tools-host-shim-0.1.0.tgz
    return name.removeprefix("session-tools-host-shim-").removesuffix(".tgz")


if __name__ == "__main__":
    main()
