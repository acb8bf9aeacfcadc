# test_resp.sh - idmintd's Redis-protocol port with real Redis clients
# (redis-cli, redis-benchmark) and raw RESP: PING, NEXT for every format,
# arrays, INFO, QUIT, errors in RESP terms, what client libraries send while
# connecting (HELLO and RESP3, AUTH, CLIENT, COMMAND, CONFIG, SELECT), the
# cross-protocol guard, pipelining, and IDs unique and increasing under
# load. The client libraries themselves: test_resp_clients.sh.
# Usage: bash tests/server/test_resp.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

UUID7='[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
UUID4='[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'
ULID='[0-7][0-9A-HJKMNP-TV-Z]{25}'
KSUID='[0-9A-Za-z]{27}'
SNOWFLAKE='[1-9][0-9]{0,18}'
SUFFIX='[0-7][0-9a-hjkmnp-tv-z]{25}'
TOKEN='[0-9A-Za-z]{22}'
TRACEPARENT='00-[0-9a-f]{32}-[0-9a-f]{16}-01'

start_server --max-count 1000
cli() {
    redis-cli -p "$RESP_PORT" "$@"
}

check "PING: +PONG" -o PONG -- cli PING
check "PING message: the message" -o 'hello world' -- cli PING 'hello world'
check "commands are case-insensitive" -o PONG -- cli ping

declare -A RE=([uuidv7]=$UUID7 [uuidv4]=$UUID4 [ulid]=$ULID [ksuid]=$KSUID [snowflake]=$SNOWFLAKE
    [token]=$TOKEN [traceparent]=$TRACEPARENT)
for f in uuidv7 uuidv4 ulid ksuid snowflake token traceparent; do
    check "NEXT format: a bulk string ($f)" -L "${RE[$f]}" -n 1 -- cli NEXT "$f"
    check "NEXT format count: an array of bulk strings for a count above 1 ($f, 4)" \
        -L "${RE[$f]}" -n 4 -- cli NEXT "$f" 4
done
check "NEXT snowflake 5: an array of 5, strictly increasing" -o '' \
    --sh "out=\$(redis-cli -p $RESP_PORT NEXT snowflake 5)
          [ \$(printf '%s\n' \"\$out\" | grep -cE '^$SNOWFLAKE\$') = 5 ] && printf '%s\n' \"\$out\" | sort -n -C -u"
check "NEXT typeid count prefix" -L "user_$SUFFIX" -n 3 -- cli NEXT typeid 3 user
check "NEXT token count prefix" -L "sk_$TOKEN" -n 2 -- cli NEXT token 2 sk
# resp COMMANDS (printf format): the raw replies to COMMANDS sent in one
# write on one connection, then QUIT, CRs removed and lines joined by
# spaces.
resp() {
    # shellcheck disable=SC2059
    printf "$1"'QUIT\r\n' | raw "$RESP_PORT" 5 | tr -d '\r' | paste -sd ' '
}
expect "NEXT format: a bulk string when no count is given (raw reply)" \
    "$(resp 'NEXT ulid\r\n')" =~ "^\\\$26 $ULID \\+OK\$"
expect "NEXT format 1: an array of one bulk string, as for any count given (raw reply)" \
    "$(resp '*3\r\n$4\r\nNEXT\r\n$4\r\nulid\r\n$1\r\n1\r\n')" =~ "^\\*1 \\\$26 $ULID \\+OK\$"
check "NEXT typeid prefix: the count may be left out (a bulk string)" -L "user_$SUFFIX" -n 1 -- cli NEXT typeid user
check "NEXT token prefix: the count may be left out" -L "sk_$TOKEN" -n 1 -- cli NEXT token sk
expect "NEXT typeid 1 prefix: an array of one (raw reply)" \
    "$(resp 'NEXT typeid 1 user\r\n')" =~ "^\\*1 \\\$31 user_$SUFFIX \\+OK\$"
expect "NEXT format 3: an array of three bulk strings (raw reply)" \
    "$(printf 'NEXT ulid 3\r\nQUIT\r\n' | raw "$RESP_PORT" 5 | tr -d '\r' | paste -sd ' ')" \
    =~ "^\\*3 \\\$26 $ULID \\\$26 $ULID \\\$26 $ULID \\+OK\$"
check "INFO: version, node, layout, readiness and counters as a bulk string" -o '' \
    --sh "info=\$(redis-cli -p $RESP_PORT INFO | tr -d '\r')
          for k in 'idmint_version:[0-9]' 'node:0' 'layout:twitter' 'ready:1' 'ids_minted:[0-9]+' 'connected_clients:[0-9]+'; do
              grep -qE \"^\$k\" <<<\"\$info\" || echo \"missing \$k\"
          done"
check "INFO section: that section only (INFO generator: readiness, not the version)" -O '# Generator .*ready:1' \
    --sh "redis-cli -p $RESP_PORT INFO generator | tr -d '\r' | paste -sd ' '"

printf 'PING\r\nQUIT\r\nPING\r\n' | raw "$RESP_PORT" 5 >"$T_DIR/quit"
expect "QUIT: +OK and the connection closes" "$?" = 0
expect "QUIT: +OK, and what follows it is not answered" "$(tr -d '\r' <"$T_DIR/quit" | paste -sd ' ')" = '+PONG +OK'

# --- errors ----------------------------------------------------------------------------

err() {
    cli "$@" | grep -v '^$'
}
check "NEXT without a format: a RESP error" -O "ERR wrong number of arguments.*" -- err NEXT
check "NEXT with too many arguments: a RESP error" -O "ERR wrong number of arguments.*" -- err NEXT ulid 1 a b
check "Errors (unknown format) are RESP errors" -O 'ERR unknown format.*' -- err NEXT uuidv9
for c in 0 1001 abc -1 +5 ' 5' 99999999999999999999999 ''; do
    expect "Errors (bad count) are RESP errors naming the argument and the syntax (count '$c')" \
        "$(err NEXT ulid "$c")" = "ERR count must be a whole number from 1 to 1000, got '$c' (NEXT ulid [count])"
done
expect "a count with a NUL byte is refused, not read up to the NUL (\"5\\0xyz\")" \
    "$(resp '*3\r\n$4\r\nNEXT\r\n$4\r\nulid\r\n$5\r\n5\0xyz\r\n')" \
    =~ "^-ERR count must be a whole number from 1 to 1000, got '5\\?xyz'.* \\+OK\$"
check "NEXT typeid without a prefix: a RESP error in RESP terms" \
    -O "ERR typeid needs a prefix \\(NEXT typeid \\[count\\] prefix, e\\.g\\. NEXT typeid user\\)" -- err NEXT typeid 2
check "NEXT format word: a format without a prefix reads a count, and says so" \
    -O "ERR count must be a whole number from 1 to 1000, got 'user' \\(NEXT ulid \\[count\\]\\)" -- err NEXT ulid user
for p in User a1 _x "$(printf 'a%.0s' $(seq 1 64))"; do
    check "Errors (a bad prefix) are RESP errors ($p)" -O 'ERR invalid prefix.*' -- err NEXT typeid 1 "$p"
done
check "a prefix applies only to typeid and token" -O 'ERR prefix applies only to typeid and token.*' \
    -- err NEXT snowflake 1 user
check "an unknown command is a RESP error" -O "ERR unknown command 'FOO'.*" -- err FOO bar
served=$(redis-cli -p "$RESP_PORT" COMMAND LIST | tr a-z A-Z | sort | paste -sd ' ')
hint=$(err FOO | sed -n 's/.*(idmintd serves \(.*\))$/\1/p' | tr -d ',' | tr ' ' '\n' | sort | paste -sd ' ')
expect "the unknown-command hint lists every command served (COMMAND LIST)" "$hint" = "$served"
expect "the commands served" "$served" = "AUTH CLIENT COMMAND CONFIG DBSIZE DISCARD ECHO EXEC HELLO HLC INCR INCRBY INFO MULTI NEXT OBFUSCATE PING QUIT RESET REVEAL SELECT UNWATCH WATCH"
check "a wrong number of arguments names the command and its syntax" \
    -O "ERR wrong number of arguments for 'echo' command \\(ECHO message\\)" -- err ECHO
check "PING with two arguments: wrong number of arguments" -O "ERR wrong number of arguments for 'ping'.*" -- err PING a b
check "the connection stays usable after errors" -O "ERR unknown command.*
PONG" --sh "printf 'FOO\nPING\n' | redis-cli -p $RESP_PORT | grep -v '^\$'"

# --- what clients send while connecting ----------------------------------------------

# redis-benchmark waits for a reply to CONFIG GET save and appendonly
# (any reply will do); a Redis without persistence answers the name and an
# empty value.
expect "CONFIG GET p answers [p, \"\"] (redis-benchmark asks for save and appendonly)" \
    "$(resp 'CONFIG GET save\r\nCONFIG GET appendonly\r\n')" = '*2 $4 save $0  *2 $10 appendonly $0  +OK'
check "CONFIG SET: a clear error" -O "ERR CONFIG SET is not supported by idmintd.*" -- err CONFIG SET save ''
check "SELECT 0 answers +OK" -o OK -- cli SELECT 0
check "SELECT checks its argument: another database is out of range" -O 'ERR DB index is out of range.*' -- err SELECT 1
check "SELECT checks its argument: not an integer" -O 'ERR value is not an integer or out of range' -- err SELECT x
check "ECHO" -o hi -- cli ECHO hi

# HELLO, as Redis 7 answers it: a map of 7 (a flat array of 14 in RESP2)
# with server, version, proto, id, mode, role and modules.
expect "HELLO 3: a RESP3 map, proto 3" "$(resp 'HELLO 3\r\n')" \
    =~ '^%7 \$6 server \$7 idmintd \$7 version \$[0-9]+ [0-9.]+ \$5 proto :3 \$2 id :[1-9][0-9]* \$4 mode \$10 standalone \$4 role \$6 master \$7 modules \*0 \+OK$'
expect "HELLO 2: the same as a flat array, proto 2" "$(resp 'HELLO 2\r\n')" =~ '^\*14 \$6 server .* \$5 proto :2 .*\+OK$'
expect "HELLO without a version: the current protocol (2), which HELLO 3 then changes" \
    "$(resp 'HELLO\r\nHELLO 3\r\nHELLO\r\n' | grep -o 'proto :[0-9]' | paste -sd ,)" = 'proto :2,proto :3,proto :3'
expect "HELLO 4: -NOPROTO" "$(resp 'HELLO 4\r\n')" = '-NOPROTO unsupported protocol version +OK'
expect "HELLO x: not an integer" "$(resp 'HELLO x\r\n')" = '-ERR Protocol version is not an integer or out of range +OK'
expect "HELLO 3 AUTH default any: accepted (no password is configured, as in a default Redis)" \
    "$(resp 'HELLO 3 AUTH default secret\r\n' | cut -c 1-2)" = '%7'
expect "HELLO 3 AUTH another user: -WRONGPASS, and the protocol is unchanged" \
    "$(resp 'HELLO 3 AUTH bob secret\r\nCLIENT GETNAME\r\n')" = '-WRONGPASS invalid username-password pair or user is disabled. $-1 +OK'
expect "HELLO 3 SETNAME: the name is set" "$(resp 'HELLO 3 SETNAME app1\r\nCLIENT GETNAME\r\n' | sed 's/.* modules \*0 //')" = '$4 app1 +OK'
expect "HELLO with an unknown option: a syntax error, nothing changed" \
    "$(resp 'HELLO 3 SETNAME\r\nCLIENT GETNAME\r\n')" = "-ERR Syntax error in HELLO option 'SETNAME' \$-1 +OK"
expect "after HELLO 3: a null is _, INFO a verbatim string, CONFIG GET a map (RESP3)" \
    "$(resp 'HELLO 3\r\nCLIENT GETNAME\r\nINFO\r\nCONFIG GET save\r\n' | sed 's/.* modules \*0 //')" \
    =~ '^_ =[0-9]+ txt:# Server .* %1 \$4 save \$0  \+OK$'
expect "RESET: +RESET, back to RESP2 and no name" \
    "$(resp 'HELLO 3 SETNAME app1\r\nRESET\r\nCLIENT GETNAME\r\nHELLO\r\n' | sed 's/.* modules \*0 +RESET //' | cut -d ' ' -f 1-2)" = '$-1 *14'

# AUTH: there is no password; Redis without one answers so.
check "AUTH password: Redis's answer without a password configured (ioredis recognises it)" \
    -O 'ERR AUTH <password> called without any password configured for the default user\. Are you sure your configuration is correct\?' \
    -- err AUTH secret
check "AUTH default password: +OK (the default user has no password)" -o OK -- cli AUTH default secret
check "AUTH another user: WRONGPASS" -O 'WRONGPASS invalid username-password pair or user is disabled\.' -- err AUTH bob secret

# CLIENT, with Redis's reply types.
expect "CLIENT ID: an integer; GETNAME: a null until SETNAME; then the name" \
    "$(resp 'CLIENT ID\r\nCLIENT GETNAME\r\nCLIENT SETNAME app1\r\nCLIENT GETNAME\r\n')" =~ '^:[1-9][0-9]* \$-1 \+OK \$4 app1 \+OK$'
expect "CLIENT IDs differ between connections and grow" \
    "$(a=$(resp 'CLIENT ID\r\n' | cut -d ' ' -f 1 | tr -d :); b=$(resp 'CLIENT ID\r\n' | cut -d ' ' -f 1 | tr -d :); [ "$b" -gt "$a" ] && echo yes)" = yes
check "CLIENT SETNAME refuses spaces (Redis's rule)" -O 'ERR Client names cannot contain spaces, newlines or special characters\.' \
    -- err CLIENT SETNAME 'a b'
check "CLIENT SETINFO LIB-NAME: +OK" -o OK -- cli CLIENT SETINFO LIB-NAME mylib
check "CLIENT SETINFO with another attribute: an error" -O "ERR Unrecognized option 'FOO'" -- err CLIENT SETINFO FOO x
out=$(resp 'CLIENT SETNAME app2\r\nCLIENT SETINFO LIB-NAME mylib\r\nCLIENT ID\r\nCLIENT INFO\r\n')
id=$(sed -E 's/^\+OK \+OK :([0-9]+) .*/\1/' <<<"$out")
expect "CLIENT INFO: a bulk string whose id is CLIENT ID, with the addresses, the name and the library set" "$out" \
    =~ "^\\+OK \\+OK :$id \\\$[0-9]+ id=$id addr=127\\.0\\.0\\.1:[0-9]+ laddr=127\\.0\\.0\\.1:$RESP_PORT .* name=app2 .* lib-name=mylib lib-ver= +\\+OK\$"
check "CLIENT LIST: a line per RESP connection, this one included" -O 'id=[0-9]+ addr=.* cmd=client .*' \
    -- cli CLIENT LIST
check "CLIENT KILL: a clear error naming what is served" \
    -O 'ERR CLIENT KILL is not supported by idmintd \(it serves CLIENT ID, GETNAME, SETNAME, SETINFO, INFO and LIST\)' \
    -- err CLIENT KILL 127.0.0.1:1
check "CLIENT without a subcommand: wrong number of arguments" -O "ERR wrong number of arguments for 'client'.*" -- err CLIENT

# COMMAND, sane: a count, names, entries and docs of the commands served.
check "COMMAND COUNT: the number of commands served" -o 23 -- cli COMMAND COUNT
expect "COMMAND INFO next: Redis 7's entry (name, arity -2, flags...); an unknown name is a null" \
    "$(resp 'COMMAND INFO next nope\r\n')" =~ '^\*2 \*10 \$4 next :-2 \*1 \+write :0 :0 :0 \*2 \+@write \+@fast \*0 \*0 \*0 \$-1 \+OK$'
expect "COMMAND: every command's entry" "$(resp 'COMMAND\r\n' | cut -d ' ' -f 1-4)" = '*23 *10 $4 next'
expect "COMMAND DOCS next: a map of summary, since, group and syntax" \
    "$(resp 'COMMAND DOCS next\r\n')" =~ '^\*2 \$4 next \*8 \$7 summary \$[0-9]+ [^$]+ \$5 since \$[0-9]+ [0-9.]+ \$5 group \$6 idmint \$6 syntax \$39 NEXT format \[count\] \[prefix\] \[AFTER id\] \+OK$'
check "COMMAND with an unknown subcommand: an error" -O "ERR unknown subcommand 'FOO' for 'command'.*" -- err COMMAND FOO

# --- the cross-protocol guard ----------------------------------------------------------

minted() {
    metric 'idmint_ids_minted_total{format="snowflake"}'
}
m0=$(minted)
post=$(printf 'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 18\r\n\r\nNEXT snowflake 5\r\n' | raw "$RESP_PORT" 5)
expect "a POST sent to the RESP port: closed with no reply" "$?:$post" = '0:'
for req in 'GET / HTTP/1.1\r\nNEXT snowflake 5\r\n' 'Host: example.com\r\nNEXT snowflake 5\r\n' \
    '*2\r\n$5\r\nHost:\r\n$1\r\nx\r\n*2\r\n$4\r\nNEXT\r\n$9\r\nsnowflake\r\n'; do
    # shellcheck disable=SC2059
    got=$(printf "$req" | raw "$RESP_PORT" 5)
    expect "an HTTP request line or a Host: header on the RESP port: closed with no reply ($req)" "$?:$got" = '0:'
done
expect "... and nothing it sent was run (no snowflake minted)" "$(minted)" = "$m0"
expect "commands before the HTTP line are answered, none after it" \
    "$(printf 'PING\r\nPOST /x HTTP/1.1\r\nPING\r\n' | raw "$RESP_PORT" 5 | tr -d '\r')" = '+PONG'
check "the guard is logged" -O '.*possibly a cross-protocol attack.*' --sh "grep -m 1 'cross-protocol' '$SRV_LOG'"

# --- pipelining ----------------------------------------------------------------------

piped=$(
    {
        printf '*1\r\n$4\r\nPING\r\n'
        printf 'NEXT snowflake\r\n'
        printf '*3\r\n$4\r\nNEXT\r\n$9\r\nsnowflake\r\n$1\r\n2\r\n'
        printf 'NEXT nope\r\n'
        printf 'PING again\r\n'
        printf 'QUIT\r\n'
    } | raw "$RESP_PORT" 5 | tr -d '\r' | paste -sd ' '
)
expect "pipelining: every command in one write is answered, in order" "$piped" \
    =~ "^\+PONG \\\$[0-9]+ $SNOWFLAKE \*2 \\\$[0-9]+ $SNOWFLAKE \\\$[0-9]+ $SNOWFLAKE -ERR unknown format[^\$]* \\\$5 again \+OK\$"

# --- load: redis-benchmark and loadclient ----------------------------------------------

check "redis-benchmark -n 2000 NEXT snowflake completes" -O '.*NEXT snowflake: [0-9.]+ requests per second.*' \
    --sh "timeout 60 redis-benchmark -p $RESP_PORT -n 2000 -q NEXT snowflake | tr '\r' '\n' | grep 'requests per second' | tail -n 1"
check "redis-benchmark -n 2000 -P 16 NEXT snowflake completes" -O '.*NEXT snowflake: [0-9.]+ requests per second.*' \
    --sh "timeout 60 redis-benchmark -p $RESP_PORT -n 2000 -P 16 -q NEXT snowflake | tr '\r' '\n' | grep 'requests per second' | tail -n 1"
check "redis-benchmark -c 20 -P 16 NEXT ulid 10 completes" -O '.*NEXT ulid 10: [0-9.]+ requests per second.*' \
    --sh "timeout 60 redis-benchmark -p $RESP_PORT -c 20 -n 5000 -P 16 -q NEXT ulid 10 | tr '\r' '\n' | grep 'requests per second' | tail -n 1"

"$LOADCLIENT" --resp "127.0.0.1:$RESP_PORT" --cmd 'NEXT snowflake 10' --cmd 'NEXT uuidv7 3' --cmd 'NEXT ulid' \
    --cmd 'NEXT snowflake' --conns 8 --pipeline 16 --duration-ms 1500 --ids "$T_DIR/resp.ids" >"$T_DIR/resp.out" 2>&1
expect "loadclient over RESP: no duplicate, each connection strictly increasing, nothing malformed" "$?" = 0
expect "loadclient over RESP: all replies are IDs" "$(kv "$T_DIR/resp.out" s200)" = "$(kv "$T_DIR/resp.out" requests)"
expect "loadclient over RESP: IDs received" "$(kv "$T_DIR/resp.out" ids)" -gt 1000
expect "loadclient over RESP: no duplicates (sort -u over all IDs)" \
    "$(sort "$T_DIR/resp.ids" | uniq -d | head -n 3)" = ''
expect "RESP requests are counted in /metrics" "$(metric 'idmint_requests_total{route="resp",status="2xx"}')" \
    -gt "$(kv "$T_DIR/resp.out" requests)"

stop_server TERM
expect "SIGTERM: exits 0" "$SRV_STATUS" = 0
finish
