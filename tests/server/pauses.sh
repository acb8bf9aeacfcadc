# shellcheck shell=bash
# pauses.sh - what the pause tests (test_pauses.sh, test_pauses_clock.sh)
# share, sourced after lib.sh: reading the pause's figures and log.

# metric_of NAME{LABELS}: the value of one labelled sample.
metric_of() {
    curl -s "$BASE/metrics" | grep -F "$1 " | head -n 1 | awk '{print $2}'
}
# ready: /readyz answers 200.
ready() {
    curl -fs -o /dev/null "$BASE/readyz"
}
not_ready() {
    ! ready
}
# logged REGEX: a line of the server's log matches.
logged() {
    grep -Eq "$1" "$SRV_LOG"
}
# positive VALUE: a number above 0 (a decimal fraction allowed).
positive() {
    awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'
}
# ended WHO CAUSE [END_RE]: once ready again, the log holds one start of a
# pause for CAUSE and one end (for END_RE, default CAUSE: the cause it
# ended with), and /metrics counts time paused for CAUSE.
ended() {
    local who=$1 cause=$2 end=${3:-$2} secs
    http "$who: ready again" -o ready -- /readyz
    expect "$who: the log says once that the pause began ($cause) and once that it ended, with its length" \
        "$(grep -c "minting paused ($cause)" "$SRV_LOG"):$(grep -cE "minting resumed after a pause of [0-9]+ ms \(($end)\)" "$SRV_LOG")" = 1:1
    secs=$(metric_of "idmint_pause_seconds_total{cause=\"$cause\"}")
    expect "$who: /metrics counts the time paused for the $cause ($secs s)" "$(positive "$secs" && echo yes)" = yes
}
