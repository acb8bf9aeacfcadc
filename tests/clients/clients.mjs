// tests/clients/clients.mjs CLIENT PORT [PASSWORD] - runs one Node Redis client
// library against idmintd's RESP port on 127.0.0.1:PORT with the library's
// default options (only host and port given, and the password option when
// PASSWORD is: idmintd's --auth-token-file token) and checks the replies'
// types:
//
//   node-redis   the `redis` package 5 (RESP2 by default, no HELLO)
//   node-redis3  the same with RESP: 3 (HELLO 3, what redis 6 does by default)
//   node-redis6  the `redis` package 6 (npm alias redis-v6): RESP3 and HELLO 3
//                by default
//   ioredis      ioredis 5 (INFO ready check, CLIENT SETINFO)
//
// Prints one "not ok - ..." line per failed check and nothing else, and exits
// 1 when any failed (tests/server/test_resp_clients.sh runs it).
const [client, portText, password] = process.argv.slice(2);
const port = Number(portText);
const failures = [];
const check = (what, ok, detail) => {
    if (!ok) failures.push(`not ok - ${client}: ${what}${detail === undefined ? '' : ` (got ${detail})`}`);
};
const show = (v) => {
    try {
        return JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x));
    } catch {
        return String(v);
    }
};
const SNOWFLAKE = /^[1-9][0-9]{0,18}$/;
const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// A library that hangs (a reply it waits for forever) fails instead.
setTimeout(() => {
    console.log(`not ok - ${client}: did not finish within 20 s`);
    for (const f of failures) console.log(f);
    process.exit(1);
}, 20000).unref();

// The checks every library shares; call(args) sends a raw command.
async function common(call) {
    check('PING answers PONG', (await call(['PING'])) === 'PONG');
    const three = await call(['NEXT', 'snowflake', '3']);
    check(
        'NEXT snowflake 3 is an array of 3 increasing snowflakes',
        Array.isArray(three) &&
            three.length === 3 &&
            three.every((s) => SNOWFLAKE.test(String(s))) &&
            BigInt(three[0]) < BigInt(three[1]) &&
            BigInt(three[1]) < BigInt(three[2]),
        show(three)
    );
    const one = await call(['NEXT', 'uuidv7']);
    check('NEXT uuidv7 is a string', typeof one === 'string' && UUID7.test(one), show(one));
    const arr1 = await call(['NEXT', 'uuidv7', '1']);
    check(
        'NEXT uuidv7 1 is an array of 1',
        Array.isArray(arr1) && arr1.length === 1 && UUID7.test(String(arr1[0])),
        show(arr1)
    );
    const typeid = await call(['NEXT', 'typeid', 'user']);
    check('NEXT typeid user is a string', typeof typeid === 'string' && /^user_[0-9a-z]{26}$/.test(typeid), show(typeid));
    let err = null;
    try {
        await call(['NEXT', 'uuidv9']);
    } catch (e) {
        err = e;
    }
    check(
        'NEXT uuidv9 is an error reply naming the format',
        err !== null && /^ERR unknown format 'uuidv9'/.test(err.message),
        err === null ? 'no error' : err.message
    );
    const after = await call(['PING', 'still here']);
    check('the connection stays usable after an error', after === 'still here', show(after));
    const id = await call(['CLIENT', 'ID']);
    check('CLIENT ID is an integer', Number.isInteger(id) && id > 0, show(id));
    return id;
}

// The replies of a transaction of NEXT snowflake 2, INCR orders, NEXT
// uuidv7, INCR orders, INCRBY orders 3, PING (each library's multi()).
function transaction(res) {
    const ok = Array.isArray(res) && res.length === 6;
    check('multi().exec() gives 6 replies', ok, show(res));
    if (!ok) return;
    const [ids, a, u, b, c, pong] = res;
    check(
        '... NEXT snowflake 2: an array of 2 increasing snowflakes',
        Array.isArray(ids) && ids.length === 2 && ids.every((s) => SNOWFLAKE.test(String(s))) && BigInt(ids[0]) < BigInt(ids[1]),
        show(ids)
    );
    check(
        '... INCR, INCR, INCRBY 3: integers, consecutive',
        [a, b, c].every((x) => Number.isInteger(x)) && b === a + 1 && c === b + 3,
        show([a, b, c])
    );
    check('... NEXT uuidv7: a string', typeof u === 'string' && UUID7.test(u), show(u));
    check('... PING: PONG', pong === 'PONG', show(pong));
}

async function nodeRedis(pkg, extra) {
    const { createClient } = await import(pkg);
    const auth = password === undefined ? {} : { password };
    const c = createClient({ socket: { host: '127.0.0.1', port }, ...auth, ...extra });
    let errors = 0;
    c.on('error', (e) => {
        errors++;
        if (errors === 1) failures.push(`not ok - ${client}: error event: ${e.message}`);
    });
    await c.connect();
    const id = await common((args) => c.sendCommand(args));
    check('clientId() is the CLIENT ID', (await c.clientId()) === id);
    check('clientGetName() is null before a name is set', (await c.clientGetName()) === null);
    await c.clientSetName('idmint-test');
    check('clientGetName() after clientSetName()', (await c.clientGetName()) === 'idmint-test');
    const info = await c.clientInfo();
    check('clientInfo() parses, with the id', info && info.id === id, show(info));
    const text = String(await c.info());
    check('info() holds ready:1', /(^|\n)ready:1\r?$/m.test(text), show(text.slice(0, 200)));
    const n = await c.commandCount();
    check('commandCount() is a positive integer', Number.isInteger(n) && n > 0, show(n));
    // multi().exec(): MULTI, the commands, EXEC; each command's reply in order.
    const res = await c
        .multi()
        .addCommand(['NEXT', 'snowflake', '2'])
        .incr('orders')
        .addCommand(['NEXT', 'uuidv7'])
        .incr('orders')
        .incrBy('orders', 3)
        .ping()
        .exec();
    transaction(res);
    let abort = null;
    try {
        await c.multi().incr('orders').addCommand(['NOSUCH']).exec();
    } catch (e) {
        abort = e;
    }
    check(
        'multi() with an unknown command rejects (EXECABORT)',
        abort !== null && /EXECABORT|NOSUCH/.test(`${abort.message} ${JSON.stringify(abort.replies ?? '')}`),
        abort === null ? 'no error' : abort.message
    );
    if (typeof c.close === 'function') await c.close();
    else await c.quit();
}

async function ioredis() {
    const { default: Redis } = await import('ioredis');
    const auth = password === undefined ? {} : { password };
    const r = new Redis({ host: '127.0.0.1', port, ...auth });
    let errors = 0;
    r.on('error', (e) => {
        errors++;
        if (errors === 1) failures.push(`not ok - ${client}: error event: ${e.message}`);
    });
    await new Promise((resolve, reject) => {
        r.once('ready', resolve);
        r.once('end', () => reject(new Error('connection ended before ready')));
    });
    const id = await common((args) => r.call(...args));
    check('client("GETNAME") is null before a name is set', (await r.client('GETNAME')) === null);
    const info = await r.info();
    check('info() holds ready:1', /(^|\n)ready:1\r?$/m.test(info));
    check('client("ID") again gives the same id', (await r.client('ID')) === id);
    // multi().exec(): [[err, reply], ...] in order.
    const res = await r
        .multi()
        .call('NEXT', 'snowflake', '2')
        .incr('orders')
        .call('NEXT', 'uuidv7')
        .incr('orders')
        .incrby('orders', 3)
        .ping()
        .exec();
    check('multi().exec(): no error in any reply', Array.isArray(res) && res.every(([e]) => e === null), show(res));
    transaction(Array.isArray(res) ? res.map(([, v]) => v) : res);
    let abort = null;
    try {
        await r.multi().incr('orders').call('NOSUCH').exec();
    } catch (e) {
        abort = e;
    }
    check(
        'multi() with an unknown command rejects with EXECABORT',
        abort !== null && /EXECABORT/.test(abort.message),
        abort === null ? 'no error' : abort.message
    );
    await r.quit();
}

try {
    if (client === 'node-redis') await nodeRedis('redis', {});
    else if (client === 'node-redis3') await nodeRedis('redis', { RESP: 3 });
    else if (client === 'node-redis6') await nodeRedis('redis-v6', {});
    else if (client === 'ioredis') await ioredis();
    else failures.push(`not ok - unknown client '${client}'`);
} catch (e) {
    failures.push(`not ok - ${client}: ${e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e}`);
}
for (const f of failures) console.log(f);
process.exit(failures.length === 0 ? 0 : 1);
