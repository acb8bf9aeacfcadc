// Peer benchmark: Node.js ID generators (versions pinned in package.json and
// package-lock.json; `npm ci` in this folder installs them).
//
//   node peers.mjs bench [--run-ms MS] [--runs R]   RESULT lines on stdout
//   node peers.mjs cli FORMAT N                     N IDs, one per line
//
// All are single-threaded and minted as strings (mode text); npm uuid can
// also fill a caller's Uint8Array, reported as mode binary.
import { randomUUID } from 'node:crypto';
import { writeSync } from 'node:fs';
import { Snowflake } from '@sapphire/snowflake';
import { monotonicFactory } from 'ulid';
import { v4 as uuidv4, v7 as uuidv7 } from 'uuid';

// Twitter's epoch: the common choice, and the layout idmint's `twitter` uses.
const EPOCH = 1288834974657n;

let runMs = 250;
let runs = 5;
let sink = 0;

function fold(s) {
  return s.charCodeAt(s.length - 1) ^ (s.charCodeAt(s.length - 2) << 8) ^ s.length;
}

// body(n) mints n IDs and returns a fold of them. Timed with hrtime (monotonic).
function timed(n, body) {
  const t0 = process.hrtime.bigint();
  sink ^= body(n);
  return Number(process.hrtime.bigint() - t0);
}

// Calibrates n to about runMs per run (the calibration warms the JIT up),
// then returns the median ns/ID of `runs` runs.
function measure(body) {
  const target = runMs * 1e6;
  let n = 256;
  for (;;) {
    const ns = timed(n, body);
    if (ns >= target / 4 || n >= 2 ** 34) {
      n = Math.max(16, Math.floor((n * target) / Math.max(ns, 1)));
      break;
    }
    n *= 2;
  }
  const v = [];
  for (let i = 0; i < runs; i++) {
    v.push(timed(n, body) / n);
  }
  v.sort((a, b) => a - b);
  return v[Math.floor(v.length / 2)];
}

function report(impl, format, mode, ns) {
  process.stdout.write(`RESULT\t${impl}\t${format}\t${mode}\t1\t${ns.toFixed(2)}\n`);
}

function textBody(mint) {
  return (n) => {
    let acc = 0;
    for (let i = 0; i < n; i++) {
      acc ^= fold(mint());
    }
    return acc;
  };
}

function binaryBody(mintInto) {
  const buf = new Uint8Array(16);
  return (n) => {
    let acc = 0;
    for (let i = 0; i < n; i++) {
      mintInto(buf);
      acc ^= buf[15] ^ (buf[9] << 8);
    }
    return acc;
  };
}

// @sapphire/snowflake's 12-bit increment wraps every 4,096 IDs whatever the
// clock says: it never waits for the next millisecond, so a burst faster than
// 4,096/ms repeats IDs. Count that, for the README (stderr only).
function snowflakeCeilingNote() {
  const sf = new Snowflake(EPOCH);
  const n = 200000;
  const seen = new Set();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    seen.add(sf.generate());
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const rate = Math.round(n / ms);
  process.stderr.write(
    `node peers: @sapphire/snowflake minted ${n} IDs in ${ms.toFixed(1)} ms ` +
      `(${rate}/ms against a 4096/ms ceiling), ${n - seen.size} duplicates\n`,
  );
}

function bench() {
  report('node:crypto', 'uuidv4', 'text', measure(textBody(() => randomUUID())));
  report('node:uuid', 'uuidv4', 'text', measure(textBody(() => uuidv4())));
  report('node:uuid', 'uuidv4', 'binary', measure(binaryBody((b) => uuidv4(undefined, b))));
  report('node:uuid', 'uuidv7', 'text', measure(textBody(() => uuidv7())));
  report('node:uuid', 'uuidv7', 'binary', measure(binaryBody((b) => uuidv7(undefined, b))));
  const ulid = monotonicFactory();
  report('node:ulid', 'ulid', 'text', measure(textBody(() => ulid())));
  const sf = new Snowflake(EPOCH);
  report('node:sapphire-snowflake', 'snowflake', 'text',
    measure(textBody(() => sf.generate().toString())));
  snowflakeCeilingNote();
  process.stderr.write(`node peers: sink ${sink}\n`);
}

function writeAll(s) {
  const b = Buffer.from(s, 'latin1');
  let off = 0;
  while (off < b.length) {
    try {
      off += writeSync(1, b, off, b.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') {
        throw e;
      }
    }
  }
}

// Prints n IDs, joining 8,192 lines per write(2).
function cli(format, n) {
  let mint;
  if (format === 'uuidv4') {
    mint = () => randomUUID();
  } else if (format === 'uuidv7') {
    mint = () => uuidv7();
  } else if (format === 'ulid') {
    mint = monotonicFactory();
  } else if (format === 'snowflake') {
    const sf = new Snowflake(EPOCH);
    mint = () => sf.generate().toString();
  } else {
    usage();
  }
  const CHUNK = 8192;
  const lines = new Array(CHUNK);
  for (let done = 0; done < n; ) {
    const k = Math.min(CHUNK, n - done);
    lines.length = k;
    for (let i = 0; i < k; i++) {
      lines[i] = mint();
    }
    writeAll(lines.join('\n') + '\n');
    done += k;
  }
}

function usage() {
  process.stderr.write('usage: node peers.mjs bench [--run-ms MS] [--runs R]\n' +
    '       node peers.mjs cli uuidv4|uuidv7|ulid|snowflake N\n');
  process.exit(2);
}

const args = process.argv.slice(2);
if (args[0] === 'bench') {
  for (let i = 1; i < args.length; i += 2) {
    const v = Number(args[i + 1]);
    if (!(v > 0)) {
      usage();
    }
    if (args[i] === '--run-ms') {
      runMs = v;
    } else if (args[i] === '--runs') {
      runs = Math.floor(v);
    } else {
      usage();
    }
  }
  bench();
} else if (args[0] === 'cli' && args.length === 3) {
  const n = Number(args[2]);
  if (!Number.isInteger(n) || n < 0) {
    usage();
  }
  cli(args[1], n);
} else {
  usage();
}
