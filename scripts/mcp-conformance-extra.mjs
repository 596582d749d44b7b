// The checks that complete the MCP conformance suite for satchel serve
// (run by scripts/mcp-conformance.sh; see there). The suite's resource
// scenarios read fixture URIs (test://static-text, test://template/{id}/data)
// that only its reference server defines; these checks make the same
// assertions, with the official TypeScript SDK client, on satchel's own
// resources (satchel:///PATH and the template satchel:///{+path}), and run
// a session over stdio too, which the suite cannot drive.
//
// usage: node mcp-conformance-extra.mjs CACHE_DIR SATCHEL DB PROJECT_DIR URL TOKEN
import { scriptArgs, loader, sdk, check, attempt, finish } from "./e2e-common.mjs";

const [cacheDir, satchel, db, projectDir, url, token] = scriptArgs("CACHE_DIR", "SATCHEL", "DB", "PROJECT_DIR", "URL", "TOKEN");
const load = loader(cacheDir);
const { Client, StreamableHTTPClientTransport, StdioClientTransport } = await sdk(load);

const fileTools = ["read_file", "write_file", "append_file", "edit_file", "stat_file", "glob", "grep",
  "list_files", "delete_file", "move_file", "checkpoint", "history", "diff", "restore"];
// What scripts/mcp-conformance.sh wrote before starting the server.
const seeded = { "notes/hello.md": "# Hello\nfrom the conformance run\n", "my notes/a b.md": "spaces 123\n" };

async function session(label, transport) {
  console.log(`${label}:`);
  const client = new Client({ name: "satchel-conformance-extra", version: "1.0.0" });
  await attempt(`${label} initialize`, async () => {
    await client.connect(transport);
    const info = client.getServerVersion(), caps = client.getServerCapabilities();
    check(`${label} initialize`, info?.name === "satchel" && caps?.tools && caps?.resources,
      `serverInfo ${JSON.stringify(info)}, capabilities ${JSON.stringify(caps)}`);
  });
  await attempt(`${label} ping`, async () => {
    const r = await client.ping();
    check(`${label} ping`, r && Object.keys(r).length === 0, JSON.stringify(r));
  });
  await attempt(`${label} tools-list`, async () => {
    const { tools } = await client.listTools();
    const names = new Set(tools.map((t) => t.name));
    const bad = tools.filter((t) => !t.name || !t.description || t.inputSchema?.type !== "object").map((t) => t.name);
    const missing = [...fileTools, "run_script", "check_run", "store__notes__get", "store__notes__set", "store__notes__query",
      "store__notes__list", "store__notes__remove"].filter((n) => !names.has(n));
    check(`${label} tools-list: every tool named, described, with an object inputSchema (${tools.length} tools)`,
      bad.length === 0 && missing.length === 0, `undescribed ${bad}, missing ${missing}`);
  });
  await attempt(`${label} tools-call`, async () => {
    const w = await client.callTool({ name: "write_file", arguments: { path: `conformance/${label}.md`, content: "written\n" } });
    const r = await client.callTool({ name: "read_file", arguments: { path: `conformance/${label}.md`, numbered: false } });
    check(`${label} tools-call: write_file then read_file returns the text`,
      !w.isError && !r.isError && r.content?.[0]?.type === "text" && r.content[0].text === "written\n",
      JSON.stringify([w, r]));
  });
  await attempt(`${label} tools-call-error`, async () => {
    const r = await client.callTool({ name: "read_file", arguments: { path: "missing.md" } });
    check(`${label} tools-call-error: a refusal is isError with satchel's message`,
      r.isError === true && r.content?.[0]?.text === "file not found: missing.md", JSON.stringify(r));
  });
  await attempt(`${label} run_script`, async () => {
    const r = await client.callTool({ name: "run_script",
      arguments: { script: "greet.lua", input_text: label, args: ["from", label] } });
    const sc = r.structuredContent;
    const bad = await client.callTool({ name: "run_script",
      arguments: { script: "greet.lua", input_text: "a", input_file: "b" } });
    const slow = await client.callTool({ name: "run_script", arguments: { script: "greet.lua", input_text: "late", wait_s: 0 } });
    let done = slow;
    for (let i = 0; i < 200 && done.structuredContent?.state === "running"; i++) {
      done = await client.callTool({ name: "check_run", arguments: { run_id: slow.structuredContent.run_id } });
    }
    check(`${label} run_script: the declared output as text, prints and commits structured; refusals; check_run`,
      !r.isError && r.content?.[0]?.text === `Hello, ${label}!` && sc?.state === "succeeded" &&
      sc?.printed === `greeting from ${label}\n` && sc?.commits?.length === 2 &&
      bad.isError === true && bad.content?.[0]?.text === "input_file and input_text are mutually exclusive; specify one, not both" &&
      typeof slow.structuredContent?.run_id === "string" && !done.isError && done.content?.[0]?.text === "Hello, late!",
      JSON.stringify({ r, bad, slow, done }));
  });
  await attempt(`${label} resources-list`, async () => {
    const { resources } = await client.listResources();
    const hello = resources.find((x) => x.uri === "satchel:///notes/hello.md");
    check(`${label} resources-list: the files, each with uri, name and mimeType`,
      hello && hello.name === "notes/hello.md" && hello.mimeType && resources.every((x) => x.uri && x.name),
      JSON.stringify(resources));
  });
  await attempt(`${label} resources-read-text`, async () => {
    const r = await client.readResource({ uri: "satchel:///notes/hello.md" });
    const c = r.contents?.[0];
    check(`${label} resources-read-text: uri, mimeType and the text`,
      r.contents.length === 1 && c.uri === "satchel:///notes/hello.md" && c.mimeType && c.text === seeded["notes/hello.md"],
      JSON.stringify(r));
  });
  await attempt(`${label} resources-templates`, async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    const t = resourceTemplates.find((x) => x.uriTemplate === "satchel:///{+path}");
    const r = await client.readResource({ uri: "satchel:///my%20notes/a%20b.md" });
    const c = r.contents?.[0];
    check(`${label} resources-templates-read: satchel:///{+path} listed, a percent-encoded path read through it`,
      t && t.name && c?.uri === "satchel:///my%20notes/a%20b.md" && c.text === seeded["my notes/a b.md"],
      JSON.stringify({ resourceTemplates, r }));
  });
  await attempt(`${label} resources-read-missing`, async () => {
    let err;
    try { await client.readResource({ uri: "satchel:///nope.md" }); } catch (e) { err = e; }
    check(`${label} resources-read of a missing file is a JSON-RPC error`,
      err && /file not found: nope\.md/.test(err.message), err ? err.message : "no error");
  });
  await attempt(`${label} logging-set-level`, async () => {
    const r = await client.setLoggingLevel("info");
    check(`${label} logging-set-level`, r && Object.keys(r).length === 0, JSON.stringify(r));
  });
  await client.close();
}

const bearer = { requestInit: { headers: { Authorization: `Bearer ${token}` } } };
await session("http+token", new StreamableHTTPClientTransport(new URL(url), bearer));
await session("http-no-token", new StreamableHTTPClientTransport(new URL(url)));
await attempt("http bad token", async () => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: "Bearer stk_wrong" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  check("http: a wrong token is refused with 401 and WWW-Authenticate, even with --insecure-no-auth",
    res.status === 401 && res.headers.get("www-authenticate")?.startsWith("Bearer"), `HTTP ${res.status}`);
});
await session("stdio", new StdioClientTransport({
  command: satchel,
  args: ["--db", db, "--scope", "conformance", "serve", "--agent", "agent", "--dir", projectDir, "--scripts", projectDir + "/scripts", "--log-level", "warn"],
  stderr: "inherit",
}));
finish("extra checks");
