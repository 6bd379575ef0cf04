#!/usr/bin/env python3
"""Builds the npm package of the host-shim command: the prebuilt, statically linked
binaries (Linux x86_64 and aarch64, musl) and their tarballs, ready for `npm install`
or `npm publish` (publishing is a person's act; nothing here publishes).

    python3 host-shim/npm/build.py [--version V] [--targets x86_64,aarch64] [--out DIR]

For each target: `cargo zigbuild --profile dist -p host-shim-cli`, with Zig's C
toolchain as the cross linker (the PyPI wheels `ziglang` and `cargo-zigbuild`, pinned
by hash in requirements.txt, installed into target/zig-venv) and the target's Rust
standard library added by rustup, as the build adds the wasm target. The binary reports
the package's version (`HOST_SHIM_VERSION`, `host-shim --version`, the MCP server's
serverInfo), so doctor can tell a configured command of another version.

Out (default target/npm): packages/<name>/ as packed, tarballs/*.tgz, and sizes.json
(each binary's and tarball's bytes). What it writes: that folder (its packages/ and
tarballs/ made anew each run), target/zig-venv and Cargo's own target/<triple>/dist;
nothing outside the checkout but rustup's targets and cargo-zigbuild's cache.

What cannot be built here: macOS (arm64, x86_64). Every crate compiles for it, but the
link needs Apple's Security and CoreFoundation frameworks (the NATS client's TLS), which
come only with Apple's SDK, and nothing here could run the result (README.md, "What is
not built"). A Mac builds it with `cargo install --locked --path host-shim/cli`.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SCOPE = "@session-tools"
MAIN = f"{SCOPE}/host-shim"

# Rust's target, npm's `cpu`, and the platform package's name.
TARGETS = {
    "x86_64": ("x86_64-unknown-linux-musl", "x64"),
    "aarch64": ("aarch64-unknown-linux-musl", "arm64"),
}
# Every platform the main package names, built or not in this run: its package.json is
# the same whichever machine built it.
ALL_PLATFORMS = [f"{SCOPE}/host-shim-linux-{cpu}" for _, cpu in TARGETS.values()]


def run(command, **kwargs):
    print("+", " ".join(str(part) for part in command), flush=True)
    subprocess.run(command, check=True, **kwargs)


def workspace_version():
    text = (ROOT / "Cargo.toml").read_text()
    found = re.search(r'^\[workspace\.package\][^\[]*?^version = "([^"]+)"', text, re.M | re.S)
    if not found:
        sys.exit("build.py: no [workspace.package] version in Cargo.toml")
    return found.group(1)


def zig_venv():
    """The venv holding zig and cargo-zigbuild, made once from requirements.txt."""
    venv = ROOT / "target" / "zig-venv"
    if not (venv / "bin" / "cargo-zigbuild").exists():
        run([sys.executable, "-m", "venv", venv])
        run([venv / "bin" / "pip", "install", "--quiet", "--disable-pip-version-check",
             "--require-hashes", "-r", HERE / "requirements.txt"])
    return venv


def build_binary(target, version, venv):
    run(["rustup", "target", "add", target])
    env = dict(os.environ, HOST_SHIM_VERSION=version, CARGO_INCREMENTAL="0")
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    run(["cargo", "zigbuild", "--locked", "--profile", "dist", "-p", "host-shim-cli",
         "--target", target], cwd=ROOT, env=env)
    return ROOT / "target" / target / "dist" / "host-shim"


def platform_package(folder, cpu, version, binary):
    name = f"{SCOPE}/host-shim-linux-{cpu}"
    (folder / "bin").mkdir(parents=True)
    shutil.copy2(binary, folder / "bin" / "host-shim")
    (folder / "bin" / "host-shim").chmod(0o755)
    manifest = {
        "name": name,
        "version": version,
        "description": f"The host-shim command for Linux {cpu}, statically linked "
                       f"(musl): installed by {MAIN}, not on its own",
        "license": "Apache-2.0",
        "os": ["linux"],
        "cpu": [cpu],
        "files": ["bin/host-shim"],
        "preferUnplugged": True,
    }
    (folder / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (folder / "README.md").write_text(
        f"# {name}\n\nThe prebuilt `host-shim` command for Linux {cpu}. Install "
        f"`{MAIN}` instead: it picks this package on this platform.\n")


def main_package(folder, version):
    shutil.copytree(HERE / "host-shim", folder)
    manifest = json.loads((folder / "package.json").read_text())
    manifest["version"] = version
    manifest["optionalDependencies"] = {name: version for name in ALL_PLATFORMS}
    (folder / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")


def pack(folder, tarballs):
    out = subprocess.run(["npm", "pack", "--json", "--pack-destination", tarballs],
                         cwd=folder, check=True, capture_output=True, text=True).stdout
    return tarballs / json.loads(out)[0]["filename"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=workspace_version())
    parser.add_argument("--targets", default="x86_64,aarch64")
    parser.add_argument("--out", type=Path, default=ROOT / "target" / "npm")
    args = parser.parse_args()
    targets = args.targets.split(",")
    for target in targets:
        if target not in TARGETS:
            sys.exit(f"build.py: no target {target!r}; the targets are {', '.join(TARGETS)}")

    venv = zig_venv()
    packages, tarballs = args.out / "packages", args.out / "tarballs"
    for folder in (packages, tarballs):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    sizes = {}
    for target in targets:
        triple, cpu = TARGETS[target]
        binary = build_binary(triple, args.version, venv)
        folder = packages / f"host-shim-linux-{cpu}"
        platform_package(folder, cpu, args.version, binary)
        tarball = pack(folder, tarballs)
        sizes[triple] = {"binary": binary.stat().st_size, "tarball": tarball.stat().st_size,
                         "file": tarball.name}
    main_package(packages / "host-shim", args.version)
    tarball = pack(packages / "host-shim", tarballs)
    sizes["main"] = {"tarball": tarball.stat().st_size, "file": tarball.name}
    (args.out / "sizes.json").write_text(json.dumps(sizes, indent=2) + "\n")
    for what, size in sizes.items():
        print(f"{what}: " + ", ".join(f"{k} {v:,} bytes" if isinstance(v, int) else v
                                      for k, v in size.items()))


if __name__ == "__main__":
    main()
