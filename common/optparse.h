/*
 * optparse.h - command-line option parsing for the front ends, without
 * getopt's globals (after optparse by Chris Wellons). Not library API.
 *
 * Accepted forms, GNU style:
 *   --name value   --name=value   --flag
 *   -n value       -nvalue        -abc (a cluster of flags, the last of
 *                                       which may take the rest as value)
 *   --             everything after it is an operand
 *   -              an operand (by convention stdin)
 * Options and operands may be interleaved; operands come back in order.
 * Long names must be spelled in full (no abbreviations), so adding an
 * option later never breaks an existing command line.
 */
#ifndef IDMX_OPTPARSE_H
#define IDMX_OPTPARSE_H

#include <stdint.h>

enum { IDMX_NO_ARG = 0, IDMX_REQUIRED_ARG = 1 };

/* What idmx_opt_next returns besides an option's id (ids must be > 0). */
enum { IDMX_OPT_END = -1, IDMX_OPT_ERROR = -2, IDMX_OPT_OPERAND = -3 };

/* One option; a table of them ends with an entry whose id is 0. */
typedef struct idmx_option {
    const char *long_name; /* without "--", or NULL */
    int short_name;        /* the letter, or 0 */
    int has_arg;           /* IDMX_NO_ARG or IDMX_REQUIRED_ARG */
    int id;                /* > 0 */
} idmx_option;

typedef struct idmx_optparse {
    int argc;
    char **argv;
    int index;         /* next argv element to look at */
    int sub;           /* > 0: position inside a cluster of short options */
    int operands_only; /* after "--" */
    const char *arg;   /* the value of the option returned, or the operand */
    const char *name;  /* the option as written ("--count", "-n"), for messages */
    char name_buf[72]; /* storage for name */
    char errmsg[160];  /* the reason after IDMX_OPT_ERROR */
} idmx_optparse;

/* Starts parsing argv[start..argc-1]. */
void idmx_opt_init(idmx_optparse *p, int argc, char **argv, int start);

/* Returns the id of the next option (its value in p->arg when it takes
 * one), IDMX_OPT_OPERAND (the operand in p->arg), IDMX_OPT_END, or
 * IDMX_OPT_ERROR with p->errmsg set ("unknown option '--frob'",
 * "option '--count' needs a value", "option '--json' takes no value"). */
int idmx_opt_next(idmx_optparse *p, const idmx_option *opts);

/* Parses all of s as an unsigned decimal number (digits only: no sign, no
 * spaces, no base prefix) that fits in 64 bits. Returns 0, or -1. */
int idmx_parse_u64(const char *s, uint64_t *out);

/* The same with an optional leading '-', within int64_t. */
int idmx_parse_i64(const char *s, int64_t *out);

#endif
