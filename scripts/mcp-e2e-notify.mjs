// Change notifications end to end, with the official TypeScript SDK
// client (run by scripts/mcp-conformance.sh): a session subscribed to a
// file and a glob, over stdio and over HTTP (its GET event stream), is
// sent notifications/resources/updated for a write another session makes
// through another transport; a session holds at most --max-subscriptions
// (64), the next refused naming the bound.
//
// usage: node mcp-e2e-notify.mjs CACHE_DIR SATCHEL DB PROJECT_DIR URL TOKEN
import { scriptArgs, loader, sdk, check, attempt, finish } from "./e2e-common.mjs";

const [cacheDir, satchel, db, projectDir, url, token] = scriptArgs("CACHE_DIR", "SATCHEL", "DB", "PROJECT_DIR", "URL", "TOKEN");
const load = loader(cacheDir);
const { Client, StreamableHTTPClientTransport, StdioClientTransport } = await sdk(load);
const { ResourceUpdatedNotificationSchema } = await load("@modelcontextprotocol/sdk/types.js");

// connect returns a client whose resource updates are collected.
async function connect(transport) {
  const client = new Client({ name: "satchel-e2e-notify", version: "1.0.0" });
  const updates = [];
  let wake = () => {};
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updates.push(n.params.uri); wake(); });
  await client.connect(transport);
  // next waits for the next update (at most 10 s).
  client.next = () => new Promise((resolve, reject) => {
    // A take that has resolved its promise lets go of wake: a later
    // update waits for the next call instead of being taken by this one.
    const take = () => { if (updates.length) { clearTimeout(timer); wake = () => {}; resolve(updates.shift()); return true; } return false; };
    const timer = setTimeout(() => reject(new Error("no notification within 10 s")), 10000);
    if (!take()) wake = take;
  });
  return client;
}
const write = (client, path, content) => client.callTool({ name: "write_file", arguments: { path, content } });

const stdio = () => new StdioClientTransport({
  command: satchel,
  args: ["--db", db, "--scope", "conformance", "serve", "--agent", "agent", "--dir", projectDir, "--log-level", "warn"],
  stderr: "inherit",
});
const http = () => new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });

console.log("change notifications:");
const overStdio = await connect(stdio());
const overHTTP = await connect(http());
await attempt("the subscribe capability", async () => {
  const caps = overStdio.getServerCapabilities();
  check("the subscribe capability", caps?.resources?.subscribe === true, JSON.stringify(caps?.resources));
});
await attempt("stdio: a write over HTTP is notified", async () => {
  await overStdio.subscribeResource({ uri: "satchel:///e2e/a.md" });
  await overStdio.subscribeResource({ uri: "satchel:///?glob=e2e/**" });
  await write(overHTTP, "e2e/a.md", "one");
  const got = [await overStdio.next(), await overStdio.next()].sort();
  check("stdio: a write over HTTP is notified", JSON.stringify(got) === JSON.stringify(["satchel:///?glob=e2e/**", "satchel:///e2e/a.md"]), JSON.stringify(got));
});
await attempt("http: a write over stdio is notified on the GET stream", async () => {
  await overHTTP.subscribeResource({ uri: "satchel:///e2e/b.md" });
  await write(overStdio, "e2e/b.md", "two");
  const got = await overHTTP.next();
  check("http: a write over stdio is notified on the GET stream", got === "satchel:///e2e/b.md", got);
});
await attempt("at most --max-subscriptions a session", async () => {
  for (let i = 0; i < 62; i++) await overHTTP.subscribeResource({ uri: `satchel:///e2e/many/${i}.md` });
  await overHTTP.subscribeResource({ uri: "satchel:///e2e/64.md" }); // the 64th
  let err;
  try { await overHTTP.subscribeResource({ uri: "satchel:///e2e/65.md" }); } catch (e) { err = e; }
  check("at most --max-subscriptions a session", err?.message?.includes("too many subscriptions: this session holds 64, the most --max-subscriptions allows (64)"),
    err ? err.message : "the 65th subscription was accepted");
});
await overStdio.close();
await overHTTP.close();
finish("change notifications");
