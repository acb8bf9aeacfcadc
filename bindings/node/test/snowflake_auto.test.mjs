// Snowflake({ node: 'auto' }): a free node leased from the host's registry
// (here a private registry directory), held until close(), and the next
// holder of a node given back resumes above what was minted as it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Snowflake, inspect } from 'idmint';

test('holders at the same time get distinct nodes; a node given back is leased again, above its last ID', () => {
    const registry = fs.mkdtempSync(path.join(os.tmpdir(), 'idmint-auto-'));
    const held = Array.from({ length: 4 }, () => new Snowflake({ node: 'auto', registry }));
    const nodes = held.map((s) => s.node);
    assert.equal(new Set(nodes).size, 4, `nodes ${nodes}`);
    for (const s of held) assert.equal(inspect(s.nextString()).node, s.node);
    const first = held[0];
    let last = 0n;
    for (let i = 0; i < 10000; i++) last = first.next();
    const node = first.node;
    first.close();
    const again = new Snowflake({ node: 'auto', registry });
    assert.equal(again.node, node);
    const next = again.next();
    assert.ok(next > last, `${next} is not above ${last}`);
    for (const s of [again, ...held.slice(1)]) s.close();
    // The layout is the registry's namespace: node 0 of safe53 is another slot.
    const small = Array.from({ length: 64 }, () => new Snowflake({ node: 'auto', registry, layout: 'safe53' }));
    assert.equal(new Set(small.map((s) => s.node)).size, 64);
    assert.throws(() => new Snowflake({ node: 'auto', registry, layout: 'safe53' }),
        (e) => e.code === 'IDMC_BUSY' && /no free snowflake node/.test(e.message));
    for (const s of small) s.close();
    fs.rmSync(registry, { recursive: true });
});

test('a node given is registered too: a second holder, here or in another process, is refused naming the holder', async () => {
    const { spawnSync } = await import('node:child_process');
    const registry = fs.mkdtempSync(path.join(os.tmpdir(), 'idmint-fixed-'));
    const a = new Snowflake({ node: 3, registry });
    const first = a.next();
    assert.throws(() => new Snowflake({ node: 3, registry }),
        (e) => e.code === 'IDMC_BUSY' && /node 3 is held/.test(e.message) &&
            e.message.includes(`pid=${process.pid}`) && /repeat IDs/.test(e.message));
    const script = `const { Snowflake } = require('idmint');
        try { new Snowflake({ node: 3, registry: ${JSON.stringify(registry)} }); console.log('minted'); }
        catch (e) { console.log('refused', e.code, e.message); }`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^refused IDMC_BUSY node 3 is held/);
    // Another layout is another namespace: its node 3 is free.
    const other = new Snowflake({ node: 3, layout: 'discord', registry });
    assert.equal(other.node, 3);
    other.close();
    a.close();
    const b = new Snowflake({ node: 3, registry });
    assert.equal(b.node, 3);
    assert.ok(b.next() > first);
    b.close();
    fs.rmSync(registry, { recursive: true });
});
