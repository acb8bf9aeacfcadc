# ports.sh - how the test scripts pick loopback ports, sourced by
# tests/server/lib.sh and tests/coord/services.sh.

# pick_port VAR: sets VAR to a loopback port that no socket uses now, below
# the ephemeral range, so that no client connection (of this test or any
# other) takes it between the pick and the bind; status 1 (VAR set anyway)
# when 50 draws found none free. A variable, not output: the draw must
# advance this shell's RANDOM.
pick_port() {
    # (Names of its own: VAR may be any name but these.)
    local _pp_lo _pp_port _pp_i
    _pp_lo=$(cut -f 1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
    [ "${_pp_lo:-0}" -gt 21000 ] || _pp_lo=60000
    for ((_pp_i = 0; _pp_i < 50; _pp_i++)); do
        _pp_port=$((20000 + RANDOM % (_pp_lo - 20000)))
        if port_free "$_pp_port"; then
            printf -v "$1" %s "$_pp_port"
            return 0
        fi
    done
    printf -v "$1" %s "$_pp_port"
    return 1
}

# port_free PORT: no TCP socket (listening or connected) has PORT as its
# local port.
port_free() {
    local hex
    hex=$(printf ':%04X ' "$1")
    ! grep -qs -- "^ *[0-9]*: [0-9A-F]*$hex" /proc/net/tcp /proc/net/tcp6
}
