// The CommonJS entry point: require('idmint') gives the objects import does.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const idmint = require('idmint');

test('require: every export is there and works', async () => {
    for (const name of ['uuidv7', 'uuidv4', 'uuidv7Bytes', 'ulid', 'ksuid', 'typeid', 'token',
        'traceparent', 'inspect', 'convert', 'Snowflake']) {
        assert.equal(typeof idmint[name], 'function', name);
    }
    const esm = await import('idmint');
    assert.equal(esm.uuidv7, idmint.uuidv7);
    assert.equal(esm.Snowflake, idmint.Snowflake);
    assert.equal(esm.default.ulid, idmint.ulid);
    const a = idmint.uuidv7();
    const b = esm.uuidv7();
    assert.ok(a < b, `${a} then ${b}`);
    const registry = require('node:fs').mkdtempSync(require('node:path').join(require('node:os').tmpdir(), 'idmint-cjs-'));
    const sf = new idmint.Snowflake({ node: 1, registry });
    assert.ok(sf instanceof esm.Snowflake);
    assert.equal(typeof sf.next(), 'bigint');
    sf.close();
});
