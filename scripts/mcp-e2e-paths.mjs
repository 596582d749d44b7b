// File rules end to end with the official TypeScript SDK client (run by
// scripts/mcp-conformance.sh): rows of the file rules table (satcheltest's
// AccessCases) over streamable HTTP, with a token that narrows its agent's
// agent.json "files", and over stdio with serve --read-only. A hidden file
// reads as missing and no listing names it; a read-only one refuses
// changes with satchel's exact message.
//
// usage: node mcp-e2e-paths.mjs CACHE_DIR SATCHEL WORK_DIR
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync, readFileSync } from "node:fs";
import { scriptArgs, loader, sdk, check, finish } from "./e2e-common.mjs";

const [cacheDir, satchel, work] = scriptArgs("CACHE_DIR", "SATCHEL", "WORK_DIR");
const load = loader(cacheDir);
const { Client, StreamableHTTPClientTransport, StdioClientTransport } = await sdk(load);

// The table's fixture: the agent research reads everything but secrets/,
// writes notes/ only; the token hides private/ too.
const dir = `${work}/paths`, db = `${dir}/paths.db`, project = `${dir}/project`;
mkdirSync(`${project}/agents/research`, { recursive: true });
writeFileSync(`${project}/agents/research/agent.json`,
  JSON.stringify({ name: "research", files: [["secrets/**", "none"], ["notes/**", "rw"], ["**", "read"]] }));
const S = (...args) => execFileSync(satchel, ["--db", db, "--scope", "paths", ...args], { encoding: "utf8" });
const files = {
  "notes/a.md": "alpha notes\n", "notes/b.md": "beta notes\n", "docs/readme.md": "hello docs\n",
  "secrets/key.md": "TOKEN-SECRET password\n", "private/diary.md": "DIARY-SECRET entry\n",
};
for (const [p, c] of Object.entries(files)) S("fs", "write", p, c);
const token = S("token", "create", "--agent", "research", "--files", "private/**=none,**=rw").trim();

const text = (r) => (r.content ?? []).map((c) => c.text ?? "").join("\n") + JSON.stringify(r.structuredContent ?? {});

// rows: [name, tool, arguments, want: {err} or {shows, hides}]
async function run(label, client, rows) {
  for (const [name, tool, args, want] of rows) {
    try {
      const r = await client.callTool({ name: tool, arguments: args });
      const t = text(r);
      if (want.err) {
        check(`${label} ${name}`, r.isError === true && r.content?.[0]?.text === want.err, t);
      } else {
        const missing = (want.shows ?? []).filter((s) => !t.includes(s));
        const leaked = (want.hides ?? []).filter((s) => t.includes(s));
        check(`${label} ${name}`, !r.isError && missing.length === 0 && leaked.length === 0,
          `missing ${missing}, leaked ${leaked}: ${t}`);
      }
    } catch (e) {
      check(`${label} ${name}`, false, e?.message ?? String(e));
    }
  }
}

const hidden = ["secrets/key.md", "TOKEN-SECRET", "private/diary.md", "DIARY-SECRET"];

// HTTP: the token narrows the agent's rules.
const server = spawn(satchel, ["--db", db, "--scope", "paths", "serve", "--http", "127.0.0.1:0", "--dir", project],
  { stdio: ["ignore", "ignore", "pipe"] });
let log = "";
server.stderr.on("data", (d) => { log += d; });
let addr = "";
for (let i = 0; i < 100 && !addr; i++) {
  await new Promise((r) => setTimeout(r, 100));
  addr = (log.match(/"addr":"(127\.0\.0\.1:\d+)"/) ?? [])[1] ?? "";
}
console.log("file rules over HTTP (agent rules, narrowed by the token):");
if (!addr) {
  check("http serve starts", false, log);
} else {
  const client = new Client({ name: "satchel-e2e-paths", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://${addr}/mcp`),
    { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  await run("http", client, [
    ["read of an rw file", "read_file", { path: "notes/a.md" }, { shows: ["alpha notes"] }],
    ["write of a read file", "write_file", { path: "docs/readme.md", content: "x\n" }, { err: "docs/readme.md is read-only for agent research" }],
    ["read of a file the agent's rules hide", "read_file", { path: "secrets/key.md" }, { err: "file not found: secrets/key.md" }],
    ["read of a file the token hides", "read_file", { path: "private/diary.md" }, { err: "file not found: private/diary.md" }],
    ["write of a hidden file", "write_file", { path: "secrets/new.md", content: "x\n" }, { err: "secrets/new.md is hidden from agent research: it cannot be written" }],
    ["grep whose matches are all hidden", "grep", { pattern: "SECRET" }, { hides: hidden }],
    ["glob leaves hidden files out", "glob", { pattern: "**" }, { shows: ["notes/a.md", "docs/readme.md"], hides: hidden }],
    ["history names no hidden file", "history", {}, { hides: hidden }],
  ]);
  try {
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri).join(" ");
    check("http resources/list leaves hidden files out", uris.includes("notes/a.md") && !hidden.some((h) => uris.includes(h)), uris);
  } catch (e) {
    check("http resources/list leaves hidden files out", false, e?.message ?? String(e));
  }
  await client.close();
}
server.kill();

// stdio: serve --read-only, the agent's rules.
console.log("file rules over stdio (serve --read-only):");
const stdio = new Client({ name: "satchel-e2e-paths", version: "1.0.0" });
await stdio.connect(new StdioClientTransport({
  command: satchel,
  args: ["--db", db, "--scope", "paths", "serve", "--agent", "research", "--dir", project, "--read-only", "--log-level", "error"],
  stderr: "inherit",
}));
await run("stdio", stdio, [
  ["read of a read file", "read_file", { path: "docs/readme.md" }, { shows: ["hello docs"] }],
  ["write under --read-only", "write_file", { path: "notes/a.md", content: "x\n" }, { err: "notes/a.md is read-only for agent research" }],
  ["read of a hidden file", "read_file", { path: "secrets/key.md" }, { err: "file not found: secrets/key.md" }],
  ["restore under --read-only", "restore", { to: "1" }, { err: "restore to 1 would change files agent research may not write: docs/readme.md, notes/b.md, private/diary.md, and files hidden from it" }],
  ["list_files leaves hidden files out", "list_files", {}, { shows: ["private/diary.md"], hides: ["secrets/key.md", "TOKEN-SECRET"] }],
]);
await stdio.close();

finish("file rules checks");
