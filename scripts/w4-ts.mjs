// W4 driven by the TypeScript SDK's client (@modelcontextprotocol/sdk), the
// client desktop agents use: satchel serve over stdio and over streamable
// HTTP, and @modelcontextprotocol/server-filesystem over stdio, in one run.
// Each phase reports calls per second, p50/p99, and the CPU time a call
// cost the server's process (utime + stime from /proc/PID/stat before and
// after the phase) and this client's process; the machine's idle share
// during the phase (/proc/stat). Run it through scripts/w4-ts.sh.
//
//   node w4-ts.mjs   env: SATCHEL_BINS (comma-separated satchel binaries,
//   run in turn), FS_ENTRY (server-filesystem's dist/index.js), N (1000),
//   CONC ("1,16"), ROUNDS (1), TRANSPORTS ("stdio,http"; also http-v2 and
//   http2026, with the 2.x client at 2025-11-25 and 2026-07-28), PEER (1: run
//   server-filesystem each round)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

// The SDK and the peer come from the npm cache directory (CACHE_DIR).
const CACHE_DIR = process.env.CACHE_DIR ?? '.cache/mcp-conformance';
const require = createRequire(path.resolve(CACHE_DIR, 'package.json'));
const load = (p) => import(pathToFileURL(require.resolve(p)).href);
const { Client } = await load('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = await load('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = await load('@modelcontextprotocol/sdk/client/streamableHttp.js');
// The 2.x client (@modelcontextprotocol/client, installed by
// scripts/mcp-conformance.sh), for the transports http-v2 (2025-11-25,
// satchel's own transport) and http2026 (2026-07-28, the Go SDK's handler).
const v2 = async () => load('@modelcontextprotocol/client');

const N = Number(process.env.N ?? 1000);
const GLOB_CALLS = 1000;
const CONC = (process.env.CONC ?? '1,16').split(',').map(Number);
const ROUNDS = Number(process.env.ROUNDS ?? 1);
const TRANSPORTS = (process.env.TRANSPORTS ?? 'stdio,http').split(',');
const BINS = (process.env.SATCHEL_BINS ?? '').split(',').filter(Boolean);
const FS_ENTRY = process.env.FS_ENTRY ?? path.join(path.resolve(CACHE_DIR), 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const PEER = (process.env.PEER ?? '1') !== '0' && FS_ENTRY !== '';
if (BINS.length === 0) throw new Error('set SATCHEL_BINS to the satchel binaries to measure');

// W1's corpus (WORKLOADS.md; internal/bench/corpus.go): mulberry32 per file.
const ALPHA = 'abcdefghijklmnopqrstuvwxyz';
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}
const pad = (n, w) => String(n).padStart(w, '0');
const w1Path = (i) => `notes/d${pad(i % 100, 2)}/f${pad(i, 5)}.md`;
function w1Content(i, seed = 1) {
  const r = mulberry32((Math.imul(seed, 0x9E3779B1) + Math.imul(i + 1, 0x85EBCA77)) >>> 0);
  const lines = [];
  for (let k = 1; k <= 100; k++) {
    const s = `line ${k} of file ${i}: `;
    let f = '';
    for (let c = s.length; c < 72; c++) f += ALPHA[r() % 26];
    lines.push(s + f);
  }
  lines[49] = `MARKER-${i}`;
  if (i % 7 === 0) lines[76] = `TODO-${i}`;
  return lines.join('\n') + '\n';
}
const contents = Array.from({ length: N }, (_, i) => w1Content(i));
const globWant = (() => { let c = 0; for (let i = 7; i < N; i += 100) c++; return c; })();

// CPU time of a process (µs), from /proc/PID/stat: utime and stime, in
// clock ticks of 10 ms.
function procCPU(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10000;
}
function selfCPU() { const u = process.cpuUsage(); return u.user + u.system; }
function machineIdle() {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { idle: f[3] + f[4], total: f.reduce((a, b) => a + b, 0) };
}
const text = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
const lines = (t) => { t = t.replace(/\n$/, ''); return t === '' ? 0 : t.split('\n').length; };
const pct = (a, p) => a[Math.min(a.length - 1, Math.floor(p * a.length))];

function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')}: ${err}`))));
  });
}

// Each server: how to start it, its pid, and how each phase's call is
// made and checked.
async function startSatchel(bin, transport) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'satchel-w4ts-'));
  const db = path.join(dir, 'w4.db');
  let client = new Client({ name: 'satchel-bench-w4-ts', version: '1' });
  let HTTPTransport = StreamableHTTPClientTransport;
  if (transport === 'http-v2' || transport === 'http2026') {
    const m = await v2();
    HTTPTransport = m.StreamableHTTPClientTransport;
    client = new m.Client({ name: 'satchel-bench-w4-ts', version: '1' },
      transport === 'http2026' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  }
  let pid, stop = async () => {};
  if (transport === 'stdio') {
    const t = new StdioClientTransport({ command: bin, args: ['--db', db, '--scope', 'bench', '--thread', 'w4', 'serve'], stderr: 'ignore' });
    await client.connect(t);
    pid = t.pid;
  } else {
    const secret = (await run(bin, ['--db', db, 'token', 'create', '--agent', 'bench', '--scope', 'bench'])).trim();
    const p = spawn(bin, ['--db', db, 'serve', '--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const addr = await new Promise((resolve, reject) => {
      const rl = readline.createInterface({ input: p.stderr });
      rl.on('line', (l) => { const m = /"addr":"(127\.0\.0\.1:\d+)"/.exec(l); if (m) resolve(m[1]); });
      p.on('exit', () => reject(new Error('satchel serve --http exited')));
    });
    pid = p.pid;
    const t = new HTTPTransport(new URL(`http://${addr}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${secret}`, 'X-Satchel-Thread': 'w4' } },
    });
    await client.connect(t);
    stop = () => new Promise((resolve) => { p.on('exit', resolve); p.kill('SIGTERM'); });
  }
  return {
    system: BINS.length > 1 ? `satchel:${bin}` : 'satchel', transport, client, pid,
    write: (i) => ['write_file', { path: w1Path(i), content: contents[i] }, null],
    read: (i) => ['read_file', { path: w1Path(i), start_line: 20, end_line: 40, numbered: false },
      (t) => lines(t) === 21 && t.startsWith('line 20 of')],
    edit: (i) => ['edit_file', { path: w1Path(i), old_text: `MARKER-${i}`, new_text: `EDITED-${i}` },
      (t) => t.startsWith('replaced 1 occurrence in ')],
    glob: () => ['glob', { pattern: 'notes/d07/*.md' }, (t) => lines(t) === globWant],
    count: async () => lines(text(await client.callTool({ name: 'glob', arguments: { pattern: 'notes/**/*.md' } }))),
    close: async () => { await client.close(); await stop(); fs.rmSync(dir, { recursive: true, force: true }); },
  };
}

async function startFilesystem() {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'satchel-w4ts-fs-')));
  for (let d = 0; d < Math.min(N, 100); d++) fs.mkdirSync(path.join(root, 'notes', `d${pad(d, 2)}`), { recursive: true });
  const abs = (i) => path.join(root, w1Path(i));
  const client = new Client({ name: 'satchel-bench-w4-ts', version: '1' });
  const t = new StdioClientTransport({ command: process.execPath, args: [FS_ENTRY, root], stderr: 'ignore' });
  await client.connect(t);
  return {
    system: 'server-filesystem', transport: 'stdio', client, pid: t.pid,
    write: (i) => ['write_file', { path: abs(i), content: contents[i] }, null],
    read: (i) => ['read_text_file', { path: abs(i), head: 40 },
      (t) => { const l = t.replace(/\n$/, '').split('\n'); return l.length === 40 && l[19].startsWith('line 20 of'); }],
    edit: (i) => ['edit_file', { path: abs(i), edits: [{ oldText: `MARKER-${i}`, newText: `EDITED-${i}` }] },
      (t) => t.includes(`+EDITED-${i}\n`) && t.includes(`-MARKER-${i}\n`)],
    glob: () => ['search_files', { path: path.join(root, 'notes', 'd07'), pattern: '*.md' }, (t) => lines(t) === globWant],
    count: async () => {
      let n = 0;
      for (const d of fs.readdirSync(path.join(root, 'notes'))) n += fs.readdirSync(path.join(root, 'notes', d)).filter((f) => f.endsWith('.md')).length;
      return n;
    },
    close: async () => { await client.close(); fs.rmSync(root, { recursive: true, force: true }); },
  };
}

// phase makes ops calls, conc at a time on the one session.
async function phase(s, name, conc, ops, make, round) {
  const lat = [];
  let next = 0;
  const idle0 = machineIdle(), srv0 = procCPU(s.pid), cli0 = selfCPU(), t0 = performance.now();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= ops) return;
      const [tool, args, check] = make(i);
      const st = performance.now();
      const r = await s.client.callTool({ name: tool, arguments: args });
      lat.push(performance.now() - st);
      const t = text(r);
      if (r.isError) throw new Error(`${s.system} ${name} call ${i} refused: ${t}`);
      if (check && !check(t)) throw new Error(`${s.system} ${name} call ${i}: unexpected result ${JSON.stringify(t.slice(0, 120))}`);
    }
  };
  await Promise.all(Array.from({ length: conc }, worker));
  const secs = (performance.now() - t0) / 1000, srv = procCPU(s.pid) - srv0, cli = selfCPU() - cli0, idle1 = machineIdle();
  lat.sort((a, b) => a - b);
  const r = {
    system: s.system, workload: 'W4', client: 'ts', transport: s.transport, concurrency: conc, phase: name, round, ops,
    ops_per_s: +(ops / secs).toFixed(1), p50_us: Math.round(pct(lat, 0.5) * 1000), p99_us: Math.round(pct(lat, 0.99) * 1000),
    server_cpu_us: Math.round(srv / ops), client_cpu_us: Math.round(cli / ops),
    cpu_idle: +((idle1.idle - idle0.idle) / Math.max(1, idle1.total - idle0.total)).toFixed(3),
  };
  console.log(JSON.stringify(r));
  return r;
}

async function phases(s, conc, round) {
  await phase(s, 'write', conc, N, s.write, round);
  const got = await s.count();
  if (got !== N) throw new Error(`${s.system}: ${got} files after the writes, want ${N}`);
  await phase(s, 'read-bounded', conc, N, s.read, round);
  await phase(s, 'edit', conc, N, s.edit, round);
  await phase(s, 'glob-dir', conc, GLOB_CALLS, s.glob, round);
}

for (let round = 0; round < ROUNDS; round++) {
  for (const conc of CONC) {
    // Alternate the binaries' order from round to round, the peer last.
    const bins = round % 2 === 0 ? BINS : [...BINS].reverse();
    for (const bin of bins) {
      for (const tr of TRANSPORTS) {
        const s = await startSatchel(bin, tr);
        try { await phases(s, conc, round); } finally { await s.close(); }
      }
    }
    if (PEER) {
      const s = await startFilesystem();
      try { await phases(s, conc, round); } finally { await s.close(); }
    }
  }
}
