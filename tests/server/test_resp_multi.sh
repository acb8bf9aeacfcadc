# test_resp_multi.sh - MULTI, EXEC and DISCARD on idmintd's RESP port, as
# Redis answers them (idmintd(8), "RESP transactions"): every command after
# MULTI answered +QUEUED, EXEC running them in order with one array of their
# replies, DISCARD dropping them; Redis's exact errors for a nested MULTI,
# EXEC or DISCARD without MULTI, WATCH inside MULTI, and EXECABORT after a
# command refused while queueing; WATCH refused, UNWATCH +OK; RESP3 replies
# inside EXEC; the queue's bounds (commands and bytes); commands inside EXEC
# that wait (a snowflake layout of 16 IDs per 10 ms, a segment tag looked up
# for the first time) completing in order; the counts INFO reports. The
# client libraries' own MULTI: test_resp_clients.sh; a transaction parked
# on a frozen clock while others are served: test_park.sh.
# Usage: bash tests/server/test_resp_multi.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

SNOWFLAKE='[1-9][0-9]{0,18}'
UUID7='[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
STORE="sqlite:$T_DIR/seg.db"
for t in orders invoices fresh; do
    "$IDMINT" segment create "$t" --store "$STORE" || start_failed "segment create $t failed"
done
# 16 IDs per 10 ms: a request for 200 snowflakes waits a dozen times.
start_server --layout time=41,node=10,seq=4,unit=10ms --segments "$STORE" --max-count 1000

# resp COMMANDS (printf format): the raw replies to COMMANDS sent in one
# write on one connection, then QUIT, CRs removed and lines joined by
# spaces.
resp() {
    # shellcheck disable=SC2059
    printf "$1"'QUIT\r\n' | raw "$RESP_PORT" 15 | tr -d '\r' | paste -sd ' '
}
cli() {
    redis-cli -p "$RESP_PORT" "$@"
}
EXECABORT='-EXECABORT Transaction discarded because of previous errors.'

# --- MULTI, EXEC, DISCARD ---------------------------------------------------------------

first=$(cli INCR orders)
expect "(a tag's first INCR: 1)" "$first" = 1
expect "MULTI: +OK, each command +QUEUED, EXEC one array of their replies in order" \
    "$(resp 'MULTI\r\nNEXT snowflake 2\r\nINCR orders\r\nPING\r\nECHO hi\r\nINCRBY orders 3\r\nEXEC\r\n')" \
    =~ "^\\+OK \\+QUEUED \\+QUEUED \\+QUEUED \\+QUEUED \\+QUEUED \\*5 \\*2 \\\$[0-9]+ $SNOWFLAKE \\\$[0-9]+ $SNOWFLAKE :2 \\+PONG \\\$2 hi :5 \\+OK\$"
check "... the queued commands ran once, at EXEC (INCR goes on at 6)" -o 6 -- cli INCR orders
expect "an empty transaction: EXEC answers an empty array" "$(resp 'MULTI\r\nEXEC\r\n')" = '+OK *0 +OK'
expect "MULTI inside MULTI: Redis's error, and the transaction goes on" \
    "$(resp 'MULTI\r\nMULTI\r\nPING\r\nEXEC\r\n')" = '+OK -ERR MULTI calls can not be nested +QUEUED *1 +PONG +OK'
expect "EXEC without MULTI: Redis's error" "$(resp 'EXEC\r\n')" = '-ERR EXEC without MULTI +OK'
expect "DISCARD without MULTI: Redis's error" "$(resp 'DISCARD\r\n')" = '-ERR DISCARD without MULTI +OK'
expect "DISCARD: +OK, the queued commands dropped (EXEC after it: without MULTI)" \
    "$(resp 'MULTI\r\nINCR orders\r\nINCR orders\r\nDISCARD\r\nEXEC\r\n')" = '+OK +QUEUED +QUEUED +OK -ERR EXEC without MULTI +OK'
check "... the discarded INCRs never ran (INCR goes on at 7)" -o 7 -- cli INCR orders

# A command refused while queueing (unknown, or the wrong number of
# arguments) is answered with its error and EXEC aborts the transaction.
out=$(resp 'MULTI\r\nINCR orders\r\nFOO bar\r\nPING\r\nEXEC\r\nPING\r\n')
expect "an unknown command inside MULTI: its error, then EXEC answers EXECABORT" \
    "$out" =~ "^\\+OK \\+QUEUED -ERR unknown command 'FOO'[^+]* \\+QUEUED $EXECABORT \\+PONG \\+OK\$"
expect "a wrong number of arguments inside MULTI: its error, then EXECABORT" \
    "$(resp 'MULTI\r\nECHO\r\nEXEC\r\n')" \
    = "+OK -ERR wrong number of arguments for 'echo' command (ECHO message) $EXECABORT +OK"
check "... nothing of an aborted transaction ran (INCR goes on at 8)" -o 8 -- cli INCR orders
expect "after EXECABORT the connection is out of MULTI (EXEC again: without MULTI)" \
    "$(resp 'MULTI\r\nFOO\r\nEXEC\r\nEXEC\r\n' | sed "s/^+OK -ERR unknown command 'FOO' ([^)]*) //")" \
    = "$EXECABORT -ERR EXEC without MULTI +OK"
# An error at run time (a bad argument the command itself checks) is an
# element of EXEC's array, and the other commands run (as Redis does).
expect "an error at run time is one element of EXEC's array; the others run" \
    "$(resp 'MULTI\r\nNEXT uuidv9\r\nINCR orders\r\nEXEC\r\n')" =~ \
    "^\\+OK \\+QUEUED \\+QUEUED \\*2 -ERR unknown format 'uuidv9'[^:]* :9 \\+OK\$"

# --- WATCH, UNWATCH, QUIT, RESET ----------------------------------------------------------

expect "WATCH: refused (idmintd's counters have no optimistic locking)" \
    "$(resp 'WATCH orders\r\n')" =~ '^-ERR WATCH is not supported by idmintd.* \+OK$'
expect "WATCH inside MULTI: Redis's error, not queued" \
    "$(resp 'MULTI\r\nWATCH orders\r\nEXEC\r\n')" = '+OK -ERR WATCH inside MULTI is not allowed *0 +OK'
expect "UNWATCH: +OK (nothing is ever watched), also queued inside MULTI" \
    "$(resp 'UNWATCH\r\nMULTI\r\nUNWATCH\r\nEXEC\r\n')" = '+OK +OK +QUEUED *1 +OK +OK'
expect "QUIT inside MULTI: +OK and the connection closes (not queued)" \
    "$(printf 'MULTI\r\nINCR orders\r\nQUIT\r\nEXEC\r\n' | raw "$RESP_PORT" 15 | tr -d '\r' | paste -sd ' ')" = '+OK +QUEUED +OK'
expect "RESET inside MULTI: +RESET and the transaction is gone" \
    "$(resp 'MULTI\r\nINCR orders\r\nRESET\r\nEXEC\r\n')" = '+OK +QUEUED +RESET -ERR EXEC without MULTI +OK'
check "... neither ran its INCR (INCR goes on at 10)" -o 10 -- cli INCR orders

# --- RESP3 ----------------------------------------------------------------------------

expect "after HELLO 3: EXEC's array holds RESP3 replies (a null is _, CONFIG GET a map)" \
    "$(resp 'HELLO 3\r\nMULTI\r\nCLIENT GETNAME\r\nCONFIG GET save\r\nINCR orders\r\nEXEC\r\n' | sed 's/.* modules \*0 //')" \
    = '+OK +QUEUED +QUEUED +QUEUED *3 _ %1 $4 save $0  :11 +OK'
expect "RESP2: the same transaction with $-1 and a flat array" \
    "$(resp 'MULTI\r\nCLIENT GETNAME\r\nCONFIG GET save\r\nEXEC\r\n')" \
    = '+OK +QUEUED +QUEUED *2 $-1 *2 $4 save $0  +OK'

# --- commands that wait, inside EXEC ------------------------------------------------------

parks0=$(metric idmint_parks_total)
out=$(resp 'MULTI\r\nNEXT snowflake 200\r\nINCR fresh\r\nNEXT snowflake 3\r\nINCRBY invoices 2\r\nEXEC\r\n')
ids=$(tr ' ' '\n' <<<"$out" | grep -E "^$SNOWFLAKE\$")
expect "EXEC with 200 snowflakes (16 per 10 ms), a tag's first INCR and more: one array of 4, in order" \
    "$out" =~ "^\\+OK( \\+QUEUED){4} \\*4 \\*200 (\\\$[0-9]+ $SNOWFLAKE ){200}:1 \\*3 (\\\$[0-9]+ $SNOWFLAKE ){3}:2 \\+OK\$"
expect "... 203 snowflakes, distinct and increasing through the array" \
    "$(printf '%s\n' "$ids" | sort -n -u -C && printf '%s\n' "$ids" | wc -l)" = 203
expect "... the commands inside EXEC waited (idmint_parks_total rose)" "$(metric idmint_parks_total)" -gt "${parks0:-0}"
expect "pipelined commands after EXEC are answered after its array" \
    "$(resp 'MULTI\r\nNEXT snowflake 100\r\nEXEC\r\nINCR orders\r\nPING\r\n' | sed -E "s/(\\\$[0-9]+ $SNOWFLAKE )+//")" \
    = '+OK +QUEUED *1 *100 :12 +PONG +OK'

# EXEC's replies past a batch (a quarter of the connection's share: 1 MiB
# here) go on at the next turn, from the next command of the queue.
out=$(awk 'BEGIN { printf "MULTI\r\n"; for (i = 0; i < 30; i++) printf "NEXT uuidv7 1000\r\n"; printf "EXEC\r\nPING\r\nQUIT\r\n" }' |
    raw "$RESP_PORT" 30 | tr -d '\r')
expect "EXEC of 30 NEXT uuidv7 1000 (1.3 MB of replies, past a batch): 30 arrays of 1000, then PONG" \
    "$(grep -E '^[*+]' <<<"$out" | sort | uniq -c | awk '{ print $2 "x" $1 }' | sort | paste -sd ' ')" \
    = '*1000x30 *30x1 +OKx2 +PONGx1 +QUEUEDx30'
expect "... 30000 UUIDv7s, all distinct" "$(grep -E "^$UUID7\$" <<<"$out" | sort -u | wc -l)" = 30000

# --- the queue's bounds --------------------------------------------------------------------

# 4096 commands at most: the 4097th is refused and EXEC aborts.
out=$(awk 'BEGIN { printf "MULTI\r\n"; for (i = 0; i < 4097; i++) printf "PING\r\n"; printf "EXEC\r\nPING\r\nQUIT\r\n" }' |
    raw "$RESP_PORT" 15 | tr -d '\r')
expect "MULTI: 4096 commands queued" "$(grep -c '^+QUEUED$' <<<"$out")" = 4096
expect "... the 4097th refused with a clear error" \
    "$(grep '^-ERR' <<<"$out")" = '-ERR transaction too large: at most 4096 commands can be queued (MULTI ... EXEC)'
expect "... then EXEC aborts, and the connection goes on" \
    "$(tail -n 3 <<<"$out" | paste -sd ' ')" = "$EXECABORT +PONG +OK"
# Bytes: a quarter of the connection's share of --max-buffered (with one
# connection and the default 64 MiB, its share is 4 MiB: 1 MiB).
big=$(head -c 1000 /dev/zero | tr '\0' x)
out=$(awk -v b="$big" 'BEGIN { printf "MULTI\r\n"; for (i = 0; i < 1100; i++) printf "ECHO %s\r\n", b; printf "EXEC\r\nQUIT\r\n" }' |
    raw "$RESP_PORT" 15 | tr -d '\r')
queued=$(grep -c '^+QUEUED$' <<<"$out")
expect "MULTI: commands queued up to the byte bound ($queued of 1100 ECHOs of 1000 bytes)" "$queued" -ge 1000
expect "... then refused with a clear error naming the bound" \
    "$(grep '^-ERR' <<<"$out" | head -n 1)" =~ '^-ERR transaction too large: the queued commands would take more than [0-9]+ bytes \(a quarter of this connection.s share of --max-buffered\)$'
expect "... and EXEC aborts" "$(tail -n 2 <<<"$out" | paste -sd ' ')" = "$EXECABORT +OK"
check "the server still answers" -o PONG -- cli PING

# --- what INFO counts ------------------------------------------------------------------------

infonum() { # infonum FIELD: the field of INFO, from a connection of its own
    cli INFO | tr -d '\r' | awk -F: -v k="$1" '$1 == k { print $2 }'
}
n0=$(infonum total_commands_processed)
resp 'MULTI\r\nPING\r\nPING\r\nEXEC\r\n' >/dev/null
n1=$(infonum total_commands_processed)
# MULTI, the two PINGs run by EXEC, EXEC, QUIT, and the first INFO itself
# (counted once answered), as Redis counts them: a queued command counts
# when it runs.
expect "total_commands_processed: MULTI, each command EXEC ran, EXEC (and QUIT, INFO)" "$((n1 - n0))" = 6

stop_server TERM
expect "SIGTERM: exits 0" "$SRV_STATUS" = 0
finish
