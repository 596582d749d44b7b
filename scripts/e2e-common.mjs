// What the end-to-end scripts run by scripts/mcp-conformance.sh share
// (scripts/mcp-e2e-*.mjs and scripts/mcp-conformance-extra.mjs): their
// arguments, the npm packages the .sh installs in its cache, and the tally
// of checks each prints as it goes.
import { createRequire } from "node:module";
import { basename } from "node:path";
import { pathToFileURL } from "node:url";

// scriptArgs returns the script's arguments, named by names for its
// usage line; without the last of them it prints the usage and exits 2.
export function scriptArgs(...names) {
  const a = process.argv.slice(2);
  if (!a[names.length - 1]) {
    console.error(`usage: ${basename(process.argv[1])} ${names.join(" ")}`);
    process.exit(2);
  }
  return a;
}

// loader returns a function that imports an npm package (or a file of
// one) from cacheDir, where scripts/mcp-conformance.sh installs them.
export function loader(cacheDir) {
  const require = createRequire(cacheDir + "/package.json");
  return (p) => import(pathToFileURL(require.resolve(p)).href);
}

// sdk loads the client of the official TypeScript SDK
// (@modelcontextprotocol/sdk) and its HTTP and stdio transports.
export async function sdk(load) {
  const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await load("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");
  return { Client, StreamableHTTPClientTransport, StdioClientTransport };
}

// tally counts the checks that passed and failed.
export const tally = { passed: 0, failed: 0 };

// check prints a check's outcome, with why it failed, and counts it.
export function check(name, ok, why) {
  if (ok) { tally.passed++; console.log(`  ✓ ${name}`); }
  else { tally.failed++; console.log(`  ✗ ${name}: ${why}`); }
}

// attempt runs fn; an exception it throws fails the check name.
export async function attempt(name, fn) {
  try { await fn(); } catch (e) { check(name, false, e?.message ?? String(e)); }
}

// finish prints "what: N passed, M failed" and exits, 1 when a check failed.
export function finish(what) {
  console.log(`${what}: ${tally.passed} passed, ${tally.failed} failed`);
  process.exit(tally.failed === 0 ? 0 : 1);
}
