'use strict';
// idmint - the CommonJS entry point (index.mjs re-exports it for import).
// The addon (build/idmint.node) is built by `npm install` (scripts/build.js).
const path = require('node:path');

function load() {
    const file = path.join(__dirname, 'build', 'idmint.node');
    try {
        return require(file);
    } catch (e) {
        if (e.code !== 'MODULE_NOT_FOUND') throw e;
        throw new Error(`idmint: the addon ${file} is not built: npm skipped the package's ` +
            'install script (npm 11 runs dependencies\' scripts only when allowed). Add ' +
            '"allowScripts": { "idmint": true } to your package.json, or run ' +
            '`npm install-scripts approve idmint`, then `npm rebuild idmint`.', { cause: e });
    }
}

const native = load();

// UUIDv4 carries no time: minted 128 at a time in one string and handed
// out one by one (crypto.randomUUID() buffers its randomness the same way).
// Per isolate; each string is fresh from the CSPRNG.
const V4_BATCH = 128;
let v4Text = '';
let v4At = 0;

function uuidv4() {
    if (v4At >= v4Text.length) {
        v4Text = native.uuidv4Text(V4_BATCH);
        v4At = 0;
    }
    const s = v4Text.slice(v4At, v4At + 36);
    v4At += 36;
    return s;
}

// Snowflakes still open when the thread ends are closed on its 'exit'
// event (process.exit() included, which runs no finalizers): their mark is
// lowered to the time last used and a leased node given back, so the next
// run need not wait out the reserve. Finalizers and the addon's cleanup
// hook cover the rest.
const open = new Set();
let exitHooked = false;

function closeAll() {
    for (const ref of open) {
        const sf = ref.deref();
        if (sf !== undefined) sf.close();
    }
    open.clear();
}

class Snowflake extends native.Snowflake {
    constructor(options) {
        super(options);
        const ref = new WeakRef(this);
        this[kRef] = ref;
        open.add(ref);
        if (!exitHooked) {
            exitHooked = true;
            process.once('exit', closeAll);
        }
    }

    close() {
        open.delete(this[kRef]);
        super.close();
    }
}
const kRef = Symbol('idmint.ref');

function inspect(text, options) {
    return JSON.parse(native.inspectJson(text, options));
}

module.exports = {
    uuidv7: native.uuidv7,
    uuidv4,
    uuidv7Bytes: native.uuidv7Bytes,
    ulid: native.ulid,
    ksuid: native.ksuid,
    typeid: native.typeid,
    token: native.token,
    traceparent: native.traceparent,
    inspect,
    convert: native.convert,
    Snowflake,
    libraryVersion: native.libraryVersion,
};
