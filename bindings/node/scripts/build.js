#!/usr/bin/env node
// scripts/build.js - builds build/idmint.node, the Node-API addon, with the
// system C compiler: libidmint's sources (src/), the few shared helpers it
// needs (common/inspect_render.c, json.c, outbuf.c), the host's node
// registry (coord/local.c) and src/addon.c, linked with OpenSSL's
// libcrypto. Run by `npm install` (the package's install script); needs no
// network: node_api.h comes from the installed Node (IDMINT_NODE_INCLUDE,
// else <prefix>/include/node, else /usr/include/node).
//
// Environment: CC (default cc), CFLAGS (added), IDMINT_SOURCE_DIR (the
// idmint source tree; default the checkout this package sits in),
// IDMINT_NODE_INCLUDE, IDMINT_JOBS (parallel compiles, default 2).
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const pkg = path.resolve(__dirname, '..');
const root = path.resolve(process.env.IDMINT_SOURCE_DIR || path.join(pkg, '..', '..'));
const out = path.join(pkg, 'build');
const objdir = path.join(out, 'obj');
const cc = process.env.CC || 'cc';
const jobs = Math.max(1, Number(process.env.IDMINT_JOBS) || 2);

function die(msg) {
    console.error(`idmint: build: ${msg}`);
    process.exit(1);
}

function nodeInclude() {
    const candidates = [
        process.env.IDMINT_NODE_INCLUDE,
        path.join(path.dirname(path.dirname(process.execPath)), 'include', 'node'),
        '/usr/include/node',
        '/usr/local/include/node',
    ].filter(Boolean);
    for (const dir of candidates) {
        if (fs.existsSync(path.join(dir, 'node_api.h'))) return dir;
    }
    return die(`node_api.h not found in ${candidates.join(', ')}: install Node's headers ` +
        '(Debian: nodejs or libnode-dev) or set IDMINT_NODE_INCLUDE');
}

function walk(dir, acc) {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p, acc);
        else if (e.name.endsWith('.c')) acc.push(p);
    }
    return acc;
}

if (!fs.existsSync(path.join(root, 'include', 'idmint', 'idmint.h'))) {
    die(`no idmint sources at ${root}: install from the checkout with ` +
        `npm install --install-links=false ./bindings/node (npm 9.0 to 9.3, Debian 12's ` +
        `among them, install a folder as a copy without its surroundings), or set ` +
        `IDMINT_SOURCE_DIR to the idmint source tree`);
}
const napiInclude = nodeInclude();
const library = walk(path.join(root, 'src'), []).sort();
const helpers = ['common/inspect_render.c', 'common/json.c', 'common/outbuf.c', 'coord/local.c']
    .map((f) => path.join(root, f));
const addon = [path.join(pkg, 'src', 'addon.c')];

const base = ['-std=c11', '-O2', '-fPIC', '-fvisibility=hidden', '-D_GNU_SOURCE', '-pthread',
    '-Wall', '-Wextra'];
if (process.arch === 'x64') base.push('-mcx16');
const extra = (process.env.CFLAGS || '').split(/\s+/).filter(Boolean);

const units = [
    ...library.map((src) => ({ src, flags: ['-DIDM_BUILDING_LIBRARY', `-I${path.join(root, 'include')}`,
        `-I${path.join(root, 'src')}`] })),
    ...helpers.map((src) => ({ src, flags: [`-I${path.join(root, 'include')}`,
        `-I${path.join(root, 'common')}`, `-I${path.join(root, 'coord')}`] })),
    ...addon.map((src) => ({ src, flags: [`-I${path.join(root, 'include')}`,
        `-I${path.join(root, 'common')}`, `-I${path.join(root, 'coord')}`, `-I${napiInclude}`,
        '-DNAPI_VERSION=8'] })),
];

fs.mkdirSync(objdir, { recursive: true });

function run(args) {
    return new Promise((resolve, reject) => {
        const child = spawn(cc, args, { stdio: 'inherit' });
        child.on('error', (e) => reject(new Error(`${cc}: ${e.message}`)));
        child.on('exit', (code) => (code === 0 ? resolve()
            : reject(new Error(`${cc} ${args.join(' ')} exited with ${code}`))));
    });
}

async function main() {
    const objects = units.map((u) => path.join(objdir,
        path.relative(root, u.src).replace(/[\\/.]+/g, '_') + '.o'));
    let next = 0;
    async function worker() {
        while (next < units.length) {
            const i = next++;
            await run([...base, ...units[i].flags, ...extra, '-c', units[i].src, '-o', objects[i]]);
        }
    }
    await Promise.all(Array.from({ length: jobs }, worker));
    const target = path.join(out, 'idmint.node');
    // -z nodelete: Node unloads an addon when the last worker that loaded
    // it exits (while the main thread has not); the process's generator and
    // its high-water mark must outlive that (src/addon.c).
    await run(['-shared', '-pthread', '-Wl,-z,nodelete', ...extra, '-o', `${target}.tmp`, ...objects, '-lcrypto']);
    fs.renameSync(`${target}.tmp`, target);
    console.log(`idmint: built ${path.relative(process.cwd(), target) || target}`);
}

main().catch((e) => die(e.message));
