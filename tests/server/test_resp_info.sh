# test_resp_info.sh - INFO and DBSIZE on idmintd's RESP port as Redis tools
# read them (idmintd(8), "INFO"): Redis's standard sections and fields
# (redis_version, redis_mode, process_id, tcp_port, uptime_in_seconds,
# connected_clients, blocked_clients, used_memory, used_memory_human,
# total_connections_received, total_commands_processed,
# instantaneous_ops_per_sec, rejected_connections, # Keyspace) next to
# idmintd's own, INFO section / all / everything / default, the counts
# moving as connections and commands come, the same numbers as /metrics;
# redis-cli --stat printing real numbers; DBSIZE the live segment tags.
# A request parked while INFO counts it in blocked_clients: test_park.sh.
# Usage: bash tests/server/test_resp_info.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

STORE="sqlite:$T_DIR/seg.db"
for t in t1 t2 t3 t4 t5; do
    "$IDMINT" segment create "$t" --store "$STORE" || start_failed "segment create $t failed"
done
start_server --segments "$STORE"
cli() {
    redis-cli -p "$RESP_PORT" "$@"
}
# info [SECTION...]: INFO's text, CRs removed.
info() {
    cli INFO "$@" | tr -d '\r'
}
# field NAME [TEXT]: a field's value in TEXT (default: a new INFO).
field() {
    local text=${2-$(info)}
    awk -F: -v k="$1" '$1 == k { sub(/^[^:]*:/, ""); print }' <<<"$text"
}
NUM='^[0-9]+$'

# --- the fields -----------------------------------------------------------------------------

text=$(info)
for k in redis_version redis_mode process_id tcp_port uptime_in_seconds connected_clients \
    blocked_clients used_memory used_memory_human used_memory_rss total_connections_received \
    total_commands_processed instantaneous_ops_per_sec rejected_connections idmint_version \
    ids_minted ready node layout; do
    expect "INFO has $k" "$(grep -c "^$k:" <<<"$text")" = 1
done
expect "redis_version: a Redis 7.2 a client's version checks accept" "$(field redis_version "$text")" = 7.2.0
expect "redis_mode: standalone" "$(field redis_mode "$text")" = standalone
expect "process_id: idmintd's pid" "$(field process_id "$text")" = "$SRV_PID"
expect "tcp_port: the RESP port" "$(field tcp_port "$text")" = "$RESP_PORT"
for k in uptime_in_seconds connected_clients blocked_clients used_memory used_memory_rss \
    total_connections_received total_commands_processed instantaneous_ops_per_sec rejected_connections; do
    expect "$k is a number" "$(field "$k" "$text")" =~ "$NUM"
done
expect "used_memory is the allocator's figure (more than 0)" "$(field used_memory "$text")" -gt 0
expect "used_memory_rss is the resident set (more than 0)" "$(field used_memory_rss "$text")" -gt 0
expect "used_memory_human: as Redis writes it (e.g. 1.23M)" "$(field used_memory_human "$text")" =~ '^[0-9]+(\.[0-9]{2})?[BKMGT]$'
expect "connected_clients: at least this connection" "$(field connected_clients "$text")" -ge 1
expect "blocked_clients: 0 (nothing parked)" "$(field blocked_clients "$text")" = 0
expect "rejected_connections: 0" "$(field rejected_connections "$text")" = 0
expect "the sections in Redis's order, idmintd's Generator before Keyspace" \
    "$(grep '^# ' <<<"$text" | paste -sd ' ')" = '# Server # Clients # Memory # Persistence # Stats # Replication # CPU # Generator # Keyspace'
expect "Persistence: nothing is loading or saved in the background" \
    "$(field loading "$text"):$(field rdb_bgsave_in_progress "$text"):$(field aof_rewrite_in_progress "$text")" = 0:0:0
expect "Replication: a master without replicas" "$(field role "$text"):$(field connected_slaves "$text")" = master:0

# --- sections -------------------------------------------------------------------------------

expect "INFO server: only # Server" "$(info server | grep '^# ' | paste -sd ' ')" = '# Server'
expect "INFO SERVER clients: both, in order (names in any case)" "$(info SERVER clients | grep '^# ' | paste -sd ' ')" = '# Server # Clients'
expect "INFO generator: idmintd's own section" "$(info generator | grep -c '^ready:1$')" = 1
for s in all everything default; do
    expect "INFO $s: every section" "$(info "$s" | grep -c '^# ')" = 9
done
expect "INFO nosuch: an empty bulk string, as Redis answers an unknown section (and the connection goes on)" \
    "$(printf 'INFO nosuch\r\nPING\r\nQUIT\r\n' | raw "$RESP_PORT" 5 | tr -d '\r' | paste -sd ' ')" = '$0  +PONG +OK'

# --- the counts move with connections and commands ----------------------------------------

c0=$(field total_connections_received)
for i in 1 2 3; do cli PING >/dev/null; done
c1=$(field total_connections_received)
expect "total_connections_received: +4 after 3 connections and the INFO's own" "$((c1 - c0))" = 4
n0=$(field total_commands_processed)
printf 'PING\r\nPING\r\nECHO x\r\nQUIT\r\n' | raw "$RESP_PORT" 5 >/dev/null
n1=$(field total_commands_processed)
expect "total_commands_processed: +5 after 4 commands and the first INFO" "$((n1 - n0))" = 5
o0=$(field connected_clients)
exec {h1}<>"/dev/tcp/127.0.0.1/$RESP_PORT"
exec {h2}<>"/dev/tcp/127.0.0.1/$HTTP_PORT"
wait_until 5 test "$(field connected_clients)" = $((o0 + 2))
expect "connected_clients: +2 with two more connections open (every front end)" "$(field connected_clients)" = $((o0 + 2))
exec {h1}>&- {h2}>&-
wait_until 5 test "$(field connected_clients)" = "$o0"
expect "... and back once they closed" "$(field connected_clients)" = "$o0"
m=$(metric idmint_connections_total)
expect "total_connections_received is idmint_connections_total (and INFO's own connection)" \
    "$(field total_connections_received)" = $((m + 1))
expect "rejected_connections is idmint_connections_rejected_total" \
    "$(field rejected_connections)" = "$(metric idmint_connections_rejected_total)"
# instantaneous_ops_per_sec: the commands per second since a reading of
# INFO at least a second before (here the one just made).
cli INFO stats >/dev/null
sleep 1.1
ops_text=$(awk 'BEGIN { for (i = 0; i < 500; i++) printf "PING\r\n"; printf "INFO stats\r\nQUIT\r\n" }' |
    raw "$RESP_PORT" 10 | tr -d '\r')
expect "instantaneous_ops_per_sec: more than 0 after 500 PINGs since the previous reading" \
    "$(field instantaneous_ops_per_sec "$ops_text")" -ge 1

# --- DBSIZE and the keyspace ------------------------------------------------------------------

check "DBSIZE: 0 before any tag is used (the live tags of this server)" -o 0 -- cli DBSIZE
expect "INFO keyspace: no db line while there are no keys, as Redis" "$(info keyspace | grep -c '^db')" = 0
for t in t1 t2 t3; do cli INCR "$t" >/dev/null; done
check "DBSIZE: 3 after three tags' INCR" -o 3 -- cli DBSIZE
cli INCR nosuch >/dev/null
cli INCR t1 >/dev/null
check "DBSIZE: a tag the store has not, or one used again, adds nothing" -o 3 -- cli DBSIZE
expect "INFO keyspace: db0:keys=3" "$(info keyspace | grep '^db')" = 'db0:keys=3,expires=0,avg_ttl=0'
check "DBSIZE with an argument: Redis's arity error" -O "ERR wrong number of arguments for 'dbsize' command.*" -- cli DBSIZE x
check "CONFIG GET databases: 1 (redis-cli --stat sums the keys of each)" -o "databases
1" -- cli CONFIG GET databases

# --- redis-cli --stat -------------------------------------------------------------------------

# It runs until stopped: its output line-buffered, so that what it printed
# is all there when timeout stops it.
timeout 3 stdbuf -oL redis-cli -p "$RESP_PORT" --stat -i 0.5 >"$T_DIR/stat" 2>&1
data=$(grep -E '^[0-9]' "$T_DIR/stat")
expect "redis-cli --stat: data lines ($(wc -l <<<"$data"))" "$(wc -l <<<"$data")" -ge 3
expect "... no -9223372036854775808 (a missing field)" "$(grep -c -- '-9223372036854775808' "$T_DIR/stat")" = 0
expect "... every line: keys 3, memory, clients, blocked 0, requests, connections as numbers" \
    "$(awk '!($1 == 3 && $2 ~ /^[0-9.]+[BKMGT]$/ && $3 ~ /^[1-9][0-9]*$/ && $4 == 0 &&
              $5 ~ /^[0-9]+$/ && $6 ~ /^\(\+[0-9]+\)$/ && $7 ~ /^[0-9]+$/) { print "bad: " $0 }' <<<"$data")" = ''
# (redis-cli shows +0 on its first two lines: it has no earlier total.)
expect "... requests rise between readings (the INFO of each: +1 and more)" \
    "$(sed -n 3p <<<"$data" | awk '{ print $6 }')" =~ '^\(\+[1-9][0-9]*\)$'

stop_server TERM
expect "SIGTERM: exits 0" "$SRV_STATUS" = 0
finish
