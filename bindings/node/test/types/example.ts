// Type-checked (tsc --noEmit --strict) by tests/bindings/test_node.sh: the
// declarations accept the documented uses and reject misuses.
import idmint, { uuidv7, uuidv7Bytes, typeid, token, inspect, convert, Snowflake, type Inspection } from 'idmint';

const id: string = uuidv7();
const bytes: Uint8Array = uuidv7Bytes();
const user: string = typeid('user');
const secret: string = token();
const info: Inspection = inspect(user, { kind: 'typeid' });
const when: number | null = info.unix_ms;
const asUlid: string = convert(id, 'ulid');
const sf = new Snowflake({ node: 'auto', layout: 'safe53', mark: '/var/lib/app/mark' });
const next: bigint = sf.next();
const text: string = sf.nextString();
const node: number = sf.node;
sf.close();
const also: string = idmint.ksuid();

// @ts-expect-error: convert's target is one of three forms
convert(id, 'base64');
// @ts-expect-error: node is required
new Snowflake({ layout: 'twitter' });
// @ts-expect-error: next() is a bigint, not a number
const wrong: number = new Snowflake({ node: 1 }).next();

export { bytes, secret, when, asUlid, next, text, node, also, wrong };
