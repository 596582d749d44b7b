// Checks with the official TypeScript SDK client (run by
// scripts/mcp-conformance.sh): documents stored before their store's
// definition changed stay readable (the client validates structured
// content against each tool's output schema), a mistyped X-Satchel-Thread
// is refused with the scope's threads, and an atomic run_script reports
// its publish commit and marks the commits of its fork.
//
// usage: node mcp-e2e-findings.mjs CACHE_DIR SATCHEL WORK_DIR URL TOKEN
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { scriptArgs, loader, sdk, tally, check, attempt } from "./e2e-common.mjs";

const [cacheDir, satchel, work, url, token] = scriptArgs("CACHE_DIR", "SATCHEL", "WORK_DIR", "URL", "TOKEN");
const load = loader(cacheDir);
const { Client, StreamableHTTPClientTransport, StdioClientTransport } = await sdk(load);

// A project whose store changes after a document is stored.
const dir = `${work}/findings-project`, db = `${work}/findings.db`;
mkdirSync(`${dir}/stores`, { recursive: true });
mkdirSync(`${dir}/agents/a`, { recursive: true });
mkdirSync(`${dir}/scripts`, { recursive: true });
const def = (schema) => JSON.stringify({ name: "tasks", entity: { name: "Task", key: "{id}", schema } });
writeFileSync(`${dir}/stores/tasks.json`, def({ id: { type: "string" }, title: { type: "string" }, priority: { type: "number" } }));
writeFileSync(`${dir}/agents/a/agent.json`, JSON.stringify({ name: "A", stores: { tasks: "rw" } }));
writeFileSync(`${dir}/scripts/three.lua`, 'store.write("a.md", "a") store.write("b.md", "b") store.write("c.md", "c")\n');
execFileSync(satchel, ["--db", db, "--scope", "acme", "doc", "--dir", dir, "set", "tasks", '{"id": "t1", "title": "one", "priority": 1}']);
writeFileSync(`${dir}/stores/tasks.json`, def({ id: { type: "string" }, priority: { type: "string" }, due: { type: "datetime" } }));

console.log("findings (the official TypeScript client):");
const client = new Client({ name: "satchel-e2e-findings", version: "1.0.0" });
await client.connect(new StdioClientTransport({
  command: satchel,
  args: ["--db", db, "--scope", "acme", "serve", "--agent", "a", "--dir", dir, "--scripts", `${dir}/scripts`, "--log-level", "warn"],
}));
// The client validates structured content against the output schemas
// that tools/list gave it.
await client.listTools();
const why = ["priority: must be a string, not a number", "due: required field is missing", "title: unknown field (fields here: id, priority, due)"];
await attempt("a store's definition changed: get", async () => {
  const r = await client.callTool({ name: "store__tasks__get", arguments: { key: "t1" } });
  check("a store's definition changed: get returns the stored document, marked does_not_fit",
    !r.isError && r.structuredContent?.document?.title === "one" && JSON.stringify(r.structuredContent?.does_not_fit) === JSON.stringify(why),
    JSON.stringify(r));
});
for (const op of ["list", "query"]) {
  await attempt(`a store's definition changed: ${op}`, async () => {
    const r = await client.callTool({ name: `store__tasks__${op}`, arguments: {} });
    check(`a store's definition changed: ${op} returns it, marked by key`,
      !r.isError && r.structuredContent?.documents?.length === 1 && JSON.stringify(r.structuredContent?.does_not_fit?.t1) === JSON.stringify(why),
      JSON.stringify(r));
  });
}
await attempt("doc check", async () => {
  const r = spawnSync(satchel, ["--db", db, "doc", "--dir", dir, "check"], { encoding: "utf8" });
  check("satchel doc check lists the document that no longer fits, exit 1",
    r.status === 1 && r.stdout.startsWith(`tasks (scope acme) t1: ${why.join("; ")}\n`), JSON.stringify(r.stdout + r.stderr));
});
await attempt("atomic run_script", async () => {
  await client.callTool({ name: "write_file", arguments: { path: "first.md", content: "x" } });
  const r = await client.callTool({ name: "run_script", arguments: { script: "three.lua", atomic: true } });
  const sc = r.structuredContent, n = sc?.commits?.length ?? 0;
  check("an atomic run_script reports its publish commit and marks its fork's commits",
    !r.isError && sc?.published?.summary === "publish run of three.lua (3 commits)" && sc?.published?.via === "lua:three.lua" &&
      sc?.published?.client === "satchel-e2e-findings" && n === 4 && sc.commits.slice(0, 3).every((c) => /^main-run-[0-9a-f]{8}$/.test(c.fork)) &&
      sc.commits[3].seq === sc.published.seq && !sc.commits[3].fork,
    JSON.stringify(r));
});
await client.close();

await attempt("a mistyped X-Satchel-Thread", async () => {
  const c = new Client({ name: "satchel-e2e-findings", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers: { Authorization: `Bearer ${token}`, "X-Satchel-Thread": "no-such-thread" } } }));
  const r = await c.callTool({ name: "read_file", arguments: { path: "notes/hello.md" } });
  check("a mistyped X-Satchel-Thread: reads refused with the scope's threads",
    r.isError === true && /^thread "no-such-thread" does not exist in scope conformance; threads: .*main/.test(r.content?.[0]?.text ?? ""),
    JSON.stringify(r));
  await c.close();
});
process.exit(tally.failed ? 1 : 0);
