// Peer benchmark: the ID encoders people reach for to hide sequential IDs
// in URLs (versions pinned in package.json and package-lock.json; `npm ci`
// in this folder installs them). Neither has a secret key: Sqids shuffles
// an alphabet, Hashids' "salt" is recoverable from a few samples. They are
// timed here beside idmint's keyed obfuscation (FF1 under AES) to show
// what the cryptography costs (bench/keyed.sh).
//
//   node obf.mjs bench [--run-ms MS] [--runs R]   RESULT lines on stdout
//
// RESULT<TAB>impl<TAB>operation<TAB>ns per ID (median of R runs). The IDs
// are sequential snowflake-sized integers, as a table's keys are.
import Sqids from 'sqids';
import Hashids from 'hashids';

let runMs = 250;
let runs = 5;
for (let i = 3; i < process.argv.length; i++) {
  if (process.argv[i] === '--run-ms') runMs = Number(process.argv[++i]);
  else if (process.argv[i] === '--runs') runs = Number(process.argv[++i]);
}
if (process.argv[2] !== 'bench' || !(runMs > 0) || !(runs > 0)) {
  process.stderr.write('usage: node obf.mjs bench [--run-ms MS] [--runs R]\n');
  process.exit(2);
}

// Sequential IDs from a 2026 twitter-layout snowflake, below 2^53 so that
// both libraries take them as plain numbers (Hashids also takes BigInt).
const BASE = 1876543210987654;
let sink = 0;

function timed(n, body) {
  const t0 = process.hrtime.bigint();
  sink ^= body(n);
  return Number(process.hrtime.bigint() - t0);
}

function measure(body) {
  const target = runMs * 1e6;
  let n = 256;
  for (;;) {
    const ns = timed(n, body);
    if (ns >= target / 4 || n >= 2 ** 30) {
      n = Math.max(16, Math.floor((n * target) / Math.max(ns, 1)));
      break;
    }
    n *= 2;
  }
  const v = [];
  for (let i = 0; i < runs; i++) v.push(timed(n, body) / n);
  v.sort((a, b) => a - b);
  return v[Math.floor(v.length / 2)];
}

function report(impl, op, ns) {
  process.stdout.write(`RESULT\t${impl}\t${op}\t${ns.toFixed(1)}\n`);
}

const sqids = new Sqids(); // the defaults, as most users run it
const hashids = new Hashids('a salt that is not a key');

// Decoding runs over a ring of pre-encoded texts, so it times decode alone.
const RING = 4096;
const sq = [], hs = [];
for (let i = 0; i < RING; i++) {
  sq.push(sqids.encode([BASE + i]));
  hs.push(hashids.encode(BASE + i));
}
for (let i = 0; i < RING; i++) {
  if (sqids.decode(sq[i])[0] !== BASE + i || Number(hashids.decode(hs[i])[0]) !== BASE + i) {
    process.stderr.write('obf.mjs: a round trip failed\n');
    process.exit(1);
  }
}

report('sqids', 'encode', measure((n) => {
  let a = 0;
  for (let i = 0; i < n; i++) a ^= sqids.encode([BASE + (i & 0xfffff)]).length;
  return a;
}));
report('sqids', 'decode', measure((n) => {
  let a = 0;
  for (let i = 0; i < n; i++) a ^= sqids.decode(sq[i & (RING - 1)])[0];
  return a;
}));
report('hashids', 'encode', measure((n) => {
  let a = 0;
  for (let i = 0; i < n; i++) a ^= hashids.encode(BASE + (i & 0xfffff)).length;
  return a;
}));
report('hashids', 'decode', measure((n) => {
  let a = 0;
  for (let i = 0; i < n; i++) a ^= Number(hashids.decode(hs[i & (RING - 1)])[0]) & 0xff;
  return a;
}));
if (sink === 0.5) process.stdout.write('');
