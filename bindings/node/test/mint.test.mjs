// Shapes of every format, and strict monotonicity over a million IDs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as idmint from 'idmint';
import { firstUnordered, REGISTRY } from './helpers.mjs';

const { uuidv7, uuidv4, uuidv7Bytes, ulid, ksuid, typeid, token, traceparent, Snowflake, inspect } = idmint;
const MILLION = 1_000_000;

test('shapes: every format has its length, alphabet and version', () => {
    const now = Date.now();
    assert.match(uuidv7(), /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.match(uuidv4(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const b = uuidv7Bytes();
    assert.ok(b instanceof Uint8Array);
    assert.equal(b.length, 16);
    assert.equal(b[6] >> 4, 7);
    assert.equal(b[8] >> 6, 2);
    assert.match(ulid(), /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
    assert.match(ksuid(), /^[0-9A-Za-z]{27}$/);
    assert.match(typeid('user'), /^user_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    assert.match(typeid(''), /^[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    assert.match(token(), /^[0-9A-Za-z]{22}$/);
    assert.match(token('sk_live'), /^sk_live_[0-9A-Za-z]{22}$/);
    assert.match(traceparent(), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    for (const id of [uuidv7(), ulid(), typeid('x')]) {
        const t = inspect(id).unix_ms;
        assert.ok(Math.abs(t - now) < 60_000, `${id}: ${t} vs ${now}`);
    }
});

test('uuidv4 (handed out from batches) never repeats over 300,000 and keeps its version bits', () => {
    const seen = new Set();
    for (let i = 0; i < 300_000; i++) {
        const u = uuidv4();
        assert.equal(u.length, 36);
        seen.add(u);
    }
    assert.equal(seen.size, 300_000);
});

for (const [name, fn] of [['uuidv7', uuidv7], ['ulid', ulid], ['ksuid', ksuid], ['typeid', () => typeid('user')]]) {
    test(`${name}: a million IDs, each strictly greater than the one before`, () => {
        const ids = new Array(MILLION);
        for (let i = 0; i < MILLION; i++) ids[i] = fn();
        const bad = firstUnordered(ids);
        assert.equal(bad, -1, bad >= 0 ? `${ids[bad - 1]} then ${ids[bad]}` : '');
    });
}

test('uuidv7Bytes: a million, strictly increasing as bytes, interleaved with uuidv7 strings', () => {
    let prev = Buffer.from(uuidv7Bytes());
    for (let i = 0; i < MILLION; i++) {
        const cur = Buffer.from(i % 2 ? uuidv7Bytes() : Buffer.from(uuidv7().replaceAll('-', ''), 'hex'));
        assert.ok(Buffer.compare(prev, cur) < 0, `${prev.toString('hex')} then ${cur.toString('hex')}`);
        prev = cur;
    }
});

test('Snowflake: a million, strictly increasing as bigint; nextString is the decimal form', () => {
    const sf = new Snowflake({ node: 3, registry: REGISTRY });
    assert.equal(sf.node, 3);
    assert.equal(sf.layout, 'twitter');
    let prev = sf.next();
    assert.equal(typeof prev, 'bigint');
    for (let i = 0; i < MILLION; i++) {
        const cur = i % 2 ? sf.next() : BigInt(sf.nextString());
        if (!(prev < cur)) assert.fail(`${prev} then ${cur}`);
        prev = cur;
    }
    const s = sf.nextString();
    assert.match(s, /^[1-9][0-9]{0,19}$/);
    const r = inspect(s);
    assert.equal(r.node, 3);
    assert.equal(r.id, s);
    assert.equal(JSON.parse(JSON.stringify({ id: s })).id, s);
    sf.close();
    assert.throws(() => sf.next(), /closed/);
});

test('Snowflake layouts: presets and specs decode with their own node', () => {
    for (const layout of ['discord', 'instagram', 'sonyflake', 'safe53', 'time=41,node=10,seq=12,unit=1ms,epoch=1735689600000']) {
        const sf = new Snowflake({ node: 5, layout, registry: REGISTRY });
        const id = sf.nextString();
        const r = inspect(id, { layout });
        assert.equal(r.node, 5, layout);
        assert.ok(Math.abs(r.unix_ms - Date.now()) < 60_000, layout);
        sf.close();
    }
    const safe = new Snowflake({ node: 63n, layout: 'safe53', registry: REGISTRY });
    assert.ok(safe.next() <= BigInt(Number.MAX_SAFE_INTEGER));
    safe.close();
});
