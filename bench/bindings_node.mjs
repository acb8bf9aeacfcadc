// bench/bindings_node.mjs - the Node binding (bindings/node) against the
// npm packages people use for each format, in one process: uuidv7/uuidv4
// against npm uuid's v7/v4 and crypto.randomUUID(), ulid against npm ulid
// and ulidx, ksuid against npm ksuid, typeid against typeid-js. Each
// contender makes one string ID per call. Rounds are interleaved (every
// contender once per round, in a rotating order) and each figure is the
// median over the rounds; the ratio is the fastest peer's time over
// idmint's (above 1: idmint is faster). Prints a markdown table.
//
// Setup: (cd bench/node && npm install), then node bench/bindings_node.mjs
// [ROUNDS] (default 9). Keep it short on a shared machine.
import { createRequire } from 'node:module';
import crypto from 'node:crypto';

const require = createRequire(new URL('./node/package.json', import.meta.url));
const idmint = require('idmint');
const uuid = require('uuid');
const ulidPkg = require('ulid');
const ulidx = require('ulidx');
const KSUID = require('ksuid');
const { typeid: tidjs } = require('typeid-js');

const ROUNDS = Number(process.argv[2]) || 9;
const TARGET_MS = 25; // each measurement's length

const monotonicUlid = ulidPkg.monotonicFactory();
const monotonicUlidx = ulidx.monotonicFactory();

const groups = [
    ['UUIDv7', [
        ['idmint uuidv7()', () => idmint.uuidv7()],
        ['uuid v7()', () => uuid.v7()],
    ]],
    ['UUIDv4', [
        ['idmint uuidv4()', () => idmint.uuidv4()],
        ['uuid v4()', () => uuid.v4()],
        ['crypto.randomUUID()', () => crypto.randomUUID()],
    ]],
    ['ULID', [
        ['idmint ulid()', () => idmint.ulid()],
        ['ulid ulid()', () => ulidPkg.ulid()],
        ['ulid monotonicFactory()()', () => monotonicUlid()],
        ['ulidx ulid()', () => ulidx.ulid()],
        ['ulidx monotonicFactory()()', () => monotonicUlidx()],
    ]],
    ['KSUID', [
        ['idmint ksuid()', () => idmint.ksuid()],
        ['ksuid randomSync().string', () => KSUID.randomSync().string],
    ]],
    ['TypeID', [
        ["idmint typeid('user')", () => idmint.typeid('user')],
        ["typeid-js typeid('user').toString()", () => tidjs('user').toString()],
    ]],
];

let sink = 0;

function time(fn, n) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) sink += fn().length;
    return Number(process.hrtime.bigint() - t0) / n; // ns per call
}

// Calls per measurement, so that one takes about TARGET_MS.
function calibrate(fn) {
    let n = 1000;
    for (;;) {
        const ns = time(fn, n) * n;
        if (ns > 5e6) return Math.max(1000, Math.round(n * (TARGET_MS * 1e6) / ns));
        n *= 4;
    }
}

function median(a) {
    const s = [...a].sort((x, y) => x - y);
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const rows = [];
for (const [format, contenders] of groups) {
    const sizes = contenders.map(([, fn]) => calibrate(fn));
    const samples = contenders.map(() => []);
    for (let r = 0; r < ROUNDS; r++) {
        for (let k = 0; k < contenders.length; k++) {
            const i = (k + r) % contenders.length;
            samples[i].push(time(contenders[i][1], sizes[i]));
        }
    }
    const med = samples.map(median);
    const ours = med[0];
    let fastestPeer = Infinity;
    for (let i = 1; i < med.length; i++) fastestPeer = Math.min(fastestPeer, med[i]);
    contenders.forEach(([name], i) => {
        rows.push([format, name, med[i], i === 0 ? fastestPeer / ours : med[i] / ours]);
    });
}

const fmt = (ns) => (ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(1)} ns`);
console.log(`Node ${process.version}, ${ROUNDS} interleaved rounds, medians of ${TARGET_MS} ms measurements.\n`);
console.log('| format | implementation | time per ID | IDs/s | ratio |');
console.log('|---|---|---:|---:|---:|');
for (const [format, name, ns, ratio] of rows) {
    const r = name.startsWith('idmint') ? `**${ratio.toFixed(2)}× the fastest peer**` : `${ratio.toFixed(2)}× idmint's time`;
    console.log(`| ${format} | ${name} | ${fmt(ns)} | ${(1e9 / ns / 1e6).toFixed(2)} M | ${r} |`);
}
if (sink === 0) console.log(''); // keeps the IDs observable
