// run_shell from the official TypeScript SDK client, over HTTP and over
// stdio (run by scripts/mcp-conformance.sh). It starts its own
// `satchel serve --shell` on a fresh database: a script that writes is one
// commit, one that reads makes none, a failing command exits 127 with its
// message, a runaway script ends with its bound's message and the server
// answers after it, and atomic publishes.
//
// usage: node mcp-e2e-shell.mjs CACHE_DIR SATCHEL WORK_DIR
import { spawn } from "node:child_process";
import { scriptArgs, loader, sdk, check, attempt, finish } from "./e2e-common.mjs";

const [cacheDir, satchel, workDir] = scriptArgs("CACHE_DIR", "SATCHEL", "WORK_DIR");
const load = loader(cacheDir);
const { Client, StreamableHTTPClientTransport, StdioClientTransport } = await sdk(load);

const db = workDir + "/shell-e2e.db";
const text = (r) => r?.content?.[0]?.text ?? "";

async function session(label, transport) {
  console.log(`run_shell over ${label}:`);
  const client = new Client({ name: "satchel-e2e-shell", version: "1.0.0" });
  await client.connect(transport);
  const sh = (script, atomic) => client.callTool({ name: "run_shell", arguments: atomic ? { script, atomic } : { script } });
  await attempt(`${label} tools-list`, async () => {
    const { tools } = await client.listTools();
    const t = tools.find((x) => x.name === "run_shell");
    check(`${label} tools-list: run_shell with script and atomic`,
      t && t.inputSchema?.properties?.script && t.inputSchema?.properties?.atomic && /grep/.test(t.description), JSON.stringify(t));
  });
  await attempt(`${label} write`, async () => {
    const r = await sh(`mkdir -p ${label} && printf 'a TODO\\nb\\n' > ${label}/notes.md && grep -c TODO ${label}/notes.md`);
    const sc = r.structuredContent;
    check(`${label} a writing run: stdout, exit status 0, one commit "sh: ..."`,
      !r.isError && sc?.stdout === "1\n" && sc?.exit_status === 0 && sc?.commit?.op === "sh" &&
      sc.commit.summary.startsWith(`sh: mkdir -p ${label}`) && text(r).startsWith("1\n[exit status 0; commit "),
      JSON.stringify(r));
  });
  await attempt(`${label} read`, async () => {
    const r = await sh(`grep -rn TODO ${label} | wc -l`);
    check(`${label} a reading run makes no commit`,
      !r.isError && r.structuredContent?.stdout === "1\n" && r.structuredContent?.commit === undefined, JSON.stringify(r));
  });
  await attempt(`${label} not found`, async () => {
    const r = await sh("curl https://example.com");
    check(`${label} an unknown command exits 127 with its message`,
      !r.isError && r.structuredContent?.exit_status === 127 &&
      r.structuredContent?.stderr === "sh: curl: command not found (satchel sh has only its built-in commands; see satchel sh --help)\n",
      JSON.stringify(r));
  });
  await attempt(`${label} runaway`, async () => {
    const r = await sh("seq 10737418240");
    const after = await sh(`cat ${label}/notes.md`);
    check(`${label} a runaway script ends with its bound's message, and the server answers after it`,
      r.isError === true && text(r) === "sh: the output is over --max-output (1 MiB): the run was stopped" &&
      !after.isError && after.structuredContent?.stdout === "a TODO\nb\n", JSON.stringify([r, after]));
  });
  await attempt(`${label} atomic`, async () => {
    const r = await sh(`sed -i s/TODO/DONE/ ${label}/notes.md && cat ${label}/notes.md`, true);
    check(`${label} atomic publishes by compare-and-swap`,
      !r.isError && r.structuredContent?.stdout === "a DONE\nb\n" && r.structuredContent?.commit?.op === "publish", JSON.stringify(r));
  });
  await client.close();
}

// HTTP: a server of its own, with --shell.
const server = spawn(satchel, ["--db", db, "serve", "--http", "127.0.0.1:0", "--insecure-no-auth", "--shell"],
  { stdio: ["ignore", "ignore", "pipe"] });
let log = "";
const url = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error("satchel serve did not start: " + log)), 20000);
  server.stderr.on("data", (d) => {
    log += d;
    const m = /"addr":"(127\.0\.0\.1:\d+)"/.exec(log);
    if (m) { clearTimeout(timer); resolve(`http://${m[1]}/mcp`); }
  });
  server.on("exit", (code) => reject(new Error(`satchel serve exited ${code}: ${log}`)));
});
try {
  await session("http", new StreamableHTTPClientTransport(new URL(url)));
} finally {
  server.kill();
}
await session("stdio", new StdioClientTransport({
  command: satchel, args: ["--db", db, "serve", "--shell", "--log-level", "warn"], stderr: "inherit",
}));
finish("run_shell checks");
