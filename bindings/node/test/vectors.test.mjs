// Known vectors (the repository's tests/vectors) through inspect and
// convert, and round trips of freshly minted IDs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect, convert, uuidv7, ulid, ksuid, typeid } from 'idmint';
import { vectors, exact } from './helpers.mjs';

test('ULID vectors: canonical form, time and bits; bad ones refused at their offset', () => {
    let ok = 0;
    let bad = 0;
    for (const [kind, input, ...rest] of vectors('ulid.txt')) {
        if (kind === 'ok') {
            const [canonical, unixMs, time, uuid] = rest;
            const r = inspect(input, { kind: 'ulid' });
            assert.equal(r.kind, 'ulid');
            assert.equal(r.ulid, canonical, input);
            assert.equal(r.unix_ms, Number(unixMs));
            assert.equal(r.time, time);
            assert.equal(r.uuid, uuid);
            assert.equal(convert(input, 'uuid'), uuid);
            assert.equal(convert(uuid, 'ulid'), canonical);
            ok++;
        } else if (kind === 'bad') {
            assert.throws(() => inspect(String(input), { kind: 'ulid' }),
                (e) => e instanceof TypeError && e.code === 'IDM_EPARSE' &&
                    (!exact(input) || e.offset === Number(rest[0])),
                input);
            bad++;
        }
    }
    assert.ok(ok >= 4 && bad >= 4, `${ok} ok, ${bad} bad`);
});

test('KSUID vectors: raw bytes and time; bad ones refused', () => {
    let ok = 0;
    for (const [kind, input, ...rest] of vectors('ksuid.txt')) {
        if (kind === 'ok') {
            const [raw, , unixMs, time] = rest;
            const r = inspect(input);
            assert.equal(r.kind, 'ksuid');
            assert.equal(r.ksuid, input);
            assert.equal(r.unix_ms, Number(unixMs));
            assert.equal(r.time, time);
            assert.equal(raw.toLowerCase().slice(8), r.payload);
            ok++;
        } else if (kind === 'bad') {
            assert.throws(() => inspect(String(input), { kind: 'ksuid' }),
                (e) => e instanceof TypeError && (!exact(input) || e.offset === Number(rest[0])), input);
        }
    }
    assert.ok(ok >= 3);
});

test('TypeID vectors: valid ones decode and re-encode; invalid ones are refused', () => {
    let n = 0;
    for (const [kind, name, text, prefix, uuid] of vectors('typeid_valid.txt')) {
        if (kind !== 'ok') continue;
        const r = inspect(text, { kind: 'typeid' });
        assert.equal(r.prefix, prefix, name);
        assert.equal(r.uuid, uuid, name);
        assert.equal(convert(uuid, 'typeid', prefix === '' ? undefined : prefix), text, name);
        n++;
    }
    assert.ok(n >= 8);
    let m = 0;
    for (const [kind, name, text, offset] of vectors('typeid_invalid.txt')) {
        if (kind !== 'bad') continue;
        assert.throws(() => inspect(String(text), { kind: 'typeid' }),
            (e) => e instanceof TypeError && e.code === 'IDM_EPARSE' &&
                (offset === '-' || !exact(text) || e.offset === Number(offset)), name);
        m++;
    }
    assert.ok(m >= 8);
});

test('UUID field vectors (RFC 9562): version, variant, time, clock_seq, node', () => {
    let n = 0;
    for (const [kind, text, version, variant, unixMs, time, clockSeq, node] of vectors('uuid_rfc9562.txt')) {
        if (kind !== 'uuid') continue;
        const r = inspect(text);
        assert.equal(r.kind, 'uuid');
        assert.equal(r.version, Number(version), text);
        assert.equal(r.variant, variant, text);
        assert.equal(r.unix_ms, unixMs === '-' ? null : Number(unixMs), text);
        assert.equal(r.time, time === '-' ? null : time, text);
        assert.equal(r.clock_seq, clockSeq === '-' ? undefined : Number(clockSeq), text);
        assert.equal(r.node, node === '-' ? undefined : node, text);
        n++;
    }
    assert.ok(n >= 10);
});

test('inspect vectors: recognition with the kind auto, and snowflake layouts', () => {
    let n = 0;
    for (const [kind, ...f] of vectors('inspect.txt')) {
        if (kind === 'auto') {
            const [input, k, unixMs, detail] = f;
            const r = inspect(input);
            assert.equal(r.input, input);
            assert.equal(r.kind, k, input);
            assert.equal(r.unix_ms, unixMs === '-' ? null : Number(unixMs), input);
            if (k === 'snowflake') {
                assert.equal(`${r.node}/${r.sequence}`, detail, input);
                assert.equal(typeof r.id, 'string');
            } else if (k !== 'ksuid') {
                assert.equal(r.uuid, detail, input);
            }
            n++;
        } else if (kind === 'layout') {
            const [name, input, unixMs, detail] = f;
            const r = inspect(input, { layout: name });
            assert.equal(r.unix_ms, Number(unixMs), input);
            assert.equal(`${r.node}/${r.sequence}`, detail, input);
            assert.equal(r.layout, name);
            n++;
        } else if (kind === 'error') {
            const [input, offset] = f;
            assert.throws(() => inspect(String(input)),
                (e) => e instanceof TypeError && (offset === '-' || !exact(input) || e.offset === Number(offset)), input);
            n++;
        }
    }
    assert.ok(n >= 20);
});

test('round trips: minted IDs inspect and convert back to themselves', () => {
    for (let i = 0; i < 1000; i++) {
        const u = uuidv7();
        const asUlid = convert(u, 'ulid');
        assert.equal(convert(asUlid, 'uuid'), u);
        const t = convert(u, 'typeid', 'user');
        assert.equal(convert(t, 'uuid'), u);
        assert.equal(inspect(t).uuid, u);
        assert.equal(inspect(u).version, 7);

        const l = ulid();
        assert.equal(convert(convert(l, 'uuid'), 'ulid'), l);
        assert.equal(inspect(l).ulid, l);

        const k = ksuid();
        assert.equal(inspect(k).ksuid, k);

        const tid = typeid('order');
        const r = inspect(tid);
        assert.equal(r.prefix, 'order');
        assert.equal(convert(r.uuid, 'typeid', 'order'), tid);
    }
});
