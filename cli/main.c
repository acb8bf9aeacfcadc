/*
 * main.c - the idmint command: dispatch to gen, inspect, convert, lease,
 * segment, bench and hlc, and the top-level --help and --version (man/idmint.1
 * is the specification and the manual).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#ifndef IDM_CLI_VERSION
#define IDM_CLI_VERSION IDM_VERSION_STRING
#endif

static const char main_help[] =
    "Usage: idmint COMMAND [OPTIONS] [ARGUMENTS]\n"
    "\n"
    "Mint, decode and convert distributed IDs: UUIDv7 and v4, ULID, KSUID,\n"
    "snowflakes, TypeID, tokens and traceparent values.\n"
    "\n"
    "Commands:\n"
    "  gen FORMAT [-n COUNT]   mint IDs, one per line\n"
    "  inspect [ID ...]        decode IDs (from standard input when none given)\n"
    "  audit FORMAT [FILE ...] check IDs minted elsewhere: duplicates, two writers\n"
    "                          on one snowflake node, overflows, order, times\n"
    "  convert --to FORM [ID ...]\n"
    "                          re-encode 128-bit IDs as uuid, ulid or typeid\n"
    "  lease list [--coord URL] [--json]\n"
    "                          list the snowflake node leases of a coordinator\n"
    "                          or of this host's registry\n"
    "  segment create TAG --store URL [--first N] [--step N] [--max-step N]\n"
    "                 [--stride K --offset R]\n"
    "  segment list --store URL [--json]\n"
    "  segment show TAG --store URL [--json]\n"
    "                          manage the tags of a segment store (sqlite:PATH,\n"
    "                          postgresql://...) that idmintd leases ranges from\n"
    "  bench btree [--db URL] [--formats LIST] [--rows N] [--keys-per-ms K]\n"
    "              [--scenario migrate] [--json|--csv] [--chart FILE.svg]\n"
    "                          measure what each ID format does to a database's\n"
    "                          primary-key B-tree (sqlite:PATH, postgresql://...,\n"
    "                          mysql://...)\n"
    "  keygen FILE             write a new random key (mode 0600)\n"
    "  keygen --rotate|--list FILE\n"
    "                          add a new current key, keeping the old; list keys\n"
    "  obfuscate --key-file F [--prefix P] [ID ...]\n"
    "                          encrypt 64-bit IDs into public IDs\n"
    "  reveal --key-file F [TOKEN ...]\n"
    "                          decrypt public IDs back into IDs\n"
    "  verify --key-file F TOKEN\n"
    "                          check a signed token (gen token --expires D\n"
    "                          --key-file F): valid, expired or forged\n"
    "  hlc now|update|inspect  hybrid logical clock stamps: a new one, one after\n"
    "                          a received one, or decode them\n"
    "  help [COMMAND]          show help for idmint or a command\n"
    "\n"
    "Options:\n"
    "  -h, --help              show this help and exit\n"
    "      --version           print the version and exit\n"
    "\n"
    "Run 'idmint COMMAND --help' for a command's options, and see idmint(1).\n"
    "Exit status: 0 success, 1 an invalid input or a failure to mint,\n"
    "2 a usage error.\n";

typedef struct command {
    const char *name;
    int (*run)(cli *c, int argc, char **argv);
    const char *help;
} command;

/* The commands, as usage errors list them. */
#define COMMAND_NAMES                                                                              \
    "gen, inspect, audit, convert, lease, segment, bench, hlc, keygen, obfuscate, reveal or verify"

static const command commands[] = {
    {"gen", cli_gen, cli_gen_help},
    {"inspect", cli_inspect, cli_inspect_help},
    {"audit", cli_audit, cli_audit_help},
    {"convert", cli_convert, cli_convert_help},
    {"lease", cli_lease, cli_lease_help},
    {"segment", cli_segment, cli_segment_help},
    {"bench", cli_bench, cli_bench_help},
    {"keygen", cli_keygen, cli_keygen_help},
    {"obfuscate", cli_obfuscate, cli_obfuscate_help},
    {"reveal", cli_reveal, cli_reveal_help},
    {"verify", cli_verify, cli_verify_help},
    {"hlc", cli_hlc, cli_hlc_help},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (strcmp(name, commands[i].name) == 0) {
            return &commands[i];
        }
    }
    return NULL;
}

/* `idmint help [COMMAND]`. */
static int run_help(cli *c, int argc, char **argv)
{
    if (argc < 2) {
        return cli_help(c, main_help);
    }
    if (argc > 2) {
        return cli_usage(c, "help takes at most one COMMAND");
    }
    const command *cmd = find_command(argv[1]);
    if (cmd == NULL) {
        return cli_usage(c, "unknown command '%s' (expected " COMMAND_NAMES ")", argv[1]);
    }
    return cli_help(c, cmd->help);
}

static int run(cli *c, int argc, char **argv)
{
    if (argc < 2) {
        return cli_usage(c, "missing COMMAND (" COMMAND_NAMES ")");
    }
    const char *word = argv[1];
    if (strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0) {
        return cli_help(c, main_help);
    }
    if (strcmp(word, "--version") == 0) {
        idmx_outbuf_puts(&c->out, "idmint " IDM_CLI_VERSION "\n");
        return cli_out_flush(c);
    }
    if (strcmp(word, "help") == 0) {
        return run_help(c, argc - 1, argv + 1);
    }
    if (word[0] == '-' && word[1] != '\0') {
        return cli_usage(c, "unknown option '%s'", word);
    }
    const command *cmd = find_command(word);
    if (cmd == NULL) {
        return cli_usage(c, "unknown command '%s' (expected " COMMAND_NAMES ")", word);
    }
    c->cmd = cmd->name;
    return cmd->run(c, argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
    cli c;
    char *mem = malloc(CLI_OUT_CAP);
    if (mem == NULL) {
        fputs("idmint: out of memory\n", stderr);
        return CLI_EXIT_FAIL;
    }
    memset(&c, 0, sizeof c);
    cli_out_init(&c, mem, CLI_OUT_CAP);
    int status = run(&c, argc, argv);
    if (cli_out_flush(&c) != CLI_EXIT_OK && status == CLI_EXIT_OK) {
        status = CLI_EXIT_FAIL;
    }
    /* The buffer may have held tokens, which are secrets: wiped before it
     * goes back to the allocator. */
    explicit_bzero(mem, CLI_OUT_CAP);
    free(mem);
    return status;
}
