// The durable mark: Snowflake({ mark }) runs killed with SIGKILL mid-stream
// each resume above everything the one before printed, and a run with the
// clock set back 5 s (libfaketime) is refused by default, or with
// maxRewind waits and mints above all before - while the same clock
// without the mark mints below (so the test can fail).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REGISTRY } from './helpers.mjs';

const FAKETIME = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1',
    '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1'].find((p) => fs.existsSync(p));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idmint-mark-'));
const markFile = path.join(dir, 'mark');
after(() => fs.rmSync(dir, { recursive: true, force: true }));

// Prints IDs, one a line, until killed (or count reached).
const minter = `
const { Snowflake } = require('idmint');
const [mark, count, maxRewind] = process.argv.slice(1);
const opts = { node: 7, registry: process.env.IDM_TEST_REGISTRY };
if (mark !== '-') opts.mark = mark;
if (maxRewind !== undefined) opts.maxRewind = Number(maxRewind);
let sf;
try { sf = new Snowflake(opts); } catch (e) { console.error(e.message); process.exit(3); }
const n = Number(count);
function batch() {
    let s = '';
    for (let i = 0; i < 2000; i++) s += sf.nextString() + '\\n';
    return s;
}
try {
    if (n > 0) { let s = ''; for (let i = 0; i < n; i++) s += sf.nextString() + '\\n'; process.stdout.write(s); sf.close(); }
    else { const loop = () => { if (process.stdout.write(batch())) setImmediate(loop); else process.stdout.once('drain', loop); }; loop(); }
} catch (e) { console.error(e.message); process.exit(1); }
`;

const fakeEnv = { ...process.env, LD_PRELOAD: FAKETIME, FAKETIME: '-5s', FAKETIME_DONT_FAKE_MONOTONIC: '1' };

// Starts a run, waits until it has printed at least `lines` whole lines,
// kills it with SIGKILL and returns the whole lines it printed.
function killedRun(lines) {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ['-e', minter, markFile, '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
        let buf = '';
        let err = '';
        let killed = false;
        child.stdout.setEncoding('utf8');
        child.stdout.on('data', (d) => {
            buf += d;
            if (!killed && buf.split('\n').length > lines) {
                killed = true;
                child.kill('SIGKILL');
            }
        });
        child.stderr.on('data', (d) => { err += d; });
        child.on('error', reject);
        child.on('exit', (code, signal) => {
            if (signal !== 'SIGKILL') return reject(new Error(`run ended with ${code}: ${err}`));
            const whole = buf.slice(0, buf.lastIndexOf('\n')).split('\n');
            resolve(whole);
        });
    });
}

function increasing(ids) {
    for (let i = 1; i < ids.length; i++) {
        if (!(BigInt(ids[i - 1]) < BigInt(ids[i]))) return `${ids[i - 1]} then ${ids[i]}`;
    }
    return null;
}

let last = 0n;

test('five runs killed with SIGKILL at different moments: each resumes above the last', async () => {
    for (let run = 0; run < 5; run++) {
        const ids = await killedRun(5000 + run * 20000);
        assert.ok(ids.length >= 5000);
        assert.equal(increasing(ids), null);
        assert.ok(BigInt(ids[0]) > last, `run ${run}: ${ids[0]} after ${last}`);
        last = BigInt(ids[ids.length - 1]);
    }
    const st = fs.statSync(markFile);
    assert.equal(st.size, 1024);
    assert.equal(st.mode & 0o777, 0o600);
});

// The newest slot's mark (mark.h: two 64-byte slots at 0 and 512,
// "IDMMARK1", then little-endian seq and mark_ms).
function markMs(file) {
    const b = fs.readFileSync(file);
    const slots = [0, 512].filter((o) => b.toString('latin1', o, o + 8) === 'IDMMARK1')
        .map((o) => ({ seq: b.readBigUInt64LE(o + 8), mark: Number(b.readBigInt64LE(o + 16)) }));
    assert.ok(slots.length > 0, 'no slot in the mark file');
    return slots.reduce((a, c) => (c.seq > a.seq ? c : a)).mark;
}

test('a run that ends (process.exit(), an uncaught exception, or the end of the script) lowers the mark to the time used', () => {
    const file = path.join(dir, 'lowered');
    for (const end of ['process.exit(0)', 'throw new Error("end")', '']) {
        const script = `const { Snowflake } = require('idmint');
            const sf = new Snowflake({ node: 2, mark: ${JSON.stringify(file)}, registry: ${JSON.stringify(REGISTRY)} });
            for (let i = 0; i < 1000; i++) sf.next();
            ${end}`;
        const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
        assert.equal(r.status, end === '' || end.startsWith('process') ? 0 : 1, r.stderr);
        // Unlowered, the mark would be a reserve (1 s) past the clock.
        const ahead = markMs(file) - Date.now();
        assert.ok(ahead <= 0, `${end || 'end of script'}: the mark is ${ahead} ms ahead of the clock`);
    }
});

test('libfaketime is installed and sets the clock back for node', () => {
    assert.ok(FAKETIME, 'libfaketime not found (Debian: apt-get install faketime)');
    const r = spawnSync(process.execPath, ['-e', 'console.log(Date.now())'], { env: fakeEnv, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const behind = Date.now() - Number(r.stdout);
    assert.ok(behind > 4000 && behind < 6000, `behind by ${behind} ms`);
});

test('after a kill, with the clock 5 s behind: refused by default, naming the rewind and the mark', async () => {
    const ids = await killedRun(3000);
    last = BigInt(ids[ids.length - 1]);
    const r = spawnSync(process.execPath, ['-e', minter, markFile, '10'], { env: fakeEnv, encoding: 'utf8' });
    assert.equal(r.status, 1, `status ${r.status}: ${r.stdout.slice(0, 100)} ${r.stderr}`);
    assert.match(r.stderr, /clock moved back by [0-9]+ ms.*mark file/);
    assert.equal(r.stdout, '');
});

test('... the same clock without the mark mints below the last ID (the case can fail)', () => {
    // On a registry of its own: the runs' slot records a mark of its own,
    // which the node registered anew would resume above.
    const fresh = path.join(dir, 'fresh-nodes');
    const r = spawnSync(process.execPath, ['-e', minter, '-', '1'],
        { env: { ...fakeEnv, IDM_TEST_REGISTRY: fresh }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(BigInt(r.stdout.trim()) < last, `${r.stdout.trim()} is not below ${last}`);
});

test('... and with maxRewind 7000 it waits, then mints only above everything before', () => {
    const r = spawnSync(process.execPath, ['-e', minter, markFile, '100000', '7000'],
        { env: fakeEnv, encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(r.status, 0, `${r.signal} ${r.error} ${r.stderr}`);
    const ids = r.stdout.trim().split('\n');
    assert.equal(ids.length, 100000);
    assert.equal(increasing(ids), null);
    assert.ok(BigInt(ids[0]) > last, `${ids[0]} is not above ${last}`);
});
