// No leak over many calls: a child process (with --expose-gc) makes the
// calls in rounds, every function and every error path; its RSS after the
// later rounds stays within a bound of what it was after the second.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const script = `
const m = require('idmint');
const dir = process.argv[1];
function round() {
    for (let i = 0; i < 50000; i++) {
        m.uuidv7(); m.uuidv4(); m.uuidv7Bytes(); m.ulid(); m.ksuid(); m.typeid('user'); m.token('sk');
        m.traceparent();
        m.inspect(m.typeid('user')); m.convert(m.ulid(), 'typeid', 'x');
        try { m.inspect('01ARZ3NDEKTSV4RRFFQ69G5FAU'); } catch (e) {}
        try { m.typeid('Bad'); } catch (e) {}
        try { m.inspect('x'.repeat(1000)); } catch (e) {}
        try { m.convert('0ujtsYcgvSTl8PAuAdqWYSMnLOv', 'uuid'); } catch (e) {}
    }
    for (let i = 0; i < 200; i++) {
        const sf = new m.Snowflake({ node: i % 1024, mark: dir + '/mark' });
        for (let j = 0; j < 100; j++) sf.next();
        sf.close();
        const auto = new m.Snowflake({ node: 'auto', registry: dir + '/reg' });
        auto.nextString();
        if (i % 2) auto.close(); // the others are left to the finalizer
        try { new m.Snowflake({ node: 5000 }); } catch (e) {}
    }
    global.gc(); global.gc();
    return process.memoryUsage().rss;
}
const rss = [];
for (let r = 0; r < 6; r++) rss.push(round());
console.log(JSON.stringify(rss));
`;

test('RSS stays bounded over 300,000 rounds of calls of every function and 2,400 Snowflakes', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idmint-leak-'));
    const r = spawnSync(process.execPath, ['--expose-gc', '-e', script, dir], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const rss = JSON.parse(r.stdout);
    const growth = Math.max(...rss.slice(2)) - rss[1];
    // A leak of even 16 bytes per call (14 calls, 50,000 times a round)
    // would add 11 MB per round.
    assert.ok(growth < 6 * 1024 * 1024, `RSS grew by ${growth} bytes: ${rss}`);
    fs.rmSync(dir, { recursive: true });
});
