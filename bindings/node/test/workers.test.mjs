// Worker threads: one thread-safe generator for the whole process, so IDs
// minted by several workers at once never repeat, each worker's are
// strictly increasing, and a worker started after another has gone
// continues above it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { uuidv7 } from 'idmint';

const WORKERS = 4;
const PER_WORKER = 200_000;

// The worker's code: mints n IDs of each format, checks their order, and
// posts them back joined with '\n'.
const body = `
const { parentPort, workerData } = require('node:worker_threads');
const idmint = require('idmint');
const out = {};
for (const name of ['uuidv7', 'ulid', 'ksuid', 'typeid']) {
    const fn = name === 'typeid' ? () => idmint.typeid('w') : idmint[name];
    const ids = new Array(workerData.n);
    for (let i = 0; i < workerData.n; i++) ids[i] = fn();
    for (let i = 1; i < ids.length; i++) {
        if (!(ids[i - 1] < ids[i])) throw new Error(name + ': ' + ids[i - 1] + ' then ' + ids[i]);
    }
    out[name] = ids.join('\\n');
}
const v4 = new Set();
for (let i = 0; i < workerData.n; i++) v4.add(idmint.uuidv4());
out.uuidv4 = [...v4].join('\\n');
if (workerData.auto) {
    const sf = new idmint.Snowflake({ node: 'auto', registry: workerData.auto });
    out.node = sf.node;
    const ids = [];
    for (let i = 0; i < workerData.n; i++) ids.push(sf.nextString());
    out.snowflake = ids.join('\\n');
    sf.close();
}
parentPort.postMessage(out);
`;

function run(n, auto) {
    return new Promise((resolve, reject) => {
        const w = new Worker(body, { eval: true, workerData: { n, auto } });
        let result = null;
        w.on('message', (m) => { result = m; });
        w.on('error', reject);
        w.on('exit', (code) => (code === 0 && result ? resolve(result) : reject(new Error(`worker exit ${code}`))));
    });
}

test(`${WORKERS} workers x ${PER_WORKER} IDs of each format, minted together with the main thread: no repeat`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idmint-reg-'));
    const pending = Array.from({ length: WORKERS }, () => run(PER_WORKER, dir));
    const mine = [];
    for (let i = 0; i < PER_WORKER; i++) mine.push(uuidv7());
    const results = await Promise.all(pending);
    for (const name of ['uuidv7', 'ulid', 'ksuid', 'typeid', 'uuidv4', 'snowflake']) {
        const all = new Set(name === 'uuidv7' ? mine : []);
        let total = name === 'uuidv7' ? mine.length : 0;
        for (const r of results) {
            const ids = r[name].split('\n');
            assert.equal(ids.length, PER_WORKER, name);
            total += ids.length;
            for (const id of ids) all.add(id);
        }
        assert.equal(all.size, total, `${name}: ${total - all.size} repeated`);
    }
    // A node given back by a worker that finished may be leased again by
    // a later one (its slot's mark keeps the IDs apart: no repeat above).
    for (const r of results) assert.ok(Number.isInteger(r.node) && r.node >= 0 && r.node < 1024);
    fs.rmSync(dir, { recursive: true });
});

test('a worker started after the last user of the generator has gone continues above it', () => {
    // A process whose main thread never loads idmint: the first worker's
    // exit frees the generator, the second one makes a new one.
    const script = `
const { Worker } = require('node:worker_threads');
const code = "const { parentPort } = require('node:worker_threads'); const m = require('idmint');" +
    "const a = []; for (let i = 0; i < 50000; i++) a.push(m.uuidv7()); parentPort.postMessage([a[0], a[a.length - 1], m.ulid(), m.ksuid()]);";
function one() {
    return new Promise((res, rej) => {
        const w = new Worker(code, { eval: true });
        let r; w.on('message', (m) => { r = m; }); w.on('error', rej); w.on('exit', () => res(r));
    });
}
(async () => { const a = await one(); const b = await one(); console.log(JSON.stringify([a, b])); })();
`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', cwd: process.cwd() });
    assert.equal(r.status, 0, r.stderr);
    const [a, b] = JSON.parse(r.stdout);
    assert.ok(a[1] < b[0], `uuidv7: ${a[1]} then ${b[0]}`);
    assert.ok(a[2] < b[2], `ulid: ${a[2]} then ${b[2]}`);
    assert.ok(a[3] < b[3], `ksuid: ${a[3]} then ${b[3]}`);
});
