// A realistic session at MCP 2026-07-28 with the official TypeScript client
// (@modelcontextprotocol/client 2.x, pinned to 2026-07-28: no fallback),
// over HTTP with a token, over HTTP without one, and over stdio: write, read,
// edit, glob, grep, checkpoint, fork, the thread of one request (header and
// _meta), and a collection query; then, over stdio and over HTTP with a
// token, a subscriptions/listen to a file and a glob, sent
// notifications/resources/updated for a write another client makes through
// the other transport. Run by scripts/mcp-conformance.sh.
//
// usage: node mcp-e2e-2026.mjs CACHE_DIR SATCHEL DB PROJECT_DIR URL TOKEN
import { scriptArgs, loader, check, attempt, finish } from "./e2e-common.mjs";

const [cacheDir, satchel, db, projectDir, url, token] = scriptArgs("CACHE_DIR", "SATCHEL", "DB", "PROJECT_DIR", "URL", "TOKEN");
const load = loader(cacheDir);
const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client");
const { StdioClientTransport } = await load("@modelcontextprotocol/client/stdio");

const version = "2026-07-28";
const text = (r) => r?.content?.[0]?.text;
const newClient = () => new Client({ name: "satchel-e2e-2026", version: "1.0.0" },
  { versionNegotiation: { mode: { pin: version } } });

async function session(label, transport, threadTransport) {
  console.log(`${label} at ${version}:`);
  const client = newClient();
  const call = (name, args, extra) => client.callTool({ name, arguments: args, ...extra });
  const dir = `e2e-${label}`;
  await attempt(`${label} connect`, async () => {
    await client.connect(transport);
    check(`${label} connect: negotiated ${version}`, client.getNegotiatedProtocolVersion() === version,
      `negotiated ${client.getNegotiatedProtocolVersion()}`);
  });
  await attempt(`${label} tools/list`, async () => {
    const { tools } = await client.listTools();
    const names = new Set(tools.map((t) => t.name));
    const missing = ["write_file", "read_file", "edit_file", "glob", "grep", "checkpoint", "fork",
      "store__notes__set", "store__notes__query"].filter((n) => !names.has(n));
    check(`${label} tools/list (${tools.length} tools)`, missing.length === 0, `missing ${missing}`);
  });
  await attempt(`${label} write, read, edit`, async () => {
    const w = await call("write_file", { path: `${dir}/plan.md`, content: "# Plan\ndraft: gather notes\n" });
    const r = await call("read_file", { path: `${dir}/plan.md`, numbered: false });
    const e = await call("edit_file", { path: `${dir}/plan.md`, old_text: "draft", new_text: "final" });
    const r2 = await call("read_file", { path: `${dir}/plan.md`, numbered: false });
    check(`${label} write_file, read_file, edit_file`,
      !w.isError && text(r) === "# Plan\ndraft: gather notes\n" && !e.isError && text(r2) === "# Plan\nfinal: gather notes\n",
      JSON.stringify([w, r, e, r2]));
  });
  await attempt(`${label} glob, grep`, async () => {
    await call("write_file", { path: `${dir}/notes/a.md`, content: "alpha gather\n" });
    const g = await call("glob", { pattern: `${dir}/**/*.md` });
    const s = await call("grep", { pattern: "gather", path: dir });
    check(`${label} glob and grep`,
      text(g) === `${dir}/notes/a.md\n${dir}/plan.md` && /plan\.md/.test(text(s)) && /a\.md/.test(text(s)),
      JSON.stringify([g, s]));
  });
  await attempt(`${label} checkpoint, fork`, async () => {
    const c = await call("checkpoint", { name: `${label}-v1` });
    const f = await call("fork", { name: `${label}-alt` });
    check(`${label} checkpoint and fork`, !c.isError && !f.isError, JSON.stringify([c, f]));
  });
  await attempt(`${label} a thread per request`, async () => {
    // _meta names the thread of one call; the next call is back on main.
    const w = await call("write_file", { path: `${dir}/alt-only.md`, content: "alt\n" },
      { _meta: { "dev.satchel/thread": `${label}-alt` } });
    const onAlt = await call("glob", { pattern: `${dir}/alt-only.md` }, { _meta: { "dev.satchel/thread": `${label}-alt` } });
    const onMain = await call("glob", { pattern: `${dir}/alt-only.md` });
    check(`${label} _meta "dev.satchel/thread" names the thread of one request`,
      !w.isError && text(onAlt) === `${dir}/alt-only.md` && /no files match/.test(text(onMain)),
      JSON.stringify([w, onAlt, onMain]));
  });
  if (threadTransport) {
    await attempt(`${label} X-Satchel-Thread`, async () => {
      const alt = newClient();
      await alt.connect(threadTransport);
      const g = await alt.callTool({ name: "glob", arguments: { pattern: `${dir}/alt-only.md` } });
      check(`${label} X-Satchel-Thread names the thread of each request`, text(g) === `${dir}/alt-only.md`, JSON.stringify(g));
      await alt.close();
    });
  }
  await attempt(`${label} collection query`, async () => {
    const set = await call("store__notes__set", { id: `${label}-1`, text: "gather the notes" });
    const q = await call("store__notes__query", {});
    check(`${label} store__notes__set then store__notes__query`,
      !set.isError && !q.isError && JSON.stringify(q).includes(`${label}-1`), JSON.stringify([set, q]));
  });
  await client.close();
}

// subscription listens (subscriptions/listen) over one transport to a file
// and a glob, has another client write that file over the other transport,
// and waits (10 s at most) for notifications/resources/updated of both URIs.
async function subscription(label, listenTransport, writeTransport) {
  console.log(`${label} subscription at ${version}:`);
  const dir = `e2e-sub-${label}`;
  const file = `satchel:///${dir}/a.md`, glob = `satchel:///?glob=${dir}/**`;
  const listener = newClient(), writer = newClient();
  const updates = new Set();
  let wake = () => {};
  listener.setNotificationHandler("notifications/resources/updated", (n) => { updates.add(n.params.uri); wake(); });
  const both = () => updates.has(file) && updates.has(glob);
  const arrived = new Promise((resolve) => { wake = () => { if (both()) resolve(); }; });
  let sub;
  await attempt(`${label} subscriptions/listen`, async () => {
    await listener.connect(listenTransport);
    sub = await listener.listen({ resourceSubscriptions: [file, glob] });
    const honored = sub.honoredFilter?.resourceSubscriptions ?? [];
    check(`${label} subscriptions/listen to a file and a glob is acknowledged`,
      honored.includes(file) && honored.includes(glob), JSON.stringify(sub.honoredFilter));
  });
  if (!sub) return;
  await attempt(`${label} a write notified`, async () => {
    await writer.connect(writeTransport);
    const w = await writer.callTool({ name: "write_file", arguments: { path: `${dir}/a.md`, content: "changed\n" } });
    if (w.isError) throw new Error(`write_file: ${JSON.stringify(w)}`);
    let timer;
    const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`within 10 s, only ${JSON.stringify([...updates])}`)), 10000); });
    await Promise.race([arrived, timeout]).finally(() => clearTimeout(timer));
    check(`${label} a write by another client is notified for the file and the glob`, both(), JSON.stringify([...updates]));
  });
  await attempt(`${label} close`, async () => {
    await sub.close();
    check(`${label} the subscription closes`, (await sub.closed) === "local", "not closed locally");
  });
  await writer.close();
  await listener.close();
}

const http = (headers) => new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
const stdio = () => new StdioClientTransport({
  command: satchel,
  args: ["--db", db, "--scope", "conformance", "serve", "--agent", "agent", "--dir", projectDir],
  stderr: "ignore",
});
await session("http-token", http({ Authorization: `Bearer ${token}` }),
  http({ Authorization: `Bearer ${token}`, "X-Satchel-Thread": "http-token-alt" }));
await session("http-no-token", http({}), http({ "X-Satchel-Thread": "http-no-token-alt" }));
await session("stdio", stdio());
await subscription("stdio", stdio(), http({ Authorization: `Bearer ${token}` }));
await subscription("http-token", http({ Authorization: `Bearer ${token}` }), stdio());

finish("e2e 2026-07-28");
