// A review end to end, with the official TypeScript SDK client over HTTP
// (run by scripts/mcp-conformance.sh): an agent whose token was made with
// --review writes; the result says its changes wait for review; the
// thread's head is unchanged; `satchel review approve` (the CLI, another
// process on the same database) merges them; the thread's head then has
// the change, and the agent's next call is told.
//
// usage: node mcp-e2e-review.mjs CACHE_DIR SATCHEL DB URL
import { execFileSync } from "node:child_process";
import { scriptArgs, loader, sdk, check, finish } from "./e2e-common.mjs";

const [cacheDir, satchel, db, url] = scriptArgs("CACHE_DIR", "SATCHEL", "DB", "URL");
const load = loader(cacheDir);
const { Client, StreamableHTTPClientTransport } = await sdk(load);

const scope = "e2e-review";
// S runs the CLI on the server's database, in the test's scope.
const S = (...args) => execFileSync(satchel, ["--db", db, "--scope", scope, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

console.log("review over HTTP:");
try {
  S("fs", "write", "notes/plan.md", "1. think\n2. write\n");
  const headBefore = JSON.parse(S("--json", "log", "--limit", "1"))[0]?.seq;
  const token = S("token", "create", "--agent", "agent", "--review").trim();
  const client = new Client({ name: "satchel-e2e-review", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));

  const read = await client.callTool({ name: "read_file", arguments: { path: "notes/plan.md", numbered: false } });
  const edit = await client.callTool({ name: "edit_file",
    arguments: { path: "notes/plan.md", old_text: "2. write", new_text: "2. write well" } });
  const notice = edit.content?.[1]?.text ?? "";
  const m = /^your changes wait for review (R-[0-9A-Z]{8})$/.exec(notice);
  check("the agent's edit says its changes wait for review",
    !read.isError && !edit.isError && edit.content?.length === 2 && m, JSON.stringify({ read, edit }));
  const id = m?.[1];

  const own = await client.callTool({ name: "read_file", arguments: { path: "notes/plan.md", numbered: false } });
  check("the agent reads its own change", own.content?.[0]?.text === "1. think\n2. write well\n", JSON.stringify(own));

  const headWaiting = JSON.parse(S("--json", "log", "--limit", "1"))[0]?.seq;
  const onThread = S("fs", "read", "notes/plan.md");
  check("the thread's head is unchanged while the review waits",
    headWaiting === headBefore && onThread === "1. think\n2. write\n", JSON.stringify({ headBefore, headWaiting, onThread }));

  const list = JSON.parse(S("--json", "review", "list", "--scope", scope));
  check("satchel review list shows it: thread, agent, files changed",
    list.length === 1 && list[0].id === id && list[0].thread === "main" && list[0].agent === "agent" && list[0].files === 1,
    JSON.stringify(list));

  const approved = S("review", "approve", id);
  const after = S("fs", "read", "notes/plan.md");
  const head = JSON.parse(S("--json", "log", "--limit", "1"))[0];
  check("satchel review approve merges it: the thread's head has the change",
    approved.startsWith(`approved review ${id}: merged review-${id}@`) && after === "1. think\n2. write well\n" &&
      head.op === "merge" && head.seq === headBefore + 1,
    JSON.stringify({ approved, after, head }));

  const next = await client.callTool({ name: "read_file", arguments: { path: "notes/plan.md", numbered: false } });
  check("the agent's next call is told of the approval",
    next.content?.[0]?.text === "1. think\n2. write well\n" &&
      next.content?.[1]?.text === `review ${id} was approved: its changes are in thread main (commit ${head.seq}); your next change starts a new review`,
    JSON.stringify(next));
  await client.close();
} catch (e) {
  check("review over HTTP", false, e?.stack ?? String(e));
}
finish("review checks");
