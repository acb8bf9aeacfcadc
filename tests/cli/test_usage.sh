# test_usage.sh - what is common to every command: --help, --version,
# usage errors (exit 2), option syntax, write errors and a closed stdout.
# Usage: bash tests/cli/test_usage.sh PATH_TO_IDMINT
. "$(dirname "$0")/lib.sh"

ULID='[0-7][0-9A-HJKMNP-TV-Z]{25}'

# --- help and version ------------------------------------------------------------

check "idmint --help ... work(s)" -O 'Usage: idmint .*gen.*inspect.*convert.*' -- "$IDMINT" --help
check "idmint --help (short -h)" -O 'Usage: idmint .*' -- "$IDMINT" -h
check "idmint --version work(s)" -O 'idmint [0-9]+\.[0-9]+\.[0-9]+' -n 1 -- "$IDMINT" --version
for cmd in gen inspect convert; do
    check "idmint COMMAND --help work(s) ($cmd)" -O "Usage: idmint $cmd .*" -- "$IDMINT" "$cmd" --help
    check "idmint COMMAND --help work(s) ($cmd -h)" -O "Usage: idmint $cmd .*" -- "$IDMINT" "$cmd" -h
    check "idmint help COMMAND ($cmd)" -O "Usage: idmint $cmd .*" -- "$IDMINT" help "$cmd"
done
check "--help wins over the rest of the command line" -O 'Usage: idmint gen .*' -- "$IDMINT" gen ulid -n 5 --help
check "gen --help lists every format" \
    -O '.*uuidv7.*uuidv4.*ulid.*ksuid.*snowflake.*typeid.*token.*traceparent.*' -- "$IDMINT" gen --help

# --- usage errors -------------------------------------------------------------------

check "2 usage error: no command" -o '' -e '^idmint: ' -s 2 -- "$IDMINT"
check "2 usage error (unknown command)" \
    -o '' -e "^idmint: unknown command 'frob'" -s 2 -- "$IDMINT" frob
check "2 usage error (unknown option) before the command" \
    -o '' -e "^idmint: unknown option '--frob'" -s 2 -- "$IDMINT" --frob
check "2 usage error (unknown option) of inspect" \
    -o '' -e "^idmint: unknown option '--frob'" -s 2 -- "$IDMINT" inspect --frob 01ARZ3NDEKTSV4RRFFQ69G5FAV
check "2 usage error: a flag given a value" \
    -o '' -e "^idmint: option '--json' takes no value" -s 2 -- "$IDMINT" inspect --json=yes 01ARZ3NDEKTSV4RRFFQ69G5FAV
check "2 usage error: an option without its value" \
    -o '' -e "^idmint: option '--layout' needs a value" -s 2 -- "$IDMINT" inspect --layout
check "usage errors point at --help" \
    -o '' -e "Try 'idmint gen --help'" -s 2 -- "$IDMINT" gen frob
check "help for an unknown command is a usage error" \
    -o '' -e "^idmint: unknown command 'frob'" -s 2 -- "$IDMINT" help frob

# --- option syntax ------------------------------------------------------------------

check "options after operands (inspect ID --json)" \
    -O '\{"input": "01ARZ3NDEKTSV4RRFFQ69G5FAV", .*\}' -- "$IDMINT" inspect 01ARZ3NDEKTSV4RRFFQ69G5FAV --json
check "--opt=value (inspect --as=ulid)" \
    -O '\{"input": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "kind": "ulid", .*\}' -- "$IDMINT" inspect --json --as=ulid 01ARZ3NDEKTSV4RRFFQ69G5FAV
check "-- ends the options" \
    -O '\{"input": "01ARZ3NDEKTSV4RRFFQ69G5FAV", .*\}' -- "$IDMINT" inspect --json -- 01ARZ3NDEKTSV4RRFFQ69G5FAV
check "an ID after -- that looks like an option is an input" \
    -O '\{"input": "--json", "error": "[^"]+"\}' -s 1 -- "$IDMINT" inspect --json -- --json

# --- output ---------------------------------------------------------------------------

check "A closed stdout (idmint gen ulid -n 1000000000 | head -1) ends the program quietly and promptly with status 0 or the SIGPIPE default" \
    -L "$ULID" -n 1 --sh 'timeout 10 "$IDMINT" gen ulid -n 1000000000 | head -1
        s=${PIPESTATUS[0]}; [ "$s" = 0 ] || [ "$s" = 141 ] || echo "exit status $s"'
check "A closed stdout ... promptly (uuidv7)" \
    -n 1 --sh 'timeout 10 "$IDMINT" gen uuidv7 -n 1000000000 | head -1
        s=${PIPESTATUS[0]}; [ "$s" = 0 ] || [ "$s" = 141 ] || echo "exit status $s"'
check "A closed stdout ... promptly (snowflake)" \
    -n 1 --sh 'timeout 10 "$IDMINT" gen snowflake --node 1 -n 1000000000 | head -1
        s=${PIPESTATUS[0]}; [ "$s" = 0 ] || [ "$s" = 141 ] || echo "exit status $s"'
check "A closed stdout ... promptly (token)" \
    -n 1 --sh 'timeout 10 "$IDMINT" gen token -n 1000000000 | head -1
        s=${PIPESTATUS[0]}; [ "$s" = 0 ] || [ "$s" = 141 ] || echo "exit status $s"'
check "A closed stdout ... promptly (inspect of endless stdin)" \
    -n 1 --sh 'yes 01ARZ3NDEKTSV4RRFFQ69G5FAV | timeout 10 "$IDMINT" inspect --json | head -1
        s=${PIPESTATUS[1]}; [ "$s" = 0 ] || [ "$s" = 141 ] || echo "exit status $s"'
check "A closed stdout ... promptly (convert of endless stdin)" \
    -n 1 --sh 'yes 01ARZ3NDEKTSV4RRFFQ69G5FAV | timeout 10 "$IDMINT" convert --to uuid | head -1
        s=${PIPESTATUS[1]}; [ "$s" = 0 ] || [ "$s" = 141 ] || echo "exit status $s"'
if [ -w /dev/full ]; then
    check "a failed write (disk full) is reported and exits 1" \
        -o '' -e '^idmint: .*write' -s 1 --sh '"$IDMINT" gen ulid -n 100000 >/dev/full'
fi
check "One ID per line on stdout ... nothing else on stdout: diagnostics go to stderr" \
    -o '' -e '^idmint: ' -s 1 --sh '"$IDMINT" inspect bogus'

finish
