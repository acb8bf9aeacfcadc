/*
 * audit.h - the checks of `idmint audit` (man/idmint.1, "audit";
 * docs/audit.md), apart from reading and printing: audit_check.c keeps
 * every ID it is given with the place it came from, and finds
 * duplicates, IDs out of order, the signature of two writers sharing a
 * snowflake node, sequences that overflowed, and IDs from the future or
 * before the epoch (audit_end.c the checks made after the sort);
 * audit_report.c prints the result for people or as JSON. audit.c is
 * the command: options, files, stdin and --db.
 *
 * Places: every input line (or database row) has an ordinal, counted
 * across all inputs from 1; an input begins at a base ordinal, so
 * "input NAME, line ordinal - base" is recovered without storing a line
 * number per ID. Ordinals are 32-bit: an audit reads at most
 * AUDIT_MAX_LINES lines in all.
 */
#ifndef IDM_CLI_AUDIT_H
#define IDM_CLI_AUDIT_H

#include "outbuf.h"

#include <idmint/idmint.h>

#include <stdbool.h>
#include <stdint.h>

#define AUDIT_MAX_LINES   UINT32_MAX
#define AUDIT_KEY_MAX     20 /* a KSUID's bytes */
#define AUDIT_SHOW_MAX    1000
#define AUDIT_MAX_BUCKETS 60 /* and one more when the span does not start on one */

/* What order the input promises (--order). */
enum {
    AUDIT_ORDER_NONE = 0, /* none: only order-free checks */
    AUDIT_ORDER_NODE = 1, /* each node's IDs in each input in minting order (snowflake) */
    AUDIT_ORDER_INPUT = 2 /* each input is one generator's IDs in minting order */
};

/* The findings, in the order reports list them. The first ones are the
 * ones that must not happen (they make the exit status 1). */
enum {
    AUDIT_F_DUPLICATE = 0,
    AUDIT_F_SHARED_NODE,
    AUDIT_F_OUT_OF_ORDER,
    AUDIT_F_SEQ_OVERFLOW,
    AUDIT_F_FUTURE,
    AUDIT_F_BEFORE_EPOCH,
    AUDIT_F_INVALID,
    AUDIT_N_FINDINGS
};

typedef struct audit_opts {
    const idm_format *fmt;
    idm_sf_layout layout; /* snowflake */
    int order;            /* AUDIT_ORDER_* */
    int64_t now_ms;
    int64_t max_ahead_ms;  /* future: later than now_ms + this */
    int64_t not_before_ms; /* before the epoch: earlier than this */
    bool skip_invalid;     /* invalid lines are counted, not failures */
    uint32_t show;         /* places listed per finding */
} audit_opts;

/* One place a finding was seen: where, the ID there, and the earlier
 * place and ID it conflicts with (ord2 0: none). */
typedef struct audit_event {
    uint32_t ord;
    uint32_t ord2;
    uint8_t key[AUDIT_KEY_MAX];
    uint8_t key2[AUDIT_KEY_MAX];
    uint64_t node;
    int64_t value; /* duplicates: occurrences; future: ms ahead; shared: 1 restart, 3 overlapping
                      inputs */
    char why[96];  /* invalid: the reason */
} audit_event;

typedef struct audit_finding {
    uint64_t count;    /* occurrences */
    uint32_t n_events; /* events[0..n_events-1]: the first places */
    audit_event *events;
} audit_finding;

/* Per node (snowflake) or the one pseudo-node of other formats. */
typedef struct audit_node {
    uint64_t node;
    uint64_t count;
    int64_t first_ms, last_ms;
    uint64_t dups, restarts, overlaps, out_of_order, overflows;
    uint64_t busiest;        /* most IDs in one unit */
    int64_t busiest_unit_ms; /* that unit's start */
    uint64_t *buckets;       /* AUDIT_MAX_BUCKETS + 1 counts, after audit_finish */
    /* the order state of the current input */
    uint32_t input;
    bool have;
    uint32_t last_ord;
    uint8_t last_key[AUDIT_KEY_MAX];
    uint8_t min_key[AUDIT_KEY_MAX], max_key[AUDIT_KEY_MAX]; /* in the current input */
    uint32_t min_ord, max_ord;
} audit_node;

typedef struct audit_input {
    char *name;
    uint32_t base; /* ordinal of its line 0 */
    bool db;       /* rows, not lines */
} audit_input;

/* A node's range of IDs in one input (snowflakes, for the overlaps). */
typedef struct audit_span {
    uint32_t node; /* index into nodes */
    uint32_t input;
    uint8_t min_key[8], max_key[8];
    uint32_t min_ord, max_ord;
} audit_span;

typedef struct audit {
    audit_opts o;
    size_t key_len; /* 8, 16 or 20 */
    size_t stride;  /* key_len + 4 */
    uint8_t *recs;  /* n_recs records: key, then the ordinal */
    size_t n_recs, cap_recs;
    audit_input *inputs;
    uint32_t n_inputs, cap_inputs;
    uint32_t next_ord;
    uint64_t lines; /* lines read (non-empty) */
    audit_node *nodes;
    size_t n_nodes, cap_nodes;
    uint32_t *node_index; /* open addressing: index + 1, 0 empty */
    size_t index_cap;
    audit_span *spans; /* a node's range in one input (snowflake, for overlaps) */
    size_t n_spans, cap_spans;
    audit_finding f[AUDIT_N_FINDINGS];
    uint64_t distinct_dups;
    int64_t min_ms, max_ms; /* over all IDs */
    int64_t bucket_ms, bucket_start_ms;
    uint32_t n_buckets;
    /* the previous line of the current input */
    bool in_have;
    uint8_t in_last_key[AUDIT_KEY_MAX];
    uint32_t in_last_ord;
    uint64_t in_last_id, in_last_seq, in_last_node; /* snowflake */
    bool spans_lost;                                /* out of memory for the overlap check */
    uint64_t seq_max;                               /* snowflake: 2^seq_bits - 1 */
    char typeid_prefix[64];
    bool have_prefix;
    bool finished;
} audit;

/* Sets up an audit. Returns 0 or ENOMEM. */
int audit_init(audit *a, const audit_opts *o);
void audit_free(audit *a);

/* Starts the next input, named name (copied). Returns 0, ENOMEM, or
 * EOVERFLOW when AUDIT_MAX_LINES lines have been read. */
int audit_begin_input(audit *a, const char *name, bool db);

/* The next line (or row) of the current input: text of the audited
 * format, or (binary) its bytes as a database column holds them: a
 * snowflake's 8 big-endian bytes, a 128-bit ID's 16, a KSUID's 20.
 * An invalid ID is recorded as a finding. Returns 0, ENOMEM or EOVERFLOW
 * (too many lines); *invalid is set when the ID was invalid, with the
 * reason in why[0..why_cap-1]. */
int audit_add(audit *a, const char *text, size_t len, bool binary, bool *invalid, char *why,
              size_t why_cap);

/* Counts a line that is not read (empty): keeps line numbers right. */
int audit_skip_line(audit *a);

/* Sorts what was read and finds the duplicates, the overlaps and the
 * rates. Returns 0 or ENOMEM. */
int audit_finish(audit *a);

/* Whether anything that must not happen was found. */
bool audit_failed(const audit *a);

/* The place of an ordinal: "NAME:LINE" or "NAME row N", into dst. */
void audit_place(const audit *a, uint32_t ord, char *dst, size_t cap);

/* The text of a stored key, into dst (IDM_FORMAT_TEXT_MAX + 1 bytes). */
void audit_key_text(const audit *a, const uint8_t *key, char *dst, size_t cap);

/* ---- shared by audit_check.c and audit_end.c ---- */

/* What a key says: its time (has_time false for UUIDv4) and, for a
 * snowflake, its fields. */
typedef struct audit_key_info {
    bool has_time;
    int64_t ms;
    idm_sf_parts parts;
} audit_key_info;

uint64_t audit__be64(const uint8_t *p);
void audit__key_decode(const audit *a, const uint8_t *key, audit_key_info *k);
audit_node *audit__find_node(const audit *a, uint64_t node);
/* Counts one occurrence of finding f at ord; returns the event to fill
 * when it is among the --show earliest, else NULL. */
audit_event *audit__note(audit *a, int f, uint32_t ord);
/* The earlier place (and ID) an event conflicts with. */
void audit__note_prev(const audit *a, audit_event *e, uint32_t ord2, const uint8_t *key2);
/* Closes each node's range in the current input (audit_span). */
void audit__flush_spans(audit *a);

/* audit_report.c: the summary for people, and the JSON object. */
void audit_report_text(const audit *a, idmx_outbuf *out);
void audit_report_json(const audit *a, idmx_outbuf *out);

/* The findings' names as JSON and the summary use them. */
const char *audit_finding_name(int f);

#endif
