#!/usr/bin/env bash
# tls_cert.sh - a throw-away CA and server certificates for idmintd's TLS
# (--tls-cert, --tls-key), made with the openssl command: used by
# tests/server/test_tls.sh, and by anything else that needs a certificate
# for 127.0.0.1 (a benchmark, a demo).
#
# Usage: bash tests/server/tls_cert.sh DIR NAME [CN]
#   makes DIR/ca.pem and DIR/ca.key (an EC P-256 CA, "idmint test CA") if
#   DIR has none yet, then DIR/NAME.pem and DIR/NAME.key: a P-256 key and a
#   certificate signed by that CA for IP 127.0.0.1 and DNS localhost, with
#   subject CN (default NAME) and a random serial, valid for 30 days.
#   Clients trust it with DIR/ca.pem (curl --cacert, redis-cli --cacert).
# Exits non-zero, with openssl's message, when openssl fails.
set -euo pipefail

dir=${1:?usage: tls_cert.sh DIR NAME [CN]}
name=${2:?usage: tls_cert.sh DIR NAME [CN]}
cn=${3:-$name}
mkdir -p "$dir"

if [ ! -f "$dir/ca.pem" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
        -subj '/CN=idmint test CA' -keyout "$dir/ca.key" -out "$dir/ca.pem" \
        -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' \
        2>"$dir/openssl.err" || { cat "$dir/openssl.err" >&2; exit 1; }
fi
printf '%s\n' 'subjectAltName=IP:127.0.0.1,DNS:localhost' 'basicConstraints=critical,CA:FALSE' \
    'keyUsage=critical,digitalSignature' 'extendedKeyUsage=serverAuth' >"$dir/$name.ext"
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$cn" \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>"$dir/openssl.err" ||
    { cat "$dir/openssl.err" >&2; exit 1; }
openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -set_serial "0x$(openssl rand -hex 8)" -days 30 -extfile "$dir/$name.ext" -out "$dir/$name.pem" \
    2>"$dir/openssl.err" || { cat "$dir/openssl.err" >&2; exit 1; }
rm -f "$dir/$name.csr" "$dir/$name.ext" "$dir/openssl.err"
