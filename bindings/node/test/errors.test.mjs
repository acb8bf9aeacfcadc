// Errors: the class (TypeError for bad text and arguments, RangeError for
// values out of range), the library's reason with character and position,
// and a code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect, convert, typeid, token, Snowflake } from 'idmint';
import { REGISTRY } from './helpers.mjs';

function throwsWith(fn, cls, re, extra = {}) {
    assert.throws(fn, (e) => {
        assert.ok(e instanceof cls, `${e.constructor.name}: ${e.message}`);
        assert.match(e.message, re);
        for (const [k, v] of Object.entries(extra)) assert.equal(e[k], v, k);
        return true;
    });
}

test('parse errors name the character and position, with offset and code', () => {
    throwsWith(() => inspect('01ARZ3NDEKTSV4RRFFQ69G5FAU'), TypeError, /'U'.*position 26/,
        { code: 'IDM_EPARSE', offset: 25 });
    throwsWith(() => inspect('01ARZ3NDEKTSV4RRFFQ69G5FA', { kind: 'ulid' }), TypeError, /26 characters, got 25/,
        { code: 'IDM_EPARSE' });
    throwsWith(() => inspect('017f22e2-79b0-7cc3-98c4-dc0c0c07398g'), TypeError, /'g'.*position 36/,
        { offset: 35 });
    throwsWith(() => inspect(''), TypeError, /./, { code: 'IDM_EPARSE' });
    throwsWith(() => inspect('x'.repeat(5000)), TypeError, /./, { code: 'IDM_EPARSE' });
    throwsWith(() => inspect('123', { kind: 'ulid' }), TypeError, /ULID/);
    throwsWith(() => inspect('01ARZ3NDEKTSV4RRFFQ69G5FA'), TypeError, /25 characters fit no format/);
});

test('bad prefixes are refused with the library reason', () => {
    throwsWith(() => typeid('User'), TypeError, /lowercase \('U' at position 1\)/, { code: 'IDM_EINVAL' });
    throwsWith(() => typeid('a'.repeat(64)), TypeError, /63/);
    throwsWith(() => typeid('_a'), TypeError, /_/);
    throwsWith(() => token('sk-live'), TypeError, /token prefix/);
    throwsWith(() => typeid(5), TypeError, /prefix must be a string/, { code: 'ERR_INVALID_ARG_TYPE' });
});

test('convert: refuses KSUIDs and snowflakes, unknown targets and misplaced prefixes', () => {
    throwsWith(() => convert('0ujtsYcgvSTl8PAuAdqWYSMnLOv', 'uuid'), TypeError, /160 bits/);
    throwsWith(() => convert('1541815603606036480', 'ulid'), TypeError, /64|128/);
    throwsWith(() => convert('01ARZ3NDEKTSV4RRFFQ69G5FAV', 'base64'), TypeError, /uuid, ulid or typeid|'uuid'/);
    throwsWith(() => convert('01ARZ3NDEKTSV4RRFFQ69G5FAV', 'uuid', 'user'), TypeError, /only to typeid/);
    throwsWith(() => convert('01ARZ3NDEKTSV4RRFFQ69G5FAV', 'typeid', 'Us'), TypeError, /lowercase/);
    throwsWith(() => convert(42, 'uuid'), TypeError, /text must be a string/);
});

test('Snowflake: node out of range is a RangeError naming the range; bad layouts and types are TypeErrors', () => {
    throwsWith(() => new Snowflake({ node: 1024 }), RangeError, /0 \.\. 1023 for layout twitter/);
    throwsWith(() => new Snowflake({ node: -1 }), RangeError, /0 \.\. 1023/);
    throwsWith(() => new Snowflake({ node: 1.5 }), RangeError, /integer/);
    throwsWith(() => new Snowflake({ node: 64, layout: 'safe53' }), RangeError, /0 \.\. 63 for layout safe53/);
    throwsWith(() => new Snowflake({}), TypeError, /node is required/);
    throwsWith(() => new Snowflake({ node: 'seven' }), TypeError, /'auto'/);
    throwsWith(() => new Snowflake({ node: 1, layout: 'time=41,node=10' }), TypeError, /layout: /);
    throwsWith(() => new Snowflake({ node: 1, layout: 'tweeter' }), TypeError, /presets are/);
    throwsWith(() => new Snowflake({ node: 1, maxRewind: -5 }), RangeError, /maxRewind/);
    throwsWith(() => Snowflake({ node: 1 }), TypeError, /new/);
});

test('Snowflake: a mark file that is not fit is refused naming the problem and the path', async () => {
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idmint-err-'));
    const open = path.join(dir, 'open');
    fs.writeFileSync(open, '');
    fs.chmodSync(open, 0o666);
    throwsWith(() => new Snowflake({ node: 1, mark: open, registry: REGISTRY }), Error, /writable by other users/, { code: 'IDM_ESTATE' });
    const bad = path.join(dir, 'bad');
    fs.writeFileSync(bad, 'garbage', { mode: 0o600 });
    throwsWith(() => new Snowflake({ node: 1, mark: bad, registry: REGISTRY }), Error, /damaged/);
    throwsWith(() => new Snowflake({ node: 1, mark: dir, registry: REGISTRY }), Error, /directory/);
    fs.rmSync(dir, { recursive: true });
});
