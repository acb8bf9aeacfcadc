// Type declarations of the idmint package (index.js, index.mjs).

/** A UUIDv7 (RFC 9562) in canonical lowercase form; strictly greater than every one minted before in this process. */
export function uuidv7(): string;
/** A random UUIDv4 in canonical lowercase form. */
export function uuidv4(): string;
/** A UUIDv7 as its 16 bytes (big-endian); in the same sequence as uuidv7(). */
export function uuidv7Bytes(): Uint8Array;
/** A ULID in canonical uppercase Crockford base32 (26 characters), monotonic per process. */
export function ulid(): string;
/** A KSUID (27 base62 characters), monotonic per process. */
export function ksuid(): string;
/** A TypeID: prefix + "_" + a UUIDv7 in base32, or the bare suffix when prefix is "" or omitted. */
export function typeid(prefix?: string): string;
/** An opaque random token: 22 base62 characters (128 bits), after "prefix_" when given. */
export function token(prefix?: string): string;
/** A W3C traceparent value: "00-<trace-id>-<parent-id>-01". */
export function traceparent(): string;

export type Kind = 'uuid' | 'ulid' | 'ksuid' | 'typeid' | 'snowflake';

export interface InspectOptions {
    /** Snowflake layout: a preset (twitter, discord, instagram, sonyflake, sonyflake2, baidu, safe53) or a spec. Default twitter. */
    layout?: string;
    /** Decode as this kind only, instead of recognising it. */
    kind?: Kind;
}

/** The members of `idmint inspect --json`. */
export interface Inspection {
    input: string;
    kind: Kind;
    /** Unix milliseconds, or null when the ID carries no time. */
    unix_ms: number | null;
    /** RFC 3339 UTC time, or null. */
    time: string | null;
    /** uuid, ulid, typeid: the 128 bits as a canonical UUID. */
    uuid?: string;
    /** uuid, typeid-less UUIDs: version number and variant name. */
    version?: number;
    variant?: 'ncs' | 'rfc9562' | 'microsoft' | 'future';
    /** UUID versions 1 and 6. */
    clock_seq?: number;
    node?: string | number;
    /** ulid: canonical form and the 80 random bits in hex. */
    ulid?: string;
    random?: string;
    /** ksuid: canonical form and the 128-bit payload in hex. */
    ksuid?: string;
    payload?: string;
    /** typeid: canonical form and prefix. */
    typeid?: string;
    prefix?: string;
    /** snowflake: the ID in decimal (it may exceed 2^53), the layout, node and sequence. */
    id?: string;
    layout?: string;
    sequence?: number;
}

/** Recognises and decodes an ID (UUID forms, ULID, KSUID, TypeID, snowflake). Throws TypeError when it is none. */
export function inspect(text: string, options?: InspectOptions): Inspection;

/** Re-encodes a 128-bit ID (UUID, ULID, TypeID) as another form; prefix only for 'typeid'. */
export function convert(text: string, to: 'uuid' | 'ulid' | 'typeid', prefix?: string): string;

export interface SnowflakeOptions {
    /** The node number (0 .. 2^node_bits - 1), or 'auto' to lease a free one from this host's registry. */
    node: number | bigint | 'auto';
    /** A preset or a spec ("time=41,node=10,seq=12,unit=1ms,epoch=..."). Default 'twitter'. */
    layout?: string;
    /** A durable mark file: no ID is returned before a time mark at or above it is on disk, and a later run resumes above it. */
    mark?: string;
    /** How far back (ms) the clock may step and be waited out instead of refused. Default 10. */
    maxRewind?: number;
    /** The host's node registry, where a node given is registered and 'auto' leases one (default /run/idmint/nodes). */
    registry?: string;
}

/** A 64-bit Snowflake generator, strictly increasing. Belongs to the thread that made it. */
export class Snowflake {
    constructor(options: SnowflakeOptions);
    /** The next ID as a bigint. */
    next(): bigint;
    /** The next ID as a decimal string (JSON-safe). */
    nextString(): string;
    /** Gives the node back and lowers the mark to the time last used; further calls throw. */
    close(): void;
    /** The node number in use (leased for 'auto'). */
    readonly node: number;
    /** The layout's preset name or canonical spec. */
    readonly layout: string;
}

/** The libidmint version the addon was built from. */
export const libraryVersion: string;

declare const idmint: {
    uuidv7: typeof uuidv7; uuidv4: typeof uuidv4; uuidv7Bytes: typeof uuidv7Bytes; ulid: typeof ulid;
    ksuid: typeof ksuid; typeid: typeof typeid; token: typeof token; traceparent: typeof traceparent;
    inspect: typeof inspect; convert: typeof convert; Snowflake: typeof Snowflake;
    libraryVersion: typeof libraryVersion;
};
export default idmint;
