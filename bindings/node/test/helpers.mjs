// helpers.mjs - shared by the tests: where the repository's vector files
// are, and how their records read.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

// A node given to Snowflake is registered in the host's registry (as an
// 'auto' one is leased there): the tests use a private one (mode 0700,
// this run's), so that they neither disturb nor depend on the host's
// /run/idmint/nodes, which other suites' idmintd use. The processes they
// start find it in IDM_TEST_REGISTRY.
export const REGISTRY = process.env.IDM_TEST_REGISTRY ||
    fs.mkdtempSync(path.join(os.tmpdir(), 'idmint-test-nodes-'));
process.env.IDM_TEST_REGISTRY = REGISTRY;

// The vectors live in the idmint tree the installed package was built
// from (npm links ./bindings/node), or IDMINT_SOURCE_DIR.
export function sourceDir() {
    if (process.env.IDMINT_SOURCE_DIR) return process.env.IDMINT_SOURCE_DIR;
    const pkg = path.dirname(fs.realpathSync(require.resolve('idmint/package.json')));
    return path.resolve(pkg, '..', '..');
}

// One field: "" is the empty string; \xNN escapes are bytes, read as
// UTF-8 (the addon passes strings to the library as UTF-8, so offsets
// count UTF-8 bytes). { text, exact }: exact is false when the bytes are
// not valid UTF-8 and so cannot be passed as a JavaScript string.
function field(s) {
    if (s === '""') return '';
    if (!s.includes('\\x')) return s;
    const bytes = [];
    for (let i = 0; i < s.length; i++) {
        if (s[i] === '\\' && s[i + 1] === 'x') {
            bytes.push(parseInt(s.slice(i + 2, i + 4), 16));
            i += 3;
        } else {
            bytes.push(s.charCodeAt(i));
        }
    }
    const buf = Buffer.from(bytes);
    const text = buf.toString('utf8');
    return Buffer.from(text, 'utf8').equals(buf) ? text : new String(text);
}

// Whether a field could be passed exactly (see field).
export function exact(s) {
    return typeof s === 'string';
}

// The records of tests/vectors/NAME: arrays of fields, comments dropped.
export function vectors(name) {
    const file = path.join(sourceDir(), 'tests', 'vectors', name);
    return fs.readFileSync(file, 'utf8').split('\n')
        .filter((l) => l.trim() !== '' && !l.startsWith('#'))
        .map((l) => l.trim().split(/\s+/).map(field));
}

// Asserts that the strings of ids are strictly increasing; returns the
// index of the first out of order, or -1.
export function firstUnordered(ids) {
    for (let i = 1; i < ids.length; i++) {
        if (!(ids[i - 1] < ids[i])) return i;
    }
    return -1;
}
