// idmint - the ES module entry point: the same objects as index.js.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const idmint = require('./index.js');

export const {
    uuidv7, uuidv4, uuidv7Bytes, ulid, ksuid, typeid, token, traceparent, inspect, convert,
    Snowflake, libraryVersion,
} = idmint;
export default idmint;
