// Interop: every ID parses with the other ecosystems' packages (npm uuid,
// ulid, ulidx, typeid-js, ksuid) to the same bits and time, and theirs
// parse with idmint's inspect.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as uuid from 'uuid';
import * as ulidPkg from 'ulid';
import * as ulidx from 'ulidx';
import { TypeID, typeid as tidMint } from 'typeid-js';
import KSUID from 'ksuid';
import { uuidv7, uuidv4, uuidv7Bytes, ulid, ksuid, typeid, inspect, convert } from 'idmint';

const N = 2000;

test('uuid: uuidv7/uuidv4 validate, have their versions, and parse to the same bytes', () => {
    for (let i = 0; i < N; i++) {
        const v7 = uuidv7();
        assert.ok(uuid.validate(v7), v7);
        assert.equal(uuid.version(v7), 7);
        assert.equal(uuid.stringify(uuid.parse(v7)), v7);
        const v4 = uuidv4();
        assert.ok(uuid.validate(v4), v4);
        assert.equal(uuid.version(v4), 4);
        const b = uuidv7Bytes();
        assert.equal(uuid.version(uuid.stringify(b)), 7);
    }
    // npm uuid's v7 text inspects as version 7 with its time.
    const t = Date.now();
    const theirs = uuid.v7({ msecs: t });
    const r = inspect(theirs);
    assert.equal(r.version, 7);
    assert.equal(r.unix_ms, t);
});

test('ulid and ulidx: ULIDs are valid, decode to the same time, and map to the same UUID', () => {
    for (let i = 0; i < N; i++) {
        const l = ulid();
        const r = inspect(l);
        assert.ok(ulidPkg.isValid(l), l);
        assert.ok(ulidx.isValid(l), l);
        assert.equal(ulidPkg.decodeTime(l), r.unix_ms);
        assert.equal(ulidx.decodeTime(l), r.unix_ms);
        assert.equal(ulidx.ulidToUUID(l).toLowerCase(), convert(l, 'uuid'));
    }
    const t = Date.now();
    for (const theirs of [ulidPkg.ulid(t), ulidx.ulid(t), ulidPkg.monotonicFactory()(t)]) {
        const r = inspect(theirs);
        assert.equal(r.kind, 'ulid');
        assert.equal(r.unix_ms, t);
    }
});

test('typeid-js: TypeIDs parse to the same prefix and UUID, and theirs parse here', () => {
    for (let i = 0; i < N; i++) {
        const t = typeid('user');
        const parsed = TypeID.fromString(t);
        assert.equal(parsed.getType(), 'user');
        assert.equal(parsed.toUUID(), inspect(t).uuid);
        assert.equal(parsed.toString(), t);
        const bare = typeid('');
        assert.equal(TypeID.fromString(bare).getType(), '');
    }
    const theirs = tidMint('order').toString();
    const r = inspect(theirs);
    assert.equal(r.prefix, 'order');
    assert.equal(r.uuid, TypeID.fromString(theirs).toUUID());
    assert.equal(convert(r.uuid, 'typeid', 'order'), theirs);
});

test('ksuid: KSUIDs parse to the same time and payload, and theirs parse here', () => {
    for (let i = 0; i < N; i++) {
        const k = ksuid();
        const theirs = KSUID.parse(k);
        const r = inspect(k);
        assert.equal(theirs.string, k);
        assert.equal(theirs.date.getTime(), r.unix_ms);
        assert.equal(theirs.payload.toString('hex'), r.payload);
    }
    const k = KSUID.randomSync();
    const r = inspect(k.string);
    assert.equal(r.kind, 'ksuid');
    assert.equal(r.unix_ms, k.date.getTime());
});
