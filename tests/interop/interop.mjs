// tests/interop/interop.mjs IDMINT - mints IDs with the idmint CLI and
// checks them with npm's uuid and ulid packages and with Node's own string,
// byte and BigInt ordering. Prints "ok - ..." / "not ok - ..." per check
// and ends with "N passed, N failed"; exits 1 when a check failed.
import { execFileSync } from 'node:child_process';
import { parse as uuidParse, validate as uuidValidate, version as uuidVersion } from 'uuid';
import { decodeTime, isValid as ulidIsValid, ulidToUUID, uuidToULID } from 'ulid';

const cli = process.argv[2];
if (!cli) {
    console.error('usage: node interop.mjs PATH_TO_IDMINT');
    process.exit(2);
}

const N = 1000;
const SLACK_MS = 5000; // how far a minted timestamp may be from Date.now()
let passed = 0;
let failed = 0;

function check(name, fn) {
    try {
        const problem = fn();
        if (problem) {
            failed++;
            console.log(`not ok - ${name}: ${problem}`);
        } else {
            passed++;
            console.log(`ok - ${name}`);
        }
    } catch (e) {
        failed++;
        const detail = e.stderr ? String(e.stderr).trim() : e.message;
        console.log(`not ok - ${name}: ${detail}`);
    }
}

function idmint(...args) {
    return execFileSync(cli, args, { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
}

function lines(out) {
    const l = out.split('\n');
    if (l.length === 0 || l[l.length - 1] !== '') {
        throw new Error('output does not end with a newline');
    }
    l.pop();
    return l;
}

// Mints n IDs and remembers the wall clock around the call.
function mint(format, ...opts) {
    const before = Date.now();
    const ids = lines(idmint('gen', format, '-n', String(N), ...opts));
    const after = Date.now();
    return { ids, before, after };
}

function firstBad(list, pred) {
    for (let i = 0; i < list.length; i++) {
        const why = pred(list[i], i);
        if (why) {
            return `#${i} ${JSON.stringify(list[i])}: ${why}`;
        }
    }
    return null;
}

// Strictly increasing as JavaScript strings (UTF-16 code units).
function strictlyIncreasing(list, key = (x) => x) {
    return firstBad(list, (x, i) => (i > 0 && !(key(list[i - 1]) < key(x)) ? `not above ${JSON.stringify(list[i - 1])}` : null));
}

function timeNear(ms, before, after, granularity = 0) {
    if (typeof ms !== 'number' || !Number.isFinite(ms)) {
        return `time ${ms} is not a number`;
    }
    if (ms < before - SLACK_MS - granularity || ms > after + SLACK_MS) {
        return `time ${ms} is not within ${SLACK_MS} ms of now (${before}..${after})`;
    }
    return null;
}

function inspectJson(ids, ...opts) {
    // One object per input (JSON Lines), in input order.
    const out = lines(idmint('inspect', '--json', ...opts, ...ids)).map((l) => JSON.parse(l));
    if (out.length !== ids.length) {
        throw new Error(`inspect --json printed ${out.length} objects for ${ids.length} inputs`);
    }
    return out;
}

function v7Millis(u) {
    return parseInt(u.replace(/-/g, '').slice(0, 12), 16);
}

// ---------------------------------------------------------------- UUIDv7
const v7 = mint('uuidv7');
check(`uuidv7: ${N} IDs, one per line`, () => (v7.ids.length === N ? null : `got ${v7.ids.length}`));
check('uuidv7: uuid.validate() accepts every ID', () => firstBad(v7.ids, (u) => (uuidValidate(u) ? null : 'invalid')));
check('uuidv7: uuid.version() is 7 for every ID', () => firstBad(v7.ids, (u) => (uuidVersion(u) === 7 ? null : `version ${uuidVersion(u)}`)));
check('uuidv7: canonical lowercase', () => firstBad(v7.ids, (u) => (/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u) ? null : 'not canonical')));
check('uuidv7: strictly increasing as strings (Node ordering)', () => strictlyIncreasing(v7.ids));
check('uuidv7: strictly increasing as bytes (uuid.parse + Buffer.compare)', () =>
    firstBad(v7.ids, (u, i) => (i > 0 && Buffer.compare(Buffer.from(uuidParse(v7.ids[i - 1])), Buffer.from(uuidParse(u))) >= 0 ? 'bytes not increasing' : null)));
check('uuidv7: sort() leaves the order unchanged', () => ([...v7.ids].sort().every((u, i) => u === v7.ids[i]) ? null : 'sort changed the order'));
check('uuidv7: timestamp within a few seconds of now', () => firstBad(v7.ids, (u) => timeNear(v7Millis(u), v7.before, v7.after)));
check('uuidv7: inspect --json agrees on unix_ms, version and variant', () => {
    const sample = v7.ids.slice(0, 50);
    const info = inspectJson(sample);
    return firstBad(sample, (u, i) => {
        const j = info[i];
        if (j.kind !== 'uuid') return `kind ${j.kind}`;
        if (j.version !== 7) return `version ${j.version}`;
        if (j.variant !== 'rfc9562') return `variant ${j.variant}`;
        if (j.unix_ms !== v7Millis(u)) return `unix_ms ${j.unix_ms}, the first 48 bits say ${v7Millis(u)}`;
        if (j.time !== new Date(v7Millis(u)).toISOString()) return `time ${j.time}, Node says ${new Date(v7Millis(u)).toISOString()}`;
        if (j.uuid !== u) return `uuid ${j.uuid}`;
        return null;
    });
});

// ---------------------------------------------------------------- UUIDv4
const v4 = mint('uuidv4');
check(`uuidv4: ${N} IDs`, () => (v4.ids.length === N ? null : `got ${v4.ids.length}`));
check('uuidv4: uuid.validate() accepts every ID', () => firstBad(v4.ids, (u) => (uuidValidate(u) ? null : 'invalid')));
check('uuidv4: uuid.version() is 4 for every ID', () => firstBad(v4.ids, (u) => (uuidVersion(u) === 4 ? null : `version ${uuidVersion(u)}`)));
check('uuidv4: no duplicates', () => (new Set(v4.ids).size === N ? null : 'duplicates'));
check('uuidv4: inspect --json has no time', () => {
    const info = inspectJson(v4.ids.slice(0, 20));
    return firstBad(info, (j) => (j.version === 4 && j.unix_ms === null && j.time === null ? null : JSON.stringify(j)));
});

// ---------------------------------------------------------------- ULID
const ul = mint('ulid');
check(`ulid: ${N} IDs`, () => (ul.ids.length === N ? null : `got ${ul.ids.length}`));
check('ulid: isValid() accepts every ID, canonical uppercase', () =>
    firstBad(ul.ids, (u) => (ulidIsValid(u) && /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/.test(u) ? null : 'invalid')));
check('ulid: decodeTime() within a few seconds of now', () => firstBad(ul.ids, (u) => timeNear(decodeTime(u), ul.before, ul.after)));
check('ulid: monotonic, strictly increasing as strings', () => strictlyIncreasing(ul.ids));
check('ulid: inspect --json unix_ms equals ulid.decodeTime()', () => {
    const info = inspectJson(ul.ids);
    return firstBad(ul.ids, (u, i) => {
        const j = info[i];
        if (j.kind !== 'ulid') return `kind ${j.kind}`;
        if (j.unix_ms !== decodeTime(u)) return `unix_ms ${j.unix_ms}, decodeTime ${decodeTime(u)}`;
        if (j.ulid !== u) return `ulid ${j.ulid}`;
        if (j.uuid !== ulidToUUID(u).toLowerCase()) return `uuid ${j.uuid}, ulidToUUID ${ulidToUUID(u)}`;
        return null;
    });
});
check('ulid: lowercase input decodes to the same time', () => {
    const sample = ul.ids.slice(0, 10);
    const info = inspectJson(sample.map((u) => u.toLowerCase()));
    return firstBad(sample, (u, i) => (info[i].unix_ms === decodeTime(u) ? null : `unix_ms ${info[i].unix_ms}`));
});
check('convert --to uuid agrees with ulid.ulidToUUID()', () => {
    const sample = ul.ids.slice(0, 50);
    const out = lines(idmint('convert', '--to', 'uuid', ...sample));
    return firstBad(sample, (u, i) => (out[i] === ulidToUUID(u).toLowerCase() ? null : `got ${out[i]}, ulidToUUID ${ulidToUUID(u)}`));
});
check('convert --to ulid agrees with ulid.uuidToULID()', () => {
    const sample = v7.ids.slice(0, 50);
    const out = lines(idmint('convert', '--to', 'ulid', ...sample));
    return firstBad(sample, (u, i) => (out[i] === uuidToULID(u) ? null : `got ${out[i]}, uuidToULID ${uuidToULID(u)}`));
});

// ---------------------------------------------------------------- KSUID
const ks = mint('ksuid');
check(`ksuid: ${N} IDs of 27 base62 characters`, () =>
    ks.ids.length !== N ? `got ${ks.ids.length}` : firstBad(ks.ids, (k) => (/^[0-9A-Za-z]{27}$/.test(k) ? null : 'not base62')));
check('ksuid: strictly increasing as strings', () => strictlyIncreasing(ks.ids));
check('ksuid: inspect --json time within a few seconds of now', () => {
    const info = inspectJson(ks.ids.slice(0, 20));
    return firstBad(info, (j) => (j.kind !== 'ksuid' ? `kind ${j.kind}` : timeNear(j.unix_ms, ks.before, ks.after, 1000)));
});

// ---------------------------------------------------------------- Snowflake
const sf = mint('snowflake', '--node', '1');
check(`snowflake: ${N} decimal IDs`, () =>
    sf.ids.length !== N ? `got ${sf.ids.length}` : firstBad(sf.ids, (s) => (/^[1-9][0-9]{0,19}$/.test(s) ? null : 'not decimal')));
check('snowflake: strictly increasing as BigInt', () => strictlyIncreasing(sf.ids, (s) => BigInt(s)));
check('snowflake: twitter layout fields (node 1) by BigInt arithmetic', () =>
    firstBad(sf.ids, (s) => {
        const id = BigInt(s);
        const ms = Number(id >> 22n) + 1288834974657;
        const node = (id >> 12n) & 1023n;
        if (node !== 1n) return `node ${node}`;
        if (id >> 63n) return 'the unused top bit is set';
        return timeNear(ms, sf.before, sf.after);
    }));
check('snowflake: inspect --json agrees (node, sequence, unix_ms)', () => {
    const sample = sf.ids.slice(0, 20);
    const info = inspectJson(sample);
    return firstBad(sample, (s, i) => {
        const j = info[i];
        const id = BigInt(s);
        if (j.kind !== 'snowflake') return `kind ${j.kind}`;
        if (j.id !== s) return `id ${JSON.stringify(j.id)}`;
        if (j.node !== 1) return `node ${j.node}`;
        if (j.sequence !== Number(id & 4095n)) return `sequence ${j.sequence}`;
        if (j.unix_ms !== Number(id >> 22n) + 1288834974657) return `unix_ms ${j.unix_ms}`;
        return null;
    });
});

// ---------------------------------------------------------------- TypeID
const ti = mint('typeid', '--prefix', 'user');
check(`typeid: ${N} IDs user_ + 26 lowercase base32`, () =>
    ti.ids.length !== N ? `got ${ti.ids.length}` : firstBad(ti.ids, (t) => (/^user_[0-7][0-9a-hjkmnp-tv-z]{25}$/.test(t) ? null : 'bad shape')));
check('typeid: strictly increasing as strings', () => strictlyIncreasing(ti.ids));
check('typeid: convert --to uuid gives UUIDv7s that uuid.version() accepts', () => {
    const sample = ti.ids.slice(0, 50);
    const out = lines(idmint('convert', '--to', 'uuid', ...sample));
    return firstBad(out, (u) => (uuidValidate(u) && uuidVersion(u) === 7 ? null : 'not a UUIDv7'));
});
check('typeid: its suffix is the ULID text of the same bits (lowercase)', () => {
    const sample = ti.ids.slice(0, 50);
    const out = lines(idmint('convert', '--to', 'uuid', ...sample));
    return firstBad(sample, (t, i) => (t.slice(5) === uuidToULID(out[i]).toLowerCase() ? null : `uuid ${out[i]}`));
});

// ---------------------------------------------------------------- tokens, traceparent
const tk = mint('token', '--prefix', 'sk');
check('token: sk_ + 22 base62, no duplicates', () =>
    firstBad(tk.ids, (t) => (/^sk_[0-9A-Za-z]{22}$/.test(t) ? null : 'bad shape')) || (new Set(tk.ids).size === N ? null : 'duplicates'));
const tp = mint('traceparent');
check('traceparent: W3C shape, non-zero ids, no duplicate trace ids', () =>
    firstBad(tp.ids, (t) => {
        const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(t);
        if (!m) return 'bad shape';
        if (/^0+$/.test(m[1]) || /^0+$/.test(m[2])) return 'all-zero id';
        return null;
    }) || (new Set(tp.ids.map((t) => t.slice(3, 35))).size === N ? null : 'duplicate trace ids'));

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
