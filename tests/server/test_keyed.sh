# test_keyed.sh - idmintd's public IDs (idmintd(8): --key-file, GET
# /v1/obfuscate/{id}, GET /v1/reveal/{token}): the same tokens as the CLI
# under the same key, 422 for forged tokens, 400 for bad input, 404
# without a key, HEAD, JSON, the auth table, a key file others may read
# refused at start, the key's bytes never in the log, and rotation: a ring
# of keys reloaded on SIGHUP (old tokens still reveal, new ones use the
# new key, a broken file keeps the old ring).
# Usage: bash tests/server/test_keyed.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

OBF='[0-9A-Za-z]{17}'
JSON_ERROR='\{"error": ".*"\}'
K=$T_DIR/key
FP=$("$IDMINT" keygen "$K" 2>&1 | sed -n 's/.*wrote key \([0-9a-f]*\) .*/\1/p')
KEYHEX=$(cut -c 15- "$K")

# --- without --key-file -------------------------------------------------------------------
start_server
http "without --key-file, /v1/obfuscate is 404 saying so" -s 404 \
    -O '\{"error": "idmintd was started without --key-file: no obfuscated IDs"\}' -- /v1/obfuscate/1
http "without --key-file, /v1/reveal is 404 too" -s 404 -O "$JSON_ERROR" -- /v1/reveal/abc
check "without --key-file, RESP OBFUSCATE is an error saying so" \
    -O 'ERR idmintd was started without --key-file: no obfuscated IDs\s*' -- \
    redis-cli -p "$RESP_PORT" OBFUSCATE 1
stop_server

# --- a key file others may read ---------------------------------------------------------------
cp "$K" "$T_DIR/k644"
chmod 644 "$T_DIR/k644"
check "idmintd refuses to start with a key file others may read, saying why" -s 2 \
    -O "idmintd: --key-file $T_DIR/k644: is readable or writable by group or others \\(mode 0644\\).*" \
    --sh "timeout 5 \"\$IDMINTD\" --http 127.0.0.1:$(random_port) --resp 127.0.0.1:$(random_port) \
        --state-dir none --key-file \"$T_DIR/k644\" 2>&1 >/dev/null"
check "idmintd refuses a key file that is not one" -s 2 -O "idmintd: --key-file .*: not an idmint key file.*" \
    --sh "printf 'hello\\n' >\"$T_DIR/knot\"; chmod 600 \"$T_DIR/knot\"; timeout 5 \"\$IDMINTD\" \
        --http 127.0.0.1:$(random_port) --resp 127.0.0.1:$(random_port) --state-dir none \
        --key-file \"$T_DIR/knot\" 2>&1 >/dev/null"

# --- with --key-file --------------------------------------------------------------------------
start_server --key-file "$K"
CLI_TOK=$("$IDMINT" obfuscate --key-file "$K" 12345)
CLI_PTOK=$("$IDMINT" obfuscate --key-file "$K" --prefix user 12345)
http "GET /v1/obfuscate/{id}: the token, as the CLI makes it under the same key" \
    -h 'Content-Type: text/plain.*' -o "$CLI_TOK" -- /v1/obfuscate/12345
http "?prefix=P: PREFIX_ and the token, as the CLI's --prefix" -o "$CLI_PTOK" \
    -- '/v1/obfuscate/12345?prefix=user'
http "GET /v1/reveal/{token}: the decimal ID" -o 12345 -- "/v1/reveal/$CLI_PTOK"
http "the largest ID round trips" -o 18446744073709551615 -- \
    "/v1/reveal/$("$IDMINT" obfuscate --key-file "$K" 18446744073709551615)"
http "Accept: application/json: {\"id\", \"token\"}" -h 'Content-Type: application/json' \
    -o "{\"id\": \"12345\", \"token\": \"$CLI_PTOK\"}" -- "/v1/reveal/$CLI_PTOK" \
    -H 'Accept: application/json'
http "JSON from /v1/obfuscate too" -o "{\"id\": \"7\", \"token\": \"$("$IDMINT" obfuscate --key-file "$K" 7)\"}" \
    -- /v1/obfuscate/7 -H 'Accept: application/json'
check "a token from idmintd reveals with the CLI" -o 99 --sh \
    "\"\$IDMINT\" reveal --key-file \"$K\" \$(curl -s http://127.0.0.1:$HTTP_PORT/v1/obfuscate/99)"
check "HEAD is answered like GET, with its Content-Length and without a body" \
    -O 'HTTP/1.1 200 OK.*Content-Length: 18.*HTTP/1.1 200 OK.*' --sh \
    "printf 'HEAD /v1/obfuscate/1 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\nGET /healthz HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n' \
        | timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/$HTTP_PORT; cat >&3; cat <&3' | tr -d '\\r' | tr '\\n' ' '"
last=${CLI_TOK: -1}
[ "$last" = A ] && alt=B || alt=A
http "a tampered token: 422 with the reason" -s 422 \
    -O '\{"error": "not an ID obfuscated under this key and prefix: another key, or altered"\}' \
    -- "/v1/reveal/${CLI_TOK%?}$alt"
http "a token moved to another prefix: 422" -s 422 -O "$JSON_ERROR" -- "/v1/reveal/item_${CLI_PTOK#user_}"
"$IDMINT" keygen "$T_DIR/other" 2>/dev/null
http "a token of another key: 422" -s 422 -O "$JSON_ERROR" \
    -- "/v1/reveal/$("$IDMINT" obfuscate --key-file "$T_DIR/other" 5)"
http "a malformed token: 400" -s 400 -O '\{"error": "obfuscated ID must be 17 characters.*"\}' \
    -- /v1/reveal/abc
http "an ID that is not decimal: 400" -s 400 -O "$JSON_ERROR" -- /v1/obfuscate/12a
http "an ID past 64 bits: 400" -s 400 -O '\{"error": "the ID exceeds 64 bits"\}' \
    -- /v1/obfuscate/18446744073709551616
http "a bad prefix: 400" -s 400 -O "$JSON_ERROR" -- '/v1/obfuscate/1?prefix=User'
http "an unknown parameter: 400" -s 400 -O "$JSON_ERROR" -- '/v1/obfuscate/1?count=2'
http "reveal takes no parameter" -s 400 -O "$JSON_ERROR" -- "/v1/reveal/$CLI_TOK?prefix=user"
check "RESP OBFUSCATE id: the CLI's token" -o "$CLI_TOK" -- redis-cli -p "$RESP_PORT" OBFUSCATE 12345
check "RESP OBFUSCATE id prefix: the CLI's --prefix" -o "$CLI_PTOK" -- \
    redis-cli -p "$RESP_PORT" OBFUSCATE 12345 user
check "RESP REVEAL token: the decimal ID" -o 12345 -- redis-cli -p "$RESP_PORT" REVEAL "$CLI_PTOK"
check "RESP REVEAL: IDs above 2^63 as a bulk string" -o 18446744073709551615 -- \
    redis-cli -p "$RESP_PORT" REVEAL "$("$IDMINT" obfuscate --key-file "$K" 18446744073709551615)"
check "RESP REVEAL of a tampered token: an error with the reason" \
    -O 'ERR not an ID obfuscated under this key and prefix: another key, or altered\s*' -- \
    redis-cli -p "$RESP_PORT" REVEAL "${CLI_TOK%?}$alt"
check "RESP REVEAL of a malformed token: an error" -O 'ERR obfuscated ID must be 17 characters.*' -- \
    redis-cli -p "$RESP_PORT" REVEAL abc
check "RESP OBFUSCATE of a non-decimal ID: an error" -O 'ERR the ID must be a decimal 64-bit number\s*' -- \
    redis-cli -p "$RESP_PORT" OBFUSCATE 12a
check "RESP OBFUSCATE with a bad prefix: an error" -O 'ERR .*' -- \
    redis-cli -p "$RESP_PORT" OBFUSCATE 1 User
check "RESP OBFUSCATE with too many arguments: Redis's arity error" \
    -O "ERR wrong number of arguments for 'obfuscate' command.*" -- \
    redis-cli -p "$RESP_PORT" OBFUSCATE 1 user extra
check "pipelined OBFUSCATE and REVEAL round trip 100 IDs in order" -o ok --sh \
    "for i in \$(seq 100); do echo OBFUSCATE \$i; done | redis-cli -p $RESP_PORT >$T_DIR/toks &&
     sed 's/^/REVEAL /' $T_DIR/toks | redis-cli -p $RESP_PORT >$T_DIR/ids && seq 100 | cmp -s - $T_DIR/ids && echo ok"
check "the requests are counted by route" -O 'idmint_requests_total\{route="/v1/reveal",status="4xx"\} [1-9][0-9]*' \
    --sh "curl -s http://127.0.0.1:$HTTP_PORT/metrics | grep 'route=\"/v1/reveal\",status=\"4xx\"'"
stop_server
check "the log names the key by the fingerprint keygen printed" -s 0 -o '' --sh \
    "[ -n \"$FP\" ] && grep -q \"key $FP from $K\" \"$SRV_LOG\""
check "the key's bytes are never in idmintd's log" -s 1 -o '' --sh \
    "grep -q -e '${KEYHEX:0:16}' -e '${KEYHEX: -16}' \"$SRV_LOG\""

# --- rotation: a ring of keys, SIGHUP reloads it ----------------------------------------------
RK=$T_DIR/ring
"$IDMINT" keygen "$RK" 2>/dev/null
R_OLD=$("$IDMINT" obfuscate --key-file "$RK" --prefix user 777)
start_server --key-file "$RK"
http "before the rotation, /v1/obfuscate gives the first key's token" -o "$R_OLD" -- '/v1/obfuscate/777?prefix=user'
R_FP1=$("$IDMINT" keygen --rotate "$RK" 2>&1 | sed -n 's/.*wrote key \([0-9a-f]*\) .*/\1/p')
R_NEW=$("$IDMINT" obfuscate --key-file "$RK" --prefix user 777)
# sighup_wait ERE: SIGHUP, then wait for one more log line matching ERE.
sighup_wait() {
    local before n=0
    before=$(grep -Ec "$1" "$SRV_LOG")
    kill -HUP "$SRV_PID"
    while [ "$(grep -Ec "$1" "$SRV_LOG")" -le "$before" ] && [ $n -lt 100 ]; do
        sleep 0.05
        n=$((n + 1))
    done
}
http "until SIGHUP, the old key still serves" -o "$R_OLD" -- '/v1/obfuscate/777?prefix=user'
sighup_wait 'key .* \(reloaded\)'
check "SIGHUP reloads the key file; the log names the new key and the previous one by fingerprint" \
    -O ".*key $R_FP1 from $RK \\(reloaded\\): .*previous keys \\(reveal only\\): [0-9a-f]{16}" \
    --sh "grep '(reloaded)' \"$SRV_LOG\" | tail -n 1"
http "after SIGHUP, /v1/obfuscate uses the new current key (the CLI's token)" -o "$R_NEW" \
    -- '/v1/obfuscate/777?prefix=user'
check "... which differs from the token before the rotation" -s 1 -o '' -- test "$R_NEW" = "$R_OLD"
http "a token of the old key still reveals over HTTP" -o 777 -- "/v1/reveal/$R_OLD"
http "and one of the new key" -o 777 -- "/v1/reveal/$R_NEW"
check "RESP REVEAL accepts the old key's token" -o 777 -- redis-cli -p "$RESP_PORT" REVEAL "$R_OLD"
check "RESP OBFUSCATE uses the new key" -o "$R_NEW" -- redis-cli -p "$RESP_PORT" OBFUSCATE 777 user
http "a token of a key outside the ring: 422" -s 422 -O "$JSON_ERROR" \
    -- "/v1/reveal/$("$IDMINT" obfuscate --key-file "$T_DIR/other" 5)"
cp "$RK" "$T_DIR/ring.good"
printf 'idmint-key-v1 nothex\n' >>"$RK"
sighup_wait 'cannot reload --key-file'
check "a key file that fails to load at SIGHUP is logged, naming the line, and the old keys kept" \
    -O ".*cannot reload --key-file $RK: not an idmint key file: line 3: .*keeping the keys in service" \
    --sh "grep 'cannot reload --key-file' \"$SRV_LOG\" | tail -n 1"
http "... and idmintd goes on serving the new key" -o "$R_NEW" -- '/v1/obfuscate/777?prefix=user'
http "... and revealing the old" -o 777 -- "/v1/reveal/$R_OLD"
chmod 644 "$RK"
sighup_wait 'cannot reload --key-file'
check "a key file others may read is refused at SIGHUP too" \
    -O ".*cannot reload --key-file $RK: is readable or writable by group or others.*" \
    --sh "grep 'cannot reload --key-file' \"$SRV_LOG\" | tail -n 1"
http "... still serving" -o 777 -- "/v1/reveal/$R_OLD"
stop_server
check "the ring's key bytes are never in idmintd's log" -s 1 -o '' --sh \
    "grep -q -e \"\$(head -n 1 '$T_DIR/ring.good' | cut -c 15-30)\" -e \"\$(tail -n 1 '$T_DIR/ring.good' | cut -c 15-30)\" \"$SRV_LOG\""

# --- with --auth-token-file ---------------------------------------------------------------------
TOKFILE=$T_DIR/token
printf 'idmint-test-token-0123456789abcdef\n' >"$TOKFILE"
chmod 600 "$TOKFILE"
start_server --key-file "$K" --auth-token-file "$TOKFILE"
http "with --auth-token-file, /v1/obfuscate needs the token (401)" -s 401 -O "$JSON_ERROR" \
    -- /v1/obfuscate/1
http "and answers with it" -o "$("$IDMINT" obfuscate --key-file "$K" 1)" -- /v1/obfuscate/1 \
    -H 'Authorization: Bearer idmint-test-token-0123456789abcdef'
http "/v1/reveal needs it too" -s 401 -O "$JSON_ERROR" -- "/v1/reveal/$CLI_TOK"
stop_server

finish
