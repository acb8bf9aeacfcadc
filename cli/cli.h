/*
 * cli.h - the idmint command: what its files share.
 *
 * The command is a thin layer over libidmint (man/idmint.1 is its
 * specification): it parses options, reads inputs, calls the library and
 * writes the results. No ID logic lives here.
 *
 *   main.c     command dispatch, top-level --help and --version
 *   options.c  the option loop that every command shares
 *   output.c   buffered stdout (write(2), EPIPE ends quietly), diagnostics
 *   input.c    inputs from the operands or from stdin, one per line
 *   layout.c   --layout/--epoch/--node option values for snowflakes
 *   gen.c      idmint gen
 *   inspect.c  idmint inspect
 *   audit.c    idmint audit (audit.h: audit_check.c the checks as IDs
 *              arrive, audit_end.c those after the sort, audit_report.c
 *              the summary and JSON)
 *   convert.c  idmint convert
 *   nodelease.c  a snowflake node leased for one gen run (--node auto,
 *              --coord): claim, marks, keep-alive, release
 *   lease.c    idmint lease list
 *   segment.c  idmint segment create, list and show (a segment store's tags)
 *   keyed.c    idmint keygen, obfuscate, reveal, verify, and gen token
 *              --expires (keyed.h; key files through common/keyfile.c)
 *   bench.c    idmint bench btree (and bench keys, a diagnostic): ID formats
 *              against a database's B-tree (dbbench/idmint_dbbench.h)
 *   benchkeys.c  the benchmark's keys per format (benchkeys.h)
 *   svg.c      bench btree's --chart (bench.h)
 *   hlc.c      idmint hlc now, update and inspect (hybrid logical clocks)
 */
#ifndef IDM_CLI_H
#define IDM_CLI_H

#include "formats.h"
#include "optparse.h"
#include "optvalue.h"
#include "outbuf.h"

#include <idmint/idmint.h>

#include "idmint_coord.h"

#include <stdbool.h>
#include <stdio.h>

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* Exit statuses (man/idmint.1, EXIT STATUS). */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

/* Bytes staged before a write(2) to stdout. */
#define CLI_OUT_CAP (128 * 1024)

/* The state of one run, passed to every command. */
typedef struct cli {
    idmx_outbuf out;  /* stdout */
    int out_is_tty;   /* flush after each record when interactive */
    int out_reported; /* a write error has been reported */
    const char *cmd;  /* the command being run, for "Try 'idmint CMD --help'" */
    /* Called before a closed stdout ends the run (output.c exits at once
     * then): gives a leased node back. NULL when nothing is held. */
    void (*on_close)(void *ctx);
    void *on_close_ctx;
} cli;

/* ---- output.c ----------------------------------------------------------- */

/* Sets up stdout buffering over mem[0..cap-1] and makes a closed stdout
 * end the program quietly with status 0. */
void cli_out_init(cli *c, char *mem, size_t cap);

/* Writes out what is buffered. Returns CLI_EXIT_OK, or CLI_EXIT_FAIL after
 * reporting a write error. */
int cli_out_flush(cli *c);

/* Checks the output's sticky error once: CLI_EXIT_OK, or CLI_EXIT_FAIL
 * after reporting it (once). */
int cli_out_status(cli *c);

/* "idmint: " + message on stderr, after flushing stdout so that the two
 * streams keep their order when they go to the same place. */
void cli_diag(cli *c, const char *fmt, ...) CLI_PRINTF(2, 3);

/* "idmint: INPUT: reason" for an input that is not a valid ID. */
/* Copies text into dst for a message: control characters and bytes above
 * 0x7e as \xNN, at most max_in input bytes (then "..."). */
void cli_escape(const char *text, size_t max_in, char *dst, size_t cap);
/* A --prefix the rule refuses: the usage error (2), the prefix escaped. */
int cli_bad_prefix(cli *c, const char *prefix, const idm_error *err, int rc);
void cli_diag_input(cli *c, const char *input, size_t len, const char *reason);

/* A usage error: the message, then a pointer to --help. Returns
 * CLI_EXIT_USAGE. */
int cli_usage(cli *c, const char *fmt, ...) CLI_PRINTF(2, 3);

/* The reason text of a failed library call: err->msg, or the code's fixed
 * text when the message is empty. */
const char *cli_reason(const idm_error *err, int code);

/* Prints a help text on stdout. Returns CLI_EXIT_OK (or FAIL on a write
 * error). */
int cli_help(cli *c, const char *text);

/* ---- options.c ---------------------------------------------------------- */

/* The id of -h/--help in every command's option table; a command's own
 * option ids follow it. */
enum { CLI_OPT_HELP = 1 };

/* What an option handler returns to go on, and cli_parse_options when all
 * the arguments are taken: not an exit status. */
enum { CLI_CONTINUE = -1 };

/* Takes one option of a command, by its id (its value, if any, in p->arg),
 * or one operand (id IDMX_OPT_OPERAND, the operand in p->arg). Returns
 * CLI_CONTINUE, or the exit status to end the command with. */
typedef int (*cli_option_fn)(cli *c, void *ctx, int id, const idmx_optparse *p);

/* Parses argv[1..argc-1] against opts, in order: a malformed option is a
 * usage error, CLI_OPT_HELP prints help, and every other option and each
 * operand goes to take. Returns CLI_CONTINUE when all are taken, else the
 * exit status to end the command with (CLI_EXIT_OK after the help). */
int cli_parse_options(cli *c, int argc, char **argv, const idmx_option *opts, const char *help,
                      cli_option_fn take, void *ctx);

/* ---- input.c ------------------------------------------------------------ */

/* Handles one input of inspect or convert: writes its result, or reports
 * it as invalid. Returns CLI_EXIT_OK, or CLI_EXIT_FAIL for an invalid
 * input. */
typedef int (*cli_input_fn)(cli *c, void *ctx, const char *text, size_t len);

/* Runs each input through fn: the operands args[0..n_args-1] when there
 * are any, else the lines of stdin (with "\n" and a trailing "\r"
 * removed; empty lines are skipped). Stops early when stdout has failed,
 * and flushes stdout after each input when it is a terminal. Returns the
 * output's failure status if it failed, else CLI_EXIT_FAIL after a read
 * error (reported) or an invalid input, else CLI_EXIT_OK. */
int cli_for_each_input(cli *c, char **args, int n_args, cli_input_fn fn, void *ctx);

/* ---- layout.c ----------------------------------------------------------- */

/* Parses --layout (NULL: twitter) and applies --epoch (NULL: keep) into
 * *out, with idmintd's parser (idmx_layout_resolve). Returns CLI_EXIT_OK
 * or a reported usage error. */
int cli_layout_from_options(cli *c, const char *layout_text, const char *epoch_text,
                            idm_sf_layout *out);

/* The layout's name or spec, for messages. */
void cli_layout_name(const idm_sf_layout *l, char *dst, size_t cap);

/* ---- nodelease.c -------------------------------------------------------- */

#define CLI_LEASE_TTL_MS 10000 /* --lease-ttl's default */

/* Where a node is leased from and which. */
typedef struct cli_node_lease_opts {
    const char *coord;    /* a coordinator URL; NULL: the host-local registry */
    const char *registry; /* the local registry's directory; NULL: the default */
    const char *ns;       /* the local registry's namespace: the layout's name */
    int64_t max_mark_ms;  /* the layout's last time: a slot's mark past it is unusable */
    uint64_t lo, hi;      /* the nodes to claim from (lo == hi: exactly that one) */
    bool exact;           /* --node N: a refusal names it as the node asked for */
    int64_t ttl_ms;       /* the coordinator lease's TTL */
} cli_node_lease_opts;

/* One node held for a run. Fields are nodelease.c's. */
typedef struct cli_node_lease {
    idmc_coord *coord; /* with --coord */
    idmc_lease *lease;
    idmc_slot *slot; /* from the host-local registry */
    uint64_t node;
    int64_t claim_mark; /* the slot's mark when claimed: mint above it */
    int64_t recorded;   /* the mark recorded for this holder */
    int64_t ttl_ms;     /* the lease's TTL as granted or last confirmed */
    int64_t confirmed;  /* monotonic ms: when the last confirmed call began */
    int64_t next_keepalive;
    int64_t retry_at;           /* monotonic ms: no call before it after a failure */
    int64_t failing_since;      /* monotonic ms: the first of the failures in a row; 0 */
    char failure[IDMC_MSG_CAP]; /* the last failed call's message */
} cli_node_lease;

/* Claims a node as o says and waits until the clock has passed the
 * slot's mark (one line on stderr when that is long), then records a mark
 * ahead. Returns CLI_EXIT_OK with *L held, or a reported failure (1: busy,
 * unreachable; 2: a bad URL) with nothing held. */
int cli_node_lease_claim(cli *c, const cli_node_lease_opts *o, cli_node_lease *L);

/* The generator's ceiling: the recorded mark, and for a coordinator's
 * lease also its deadline (less a margin) as wall-clock time. */
int64_t cli_node_lease_ceiling(const cli_node_lease *L);

/* Called between batches, and with at_ceiling after the generator
 * stopped at its ceiling: keeps the lease alive and records a mark ahead
 * when they are due (or needed to go on). Returns CLI_EXIT_OK, or
 * CLI_EXIT_FAIL after reporting why minting cannot go on (the lease was
 * lost or ran out; the mark cannot be recorded). */
int cli_node_lease_keep(cli *c, cli_node_lease *L, bool at_ceiling);

/* Lowers the mark to used_ms (the generator's high water: the latest time
 * it used; 0 when unknown) and gives the node back. Safe to call once on
 * any cli_node_lease that cli_node_lease_claim filled. */
void cli_node_lease_end(cli_node_lease *L, int64_t used_ms);

/* ---- commands ----------------------------------------------------------- */

/* Each takes its arguments (argv[0] is the command's name) and returns an
 * exit status. */
int cli_gen(cli *c, int argc, char **argv);
int cli_inspect(cli *c, int argc, char **argv);
int cli_audit(cli *c, int argc, char **argv);
int cli_convert(cli *c, int argc, char **argv);
int cli_lease(cli *c, int argc, char **argv);
int cli_segment(cli *c, int argc, char **argv);
int cli_bench(cli *c, int argc, char **argv);
int cli_hlc(cli *c, int argc, char **argv);

extern const char cli_gen_help[];
extern const char cli_inspect_help[];
extern const char cli_audit_help[];
extern const char cli_convert_help[];
extern const char cli_lease_help[];
extern const char cli_segment_help[];
extern const char cli_bench_help[];
extern const char cli_hlc_help[];

/* keyed.c */
int cli_keygen(cli *c, int argc, char **argv);
int cli_obfuscate(cli *c, int argc, char **argv);
int cli_reveal(cli *c, int argc, char **argv);
int cli_verify(cli *c, int argc, char **argv);
extern const char cli_keygen_help[];
extern const char cli_obfuscate_help[];
extern const char cli_reveal_help[];
extern const char cli_verify_help[];
/* gen token --expires D --key-file F: count signed tokens. Returns an exit
 * status (2 for a bad --expires). */
int cli_gen_stoken(cli *c, idm_gen *g, uint64_t count, const char *prefix, const char *expires,
                   const char *key_file);

#endif
