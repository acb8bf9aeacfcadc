// bench/report.mjs - turns the protocol lines of one benchmark run into the
// table and the goals evaluation of bench/README.md (called by bench/run.sh).
//
//   node bench/report.mjs RESULTS MACHINE OUT.md
//
// RESULTS holds the lines of idmint_bench, run_peers.sh and the CLI runs:
//   RESULT<TAB>impl<TAB>format<TAB>mode<TAB>threads<TAB>ns_per_id
//   MEM impl what bytes
//   CHECK snowflake name value
//   STATUS<TAB>name<TAB>ok|failed|skipped<TAB>detail (idmint and each peer:
//     its toolchain, or why it did not run)
//   NOTE free text (something that failed to run)
// MACHINE is a Markdown list describing the machine. The report goes to
// stdout and to OUT.md. It judges, it never fails: exit 0 unless the input
// cannot be read.
import { readFileSync, writeFileSync } from 'node:fs';

const [resultsPath, machinePath, outPath] = process.argv.slice(2);
if (!resultsPath || !machinePath || !outPath) {
  process.stderr.write('usage: node bench/report.mjs RESULTS MACHINE OUT.md\n');
  process.exit(2);
}

const results = []; // {impl, format, mode, threads, ns}
const mem = []; // {impl, what, bytes}
const checks = new Map(); // "snowflake max_per_ms" -> value
const notes = [];
const statuses = []; // {name, state, detail}, one per implementation
for (const line of readFileSync(resultsPath, 'utf8').split('\n')) {
  if (line.startsWith('RESULT\t')) {
    const [, impl, format, mode, threads, ns] = line.split('\t');
    const v = Number(ns);
    if (Number.isFinite(v) && v > 0) {
      results.push({ impl, format, mode, threads: Number(threads), ns: v });
    }
  } else if (line.startsWith('MEM ')) {
    const [, impl, what, bytes] = line.split(/\s+/);
    mem.push({ impl, what, bytes: Number(bytes) });
  } else if (line.startsWith('CHECK ')) {
    const [, subject, name, value] = line.split(/\s+/);
    checks.set(`${subject} ${name}`, Number(value));
  } else if (line.startsWith('STATUS\t')) {
    const [, name, state, ...detail] = line.split('\t');
    statuses.push({ name, state, detail: detail.join(' ').trim() });
  } else if (line.startsWith('NOTE ')) {
    notes.push(line.slice(5));
  }
}
const machine = readFileSync(machinePath, 'utf8').trimEnd();

// --- lookups --------------------------------------------------------------

const isFloor = (impl) => impl === 'floor' || impl.startsWith('floor:');
const idmintRows = results.filter((r) => r.impl === 'idmint');
const peerRows = results.filter((r) => r.impl !== 'idmint' && !isFloor(r.impl));

function idm(format, mode) {
  return idmintRows.find((r) => r.format === format && r.mode === mode);
}

function floorNs(format, mode) {
  const f = (fmt, md) => results.find((r) => r.impl === 'floor' && r.format === fmt && r.mode === md);
  return f(format, mode)?.ns;
}

// The peers' mode that an idmint mode is compared with: the peers mint one
// ID per call, so both idmint's batch and single-call rows face them.
const peerModeOf = {
  binary: 'binary',
  binary1: 'binary',
  text: 'text',
  text1: 'text',
  shared2: 'shared2',
  local2: 'local2',
  cli: 'cli',
};

function peersFor(format, mode) {
  const pm = peerModeOf[mode];
  if (!pm) {
    return [];
  }
  return peerRows.filter((r) => r.format === format && r.mode === pm).sort((a, b) => a.ns - b.ns);
}

// The floor: what any generator pays at least (bench/peers/c/floor.c):
// a clock_gettime amortised over the IDs of one call, plus the CSPRNG bytes
// the format consumes. Snowflakes are bound by their layout instead: 4,096
// IDs per ms per node for twitter.
const needs = {
  uuidv4: { clock: false, bytes: 16 },
  uuidv7: { clock: true, bytes: 10 },
  ulid: { clock: true, bytes: 10 },
  ksuid: { clock: true, bytes: 16 },
  typeid: { clock: true, bytes: 10 },
  token: { clock: false, bytes: 16 },
};
const BATCH = 256;
const SF_NS = 1e6 / 4096; // ns per ID at twitter's ceiling, one node

function floorFor(format, mode, threads) {
  if (mode === 'cli') {
    return null;
  }
  if (format === 'snowflake') {
    // Only thread-local generators (one node each) can exceed one node's ceiling.
    return { ns: mode === 'local2' ? SF_NS / 2 : SF_NS, what: 'ceiling' };
  }
  const need = needs[format];
  if (!need) {
    return null;
  }
  const per = mode === 'binary' || mode === 'text' ? BATCH : 1;
  let clock;
  let rand;
  if (threads === 2) {
    clock = floorNs('clock', 'local2') ?? floorNs('clock', 'binary') / 2;
    rand = (floorNs('rand16', 'local2') ?? floorNs('rand16', 'binary') / 2) * (need.bytes / 16);
  } else {
    clock = floorNs('clock', 'binary');
    rand = need.bytes === 16 ? floorNs('rand16', 'binary') : floorNs('rand10', 'binary');
  }
  if (!Number.isFinite(rand) || (need.clock && !Number.isFinite(clock))) {
    return null;
  }
  return { ns: (need.clock ? clock / per : 0) + rand, what: 'floor' };
}

// --- formatting -------------------------------------------------------------

function fmtNs(ns) {
  if (ns == null || !Number.isFinite(ns)) {
    return '—';
  }
  if (ns < 10) {
    return ns.toFixed(2);
  }
  if (ns < 1000) {
    return ns.toFixed(1);
  }
  return Math.round(ns).toLocaleString('en-US');
}

function fmtRate(ns) {
  const per = 1e9 / ns;
  if (per >= 1e6) {
    return `${(per / 1e6).toFixed(per >= 1e8 ? 0 : 1)} M`;
  }
  return `${(per / 1e3).toFixed(0)} k`;
}

// A snowflake peer faster than one node's ceiling does not wait when its
// sequence runs out (it wraps or repeats): marked, since no correct
// generator of one node can match it.
const overCeiling = (r) => r.format === 'snowflake' && r.threads === 1 && r.ns < SF_NS;
const peerName = (r) => (overCeiling(r) ? `${r.impl}†` : r.impl);

const x = (r) => (r >= 100 ? `${r.toFixed(0)}×` : `${r.toFixed(2)}×`);

function table(head, rows) {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(w[i])).join(' | ')} |`;
  return [line(head), `|${w.map((n) => '-'.repeat(n + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

// --- the table ----------------------------------------------------------------

const formatOrder = ['uuidv7', 'uuidv4', 'ulid', 'ksuid', 'snowflake', 'typeid', 'token'];
const modeOrder = [
  'binary', 'binary1', 'text', 'text1', 'shared1', 'shared2', 'local1', 'local2',
  'process1', 'hostwide1', 'hostwide2', 'ceiling', 'cli',
];
const rank = (list, v) => (list.includes(v) ? list.indexOf(v) : list.length);

// Every idmint row, and every peer row that no idmint row faces.
const keys = new Map();
for (const r of idmintRows) {
  keys.set(`${r.format}\t${r.mode}\t${r.threads}`, { format: r.format, mode: r.mode, threads: r.threads });
}
for (const r of peerRows) {
  const faced = idmintRows.some((i) => i.format === r.format && peerModeOf[i.mode] === r.mode);
  if (!faced) {
    keys.set(`${r.format}\t${r.mode}\t${r.threads}`, { format: r.format, mode: r.mode, threads: r.threads, peerOnly: true });
  }
}
const rowKeys = [...keys.values()].sort(
  (a, b) =>
    rank(formatOrder, a.format) - rank(formatOrder, b.format) ||
    a.format.localeCompare(b.format) ||
    rank(modeOrder, a.mode) - rank(modeOrder, b.mode) ||
    a.mode.localeCompare(b.mode) ||
    a.threads - b.threads,
);

const tableRows = [];
for (const k of rowKeys) {
  const me = k.peerOnly ? null : idm(k.format, k.mode);
  const peers = k.peerOnly
    ? peerRows.filter((r) => r.format === k.format && r.mode === k.mode).sort((a, b) => a.ns - b.ns)
    : peersFor(k.format, k.mode);
  const peerCell = peers
    .map((p) => (me ? `${peerName(p)} ${fmtNs(p.ns)} (${x(p.ns / me.ns)})` : `${peerName(p)} ${fmtNs(p.ns)}`))
    .join('; ');
  const best = peers[0];
  const fl = me ? floorFor(k.format, k.mode, k.threads) : null;
  tableRows.push([
    k.format,
    k.mode,
    k.threads,
    me ? fmtNs(me.ns) : '—',
    me ? fmtRate(me.ns) : '—',
    best ? (me ? `${peerName(best)} ${fmtNs(best.ns)} (${x(best.ns / me.ns)})` : `${peerName(best)} ${fmtNs(best.ns)}`) : '—',
    fl ? `${fmtNs(fl.ns)}${fl.what === 'ceiling' ? ' (ceiling)' : ''}` : '—',
    fl ? x(me.ns / fl.ns) : '—',
    peerCell || '—',
  ]);
}
const mainTable = table(
  ['format', 'mode', 'thr', 'idmint ns/ID', 'IDs/s', 'fastest peer ns/ID (peer/idmint)', 'floor ns/ID', 'idmint/floor', 'every peer: ns/ID (peer/idmint)'],
  tableRows,
);

const floorLines = results
  .filter((r) => isFloor(r.impl))
  .map((r) => `${r.impl} ${r.format} ${r.mode} (${r.threads} thr): ${fmtNs(r.ns)} ns`);

// --- goals ----------------------------------------------------------------------

let pass = 0;
let miss = 0;
const goalOut = [];
function verdict(ok) {
  if (ok) {
    pass++;
    return 'PASS';
  }
  miss++;
  return 'MISS';
}
const heading = (t) => goalOut.push('', `**${t}**`, '');
const item = (t) => goalOut.push(`- ${t}`);

const idFormats = ['uuidv7', 'ulid', 'ksuid', 'uuidv4'];

for (const [title, ms] of [
  ['1a. ≥ 3× the fastest peer, same format and mode: idmint\'s batch calls (256 IDs) vs the peers', ['binary', 'text']],
  ['1b. The same with idmint minting one ID per call, as the peers do', ['binary1', 'text1']],
]) {
  heading(title);
  for (const f of idFormats) {
    for (const m of ms) {
      const me = idm(f, m);
      const best = peersFor(f, m)[0];
      if (!me) {
        item(`${f} ${m}: idmint not measured — MISS`);
        miss++;
      } else if (!best) {
        item(`${f} ${m}: idmint ${fmtNs(me.ns)} ns; no peer measured in this mode — n/a`);
      } else {
        const r = best.ns / me.ns;
        item(`${f} ${m}: idmint ${fmtNs(me.ns)} ns vs ${best.impl} ${fmtNs(best.ns)} ns = ${x(r)} — ${verdict(r >= 3)}`);
      }
    }
  }
}

heading('2. ≤ 2× the floor (clock read over the batch + CSPRNG bytes)');
for (const f of idFormats) {
  for (const m of ['binary', 'text']) {
    const me = idm(f, m);
    const fl = floorFor(f, m, 1);
    if (!me || !fl) {
      item(`${f} ${m}: ${me ? 'floor' : 'idmint'} not measured — MISS`);
      miss++;
      continue;
    }
    const r = me.ns / fl.ns;
    item(`${f} ${m}: idmint ${fmtNs(me.ns)} ns vs floor ${fmtNs(fl.ns)} ns = ${x(r)} — ${verdict(r <= 2)}`);
  }
}

heading('3. Snowflake: ≥ 97% of twitter\'s 4,096,000 IDs/s, never over 4,096 in one ms');
{
  const c = idm('snowflake', 'ceiling');
  if (c) {
    const rate = 1e9 / c.ns;
    const r = rate / 4096000;
    item(`sustained ${Math.round(rate).toLocaleString('en-US')} IDs/s = ${(r * 100).toFixed(2)}% of the ceiling — ${verdict(r >= 0.97)}`);
  } else {
    item('ceiling not measured — MISS');
    miss++;
  }
  const maxMs = checks.get('snowflake max_per_ms');
  const ooo = checks.get('snowflake out_of_order');
  if (maxMs === undefined) {
    item('per-millisecond check not run — MISS');
    miss++;
  } else {
    item(`most IDs in one ms: ${maxMs}, IDs not above their predecessor: ${ooo ?? '?'} — ${verdict(maxMs <= 4096 && ooo === 0)}`);
  }
}

heading('4. Thread-local generators: 2 threads ≥ 1.8× the throughput of 1');
for (const f of [...idFormats, 'snowflake']) {
  const a = idm(f, 'local1');
  const b = idm(f, 'local2');
  if (!a || !b) {
    item(`${f}: not measured — MISS`);
    miss++;
    continue;
  }
  const r = a.ns / b.ns;
  const note = f === 'snowflake' ? ' (a node per thread)' : '';
  item(`${f}${note}: ${fmtNs(a.ns)} → ${fmtNs(b.ns)} ns/ID = ${x(r)} — ${verdict(r >= 1.8)}`);
}

heading('5. A shared generator: 2 threads ≥ 1.0× the throughput of 1 (no collapse)');
for (const f of [...idFormats, 'snowflake']) {
  const a = idm(f, 'shared1');
  const b = idm(f, 'shared2');
  if (!a || !b) {
    item(`${f}: not measured — MISS`);
    miss++;
    continue;
  }
  const r = a.ns / b.ns;
  if (f === 'snowflake') {
    item(`${f}: ${fmtNs(a.ns)} → ${fmtNs(b.ns)} ns/ID = ${x(r)} — info (one node: both at its ceiling, so 1.0× is the most possible)`);
  } else {
    item(`${f}: ${fmtNs(a.ns)} → ${fmtNs(b.ns)} ns/ID = ${x(r)} — ${verdict(r >= 1.0)}`);
  }
}

heading('6. Host-wide generator ≤ 2× the cost of a process-local one (one process; 2 processes for information)');
for (const f of [...idFormats, 'snowflake']) {
  const p = idm(f, 'process1');
  const h = idm(f, 'hostwide1');
  const h2 = idm(f, 'hostwide2');
  if (!p || !h) {
    item(`${f}: not measured — MISS`);
    miss++;
    continue;
  }
  const r = h.ns / p.ns;
  const two = h2 ? `; 2 processes: ${fmtNs(h2.ns)} ns/ID` : '';
  if (f === 'snowflake') {
    item(`${f}: ${fmtNs(h.ns)} vs ${fmtNs(p.ns)} ns/ID = ${x(r)}${two} — info (both at one node's ceiling)`);
  } else {
    item(`${f}: ${fmtNs(h.ns)} vs ${fmtNs(p.ns)} ns/ID = ${x(r)}${two} — ${verdict(r <= 2)}`);
  }
}

heading('7. The CLI path (`idmint gen FORMAT -n N > /dev/null`): ≥ 3× the fastest peer program');
for (const f of formatOrder) {
  const me = idm(f, 'cli');
  const best = peersFor(f, 'cli')[0];
  if (!me) {
    if (best) {
      item(`${f}: idmint not measured — MISS`);
      miss++;
    }
    continue;
  }
  if (!best) {
    item(`${f}: idmint ${fmtNs(me.ns)} ns/ID; no peer program — n/a`);
    continue;
  }
  const r = best.ns / me.ns;
  const bound = f === 'snowflake' ? ` (one node is bound at ${fmtNs(SF_NS)} ns/ID: at most ${x(best.ns / SF_NS)} attainable against this peer)` : '';
  item(`${f}: idmint ${fmtNs(me.ns)} ns/ID vs ${best.impl} ${fmtNs(best.ns)} ns/ID = ${x(r)} — ${verdict(r >= 3)}${bound}`);
}

// --- what ran ---------------------------------------------------------------------

// The impl names in RESULT lines of each STATUS name (run_peers.sh's peers).
function measuredBy(name) {
  return results.filter((r) => r.impl === name || r.impl.startsWith(`${name}:`)).length;
}
// idmint first, then the peers in the order they ran.
statuses.sort((a, b) => (b.name === 'idmint') - (a.name === 'idmint'));
const ranLines = statuses.map(({ name, state, detail }) => {
  if (state === 'ok') {
    return `- ${name}: ran${detail ? ` (${detail})` : ''}`;
  }
  if (state === 'skipped') {
    return `- ${name}: not run (skipped: ${detail || 'by request'})`;
  }
  const n = measuredBy(name);
  const what = n ? `incomplete, ${n} figure${n === 1 ? '' : 's'} kept` : 'not run';
  return `- ${name}: **${what}** — ${detail || 'failed'}`;
});
const missing = statuses.filter((s) => s.state === 'failed').map((s) => s.name);
const skipped = statuses.filter((s) => s.state === 'skipped').map((s) => s.name);

// --- memory -----------------------------------------------------------------------

const memRows = mem.map((m) => [m.impl, m.what, m.bytes.toLocaleString('en-US')]);

// --- output -----------------------------------------------------------------------

const out = [
  '## Machine',
  '',
  machine,
  '',
  '## What ran',
  '',
  ...(ranLines.length ? ranLines : ['- not recorded (no STATUS lines)']),
  '',
  '## Results',
  '',
  'ns per ID (wall time over all IDs, median of the runs); peer/idmint > 1 means idmint is faster.',
  'Peers mint one ID per call, so both idmint\'s batch rows (binary, text) and its one-per-call',
  'rows (binary1, text1) are set against the same peer figures.',
  '',
  mainTable,
  '',
  ...(peerRows.some(overCeiling)
    ? ['† faster than one node\'s 4,096-per-ms ceiling: the peer does not wait when its sequence runs out.', '']
    : []),
  `Floor parts (bench/peers/c/floor.c): ${floorLines.join('; ') || 'not measured'}.`,
  '',
  '## Memory',
  '',
  memRows.length ? table(['impl', 'what', 'bytes'], memRows) : 'not measured',
  '',
  '## Goals',
  ...goalOut,
  '',
  `**Summary: ${pass} PASS, ${miss} MISS.**`,
];
if (missing.length) {
  out.push('', `**Missing: ${missing.join(', ')}** (see What ran): the goals are judged without their figures.`);
}
if (skipped.length) {
  out.push('', `Not run on request: ${skipped.join(', ')}.`);
}
if (notes.length) {
  out.push('', '## Failures', '', ...notes.map((n) => `- ${n}`));
}
const text = `${out.join('\n')}\n`;
process.stdout.write(text);
writeFileSync(outPath, text);
