# test_dist.sh - what an operator installs beside idmintd (dist/): the
# configuration file and the systemd unit.
#   - dist/idmintd.conf passes idmintd --check-config; every option of
#     idmintd --help is in it, commented out with its default; uncommented
#     all at once, it is still valid; its listeners are loopback only;
#   - dist/systemd/idmintd.service passes systemd-analyze verify, and
#     systemd-analyze security --offline=yes scores it 2.0 or lower ("OK");
#     its ExecStartPre= check passes on the shipped file; the hardening the
#     unit promises is there.
# Usage: bash tests/server/test_dist.sh IDMINTD IDMINT LOADCLIENT
. "$(dirname "$0")/lib.sh"

DIST=$(cd "$(dirname "$0")/../../dist" && pwd)
CONF=$DIST/idmintd.conf
UNIT=$DIST/systemd/idmintd.service

# ---- the configuration file ---------------------------------------------------------------

check "dist/idmintd.conf: idmintd --check-config finds nothing" -s 0 \
    -O "idmintd: $CONF: the settings are valid" -- "$IDMINTD" --check-config --config "$CONF"
missing=''
for opt in $("$IDMINTD" --help | grep -oE '^ +(-[a-z], )?--[a-z0-9-]+' | sed 's/.*--//'); do
    case $opt in help | version | config | check-config) continue ;; esac
    grep -qE "^# $opt = " "$CONF" || missing+="$opt "
done
expect "every option of idmintd --help is in the file, commented out with a value" "$missing" = ''
expect "... and no setting is on (every line a comment or blank)" "$(grep -cvE '^(#.*)?$' "$CONF")" = 0
sed -E 's/^# ([a-z0-9-]+ = )/\1/' "$CONF" >"$T_DIR/all.conf"
check "uncommented all at once, the file is still valid" -s 0 -O '.*the settings are valid' \
    -- "$IDMINTD" --check-config --config "$T_DIR/all.conf"
expect "its listeners are loopback (http, resp) or off (memcache)" \
    "$(grep -E '^# (http|resp|memcache) = ' "$CONF" | tr '\n' ' ')" = '# http = 127.0.0.1:8080 # resp = 127.0.0.1:6380 # memcache = off '
# The defaults it shows are idmintd's: each shown number, as --help states it.
for key in max-count max-connections lease-ttl reserve max-rewind max-offset segment-tags header-timeout; do
    shown=$(sed -nE "s/^# $key = ([0-9]+)$/\\1/p" "$CONF")
    expect "the default shown for $key ($shown) is the one --help states" \
        "$("$IDMINTD" --help | tr -s ' \n' ' ' | grep -oE -- "--$key [A-Z]+ [^-]*" | grep -cE "\(default $shown[;,)]")" = 1
done

# ---- the unit -----------------------------------------------------------------------------

# systemd-analyze verify needs the binary where ExecStart= names it: a copy
# of the unit naming this build's.
sed "s|/usr/sbin/idmintd|$IDMINTD|g; s|/etc/idmint/idmintd.conf|$CONF|g" "$UNIT" >"$T_DIR/idmintd.service"
check "idmintd.service: systemd-analyze verify finds nothing" -s 0 -o '' \
    --sh "systemd-analyze verify --man=no '$T_DIR/idmintd.service' 2>&1"
systemd-analyze security --offline=yes "$T_DIR/idmintd.service" >"$T_DIR/security.txt" 2>&1
score=$(sed -nE 's/.*Overall exposure level for idmintd.service: ([0-9.]+).*/\1/p' "$T_DIR/security.txt")
expect "systemd-analyze security --offline=yes: exposure $score, 2.0 or lower (OK or better)" \
    "$(awk -v s="$score" 'BEGIN { print (s != "" && s + 0 <= 2.0) ? "yes" : "no" }')" = yes
for line in 'Type=notify' 'ExecReload=/bin/kill -HUP $MAINPID' 'StateDirectory=idmintd' 'RuntimeDirectory=idmint' \
    'User=idmintd' 'ProtectSystem=strict' 'ProtectHome=yes' 'PrivateTmp=yes' 'NoNewPrivileges=yes' \
    'CapabilityBoundingSet=' 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX' \
    'SystemCallFilter=@system-service' 'MemoryDenyWriteExecute=yes' 'LockPersonality=yes'; do
    expect "the unit has $line" "$(grep -cxF "$line" "$UNIT")" = 1
done
check "idmintd.socket: systemd-analyze verify finds nothing (with the service beside it)" -s 0 -o '' \
    --sh "cp '$DIST/systemd/idmintd.socket' '$T_DIR/' && systemd-analyze verify --man=no '$T_DIR/idmintd.socket' 2>&1"
expect "... it passes HTTP then RESP, loopback, as the settings it names expect" \
    "$(grep -E '^ListenStream=' "$DIST/systemd/idmintd.socket" | tr '\n' ' ')" = 'ListenStream=127.0.0.1:8080 ListenStream=127.0.0.1:6380 '
pre=$(sed -n 's/^ExecStartPre=//p' "$T_DIR/idmintd.service")
check "its ExecStartPre= (the configuration check) passes on the shipped file" -s 0 \
    -O '.*the settings are valid' --sh "$pre"

finish
