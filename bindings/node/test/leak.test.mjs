// No leak over many calls: a child process (with --expose-gc) makes the
// calls in rounds, every function and every error path, and Snowflakes
// closed or left to their finalizers (which Node runs on a later turn of
// the event loop: each round is followed by a few turns and collections).
// Its RSS after the later rounds stays within a bound of what it was
// after the third, a bound that a leak of 16 bytes per call would pass
// several times over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROUNDS = 8;
const PER_ROUND = 30000; // iterations of 14 calls

const script = `
const m = require('idmint');
const dir = process.argv[1];
function round() {
    for (let i = 0; i < ${PER_ROUND}; i++) {
        m.uuidv7(); m.uuidv4(); m.uuidv7Bytes(); m.ulid(); m.ksuid(); m.typeid('user'); m.token('sk');
        m.traceparent();
        m.inspect(m.typeid('user')); m.convert(m.ulid(), 'typeid', 'x');
        try { m.inspect('01ARZ3NDEKTSV4RRFFQ69G5FAU'); } catch (e) {}
        try { m.typeid('Bad'); } catch (e) {}
        try { m.inspect('x'.repeat(1000)); } catch (e) {}
        try { m.convert('0ujtsYcgvSTl8PAuAdqWYSMnLOv', 'uuid'); } catch (e) {}
    }
    for (let i = 0; i < 200; i++) {
        const sf = new m.Snowflake({ node: i % 1024, mark: dir + '/mark', registry: dir + '/fixed' });
        for (let j = 0; j < 100; j++) sf.next();
        sf.close();
        const auto = new m.Snowflake({ node: 'auto', registry: dir + '/reg' });
        auto.nextString();
        if (i % 2) auto.close(); // the others are left to the finalizer
        try { new m.Snowflake({ node: 5000 }); } catch (e) {}
    }
}
const tick = () => new Promise((r) => setImmediate(r));
(async () => {
    const rss = [];
    for (let r = 0; r < ${ROUNDS}; r++) {
        round();
        for (let i = 0; i < 3; i++) { global.gc(); await tick(); }
        rss.push(process.memoryUsage().rss);
    }
    console.log(JSON.stringify(rss));
})();
`;

test(`RSS stays bounded over ${ROUNDS} rounds of ${PER_ROUND * 14} calls and 400 Snowflakes each`, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idmint-leak-'));
    const r = spawnSync(process.execPath, ['--expose-gc', '-e', script, dir], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const rss = JSON.parse(r.stdout);
    assert.equal(rss.length, ROUNDS);
    const growth = Math.max(...rss.slice(3)) - rss[2];
    // 16 bytes per call would be 6.7 MB a round, 33 MB over the five
    // compared; V8's heap grows in steps of a few MB.
    assert.ok(growth < 10 * 1024 * 1024, `RSS grew by ${growth} bytes: ${rss}`);
    fs.rmSync(dir, { recursive: true });
});
