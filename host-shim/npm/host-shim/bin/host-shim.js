#!/usr/bin/env node
// `host-shim` from npm: runs the prebuilt command of this machine's platform, which
// npm installed beside this package as one of its optional dependencies (chosen by
// their `os` and `cpu`; nothing is downloaded or built at install). The harnesses set
// up by `host-shim setup` run that binary itself, by its path inside that package, so
// a hook or a server never starts Node.
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const PLATFORMS = {
  "linux x64": "@session-tools/host-shim-linux-x64",
  "linux arm64": "@session-tools/host-shim-linux-arm64",
};

const platform = `${process.platform} ${process.arch}`;
const name = PLATFORMS[platform];
if (!name) {
  fail(
    `there is no prebuilt host-shim for ${platform} (there is for: ${Object.keys(PLATFORMS).join(", ")}); ` +
      "build it from source: cargo install --locked --path host-shim/cli (the repository's README, \"From source\")",
  );
}
let binary;
try {
  binary = path.join(path.dirname(require.resolve(`${name}/package.json`)), "bin", "host-shim");
} catch {
  fail(
    `the package ${name}, which carries the command for ${platform}, is not installed: ` +
      "install again with optional dependencies (npm install -g @session-tools/host-shim, " +
      "without --omit=optional or --no-optional)",
  );
}
const run = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  fail(`could not run ${binary}: ${run.error.message}`);
}
if (run.signal) {
  process.kill(process.pid, run.signal);
}
process.exit(run.status ?? 1);

function fail(why) {
  console.error(`host-shim: ${why}`);
  process.exit(1);
}
