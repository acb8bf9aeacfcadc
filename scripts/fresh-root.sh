#!/usr/bin/env bash
# scripts/fresh-root.sh - the README's two commands on a fresh minimal
# Debian 12, as a new user meets them: a root made by `debootstrap
# --variant=minbase bookworm` (nothing else installed), a clone of this
# tree's HEAD in it, then scripts/demo.sh (non-interactive) and
# scripts/test.sh inside it, each timed.
#
#   sudo scripts/fresh-root.sh [--dir DIR] [--keep] [--reuse] [--mirror URL]
#                              [--only demo|test] [-- TEST.SH ARGS...]
#
# --dir DIR    where the root goes (default: build-fresh-root/ in the tree;
#              it needs about 6 GB once the tests' packages are in)
# --keep       leave the root in place afterwards (default: removed)
# --reuse      use the root in DIR if there is one (made by --keep): only
#              the clone is made anew; its packages are kept, so this is no
#              longer a fresh machine, but it is quicker for a second look
# --mirror URL the Debian mirror for debootstrap (default: the host's own,
#              from /etc/apt, else http://deb.debian.org/debian)
# --only X     run only demo.sh or only test.sh
#
# Environment for the commands inside: IDM_FUZZ_SECONDS and CI pass
# through. The root shares the host's network (loopback ports are picked at
# random by the tests, so they do not meet the host's) and its kernel;
# the root is bind-mounted on itself (private), and /proc, /sys, /dev,
# /dev/pts, /dev/shm and a fresh /run are mounted in it, all unmounted at
# the end, whatever happens; /tmp is the root's own, emptied first. If the host
# reaches the network through a proxy with a CA of its own (in
# /usr/local/share/ca-certificates), that CA is copied in, and npm is
# told about it, so that the root reaches what the host reaches.
#
# Needs root (debootstrap, chroot, mounts) and, on the host, debootstrap
# (installed when missing) and git. Takes about an hour on 2 cores; not
# part of the test command. The last lines are the results: each
# command's exit status and time.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=$ROOT/build-fresh-root
keep=0
reuse=0
only=
mirror=
test_args=()
# shellcheck source=scripts/deps.sh
. "$ROOT/scripts/deps.sh"
while [ $# -gt 0 ]; do
    case "$1" in
    --dir)
        DIR=${2:?--dir needs a directory}
        shift 2
        ;;
    --keep) keep=1 && shift ;;
    --reuse) reuse=1 && keep=1 && shift ;;
    --mirror)
        mirror=${2:?--mirror needs a URL}
        shift 2
        ;;
    --only)
        only=${2:?--only needs demo or test}
        case "$only" in demo | test) ;; *)
            echo "fresh-root: --only takes demo or test, not '$only'" >&2
            exit 2
            ;;
        esac
        shift 2
        ;;
    -h | --help) idm_script_help "$0" && exit 0 ;;
    --)
        shift
        test_args=("$@")
        break
        ;;
    *)
        echo "fresh-root: unknown argument '$1' (see --help)" >&2
        exit 2
        ;;
    esac
done
if [ "$(id -u)" -ne 0 ]; then
    echo "fresh-root: needs root (debootstrap, chroot and mounts): sudo $0" >&2
    exit 2
fi
case "$DIR" in /*) ;; *) DIR=$PWD/$DIR ;; esac
log() { printf 'fresh-root: %s\n' "$*" >&2; }

if [ -z "$mirror" ]; then
    mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
        grep -v security | head -n 1)
    [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' \
        /etc/apt/sources.list 2>/dev/null)
    [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
fi

MOUNTS=()
cleanup() {
    local i
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        umount -l "${MOUNTS[$i]}" 2>/dev/null
    done
    MOUNTS=()
    if [ "$keep" = 0 ] && [ -d "$DIR" ]; then
        # Only once nothing is mounted below it.
        if ! grep -q " $DIR/" /proc/mounts; then
            rm -rf --one-file-system "$DIR"
        else
            log "$DIR still has mounts: left in place"
        fi
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t_all=$SECONDS
# --- the root ------------------------------------------------------------------
if [ "$reuse" = 1 ] && [ -x "$DIR/usr/bin/apt-get" ]; then
    log "reusing the root in $DIR (not a fresh machine any more: its packages stay)"
else
    if ! command -v debootstrap >/dev/null 2>&1; then
        log "installing debootstrap on the host"
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
            --no-install-recommends debootstrap || exit 1
    fi
    rm -rf --one-file-system "$DIR"
    mkdir -p "$DIR" || exit 1
    log "debootstrap --variant=minbase bookworm $DIR $mirror"
    t=$SECONDS
    if ! debootstrap --variant=minbase bookworm "$DIR" "$mirror" >"$DIR.debootstrap.log" 2>&1; then
        tail -n 20 "$DIR.debootstrap.log" >&2
        log "debootstrap failed (the whole log: $DIR.debootstrap.log)"
        exit 1
    fi
    log "the root took $((SECONDS - t)) s ($(du -sh --one-file-system "$DIR" | cut -f1))"
    # The host's Debian sources (bookworm, its updates and security), so
    # the root installs what a new machine of the host's kind would.
    if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
        rm -f "$DIR/etc/apt/sources.list"
        cp /etc/apt/sources.list.d/*.sources "$DIR/etc/apt/sources.list.d/"
    fi
fi
cp /etc/resolv.conf "$DIR/etc/resolv.conf" 2>/dev/null
# A proxy's CA of the host's own (see above).
extra_ca=
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
    mkdir -p "$DIR/usr/local/share/ca-certificates"
    cp /usr/local/share/ca-certificates/*.crt "$DIR/usr/local/share/ca-certificates/"
    cat /usr/local/share/ca-certificates/*.crt >"$DIR/root/host-ca.pem"
    extra_ca=/root/host-ca.pem
fi

# --- the clone -------------------------------------------------------------------
rm -rf "$DIR/root/idmint"
if ! git clone -q --no-local "$ROOT" "$DIR/root/idmint"; then
    log "git clone of $ROOT failed"
    exit 1
fi
CLONED=$(git -C "$DIR/root/idmint" rev-parse --short HEAD)
log "cloned $CLONED into $DIR/root/idmint (uncommitted changes are not in it)"

mnt() { # mnt TYPE|--bind SRC DST
    mkdir -p "$3"
    if [ "$1" = --bind ]; then
        mount --bind "$2" "$3" || return 1
    else
        mount -t "$1" "$2" "$3" || return 1
    fi
    MOUNTS+=("$3")
}
# The root a mount point of its own, private (a machine's / is one: tests
# that unshare a mount namespace make / private there, which a plain
# directory under chroot refuses), then what a booted Debian 12 has
# mounted. /tmp stays the root's own directory, on disk, as on Debian 12
# (a tmpfs there would hide the bytes a database writes from
# /proc/PID/io, which idmint bench btree reports).
mnt --bind "$DIR" "$DIR" && mount --make-private "$DIR" &&
    mnt proc proc "$DIR/proc" && mnt sysfs sysfs "$DIR/sys" && mnt --bind /dev "$DIR/dev" &&
    mnt devpts devpts "$DIR/dev/pts" && mnt tmpfs tmpfs "$DIR/dev/shm" &&
    mnt tmpfs tmpfs "$DIR/run" || {
    log "mounting the root, its /proc, /sys, /dev or /run failed"
    exit 1
}
find "$DIR/tmp" -mindepth 1 -delete 2>/dev/null
chmod 1777 "$DIR/tmp" "$DIR/dev/shm"

# inside NAME COMMAND: runs COMMAND in the clone inside the root, as root,
# with a clean environment; prints and records its status and time.
RESULTS=()
inside() {
    local name=$1 cmd=$2 t=$SECONDS rc
    log "running $name inside the root: $cmd"
    chroot "$DIR" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        ${CI:+CI=$CI} ${IDM_FUZZ_SECONDS:+IDM_FUZZ_SECONDS=$IDM_FUZZ_SECONDS} \
        ${extra_ca:+NODE_EXTRA_CA_CERTS=$extra_ca} \
        IDM_DEMO_NO_WAIT=1 DEBIAN_FRONTEND=noninteractive \
        /bin/bash -c "cd /root/idmint && $cmd" </dev/null 2>&1 | tee "$DIR.$name.log"
    rc=${PIPESTATUS[0]}
    RESULTS+=("$(printf '%-8s exit %-3s %6s s  (log: %s)' "$name" "$rc" $((SECONDS - t)) "$DIR.$name.log")")
    return "$rc"
}
status=0
if [ "$only" != test ]; then
    inside demo "scripts/demo.sh" || status=1
fi
if [ "$only" != demo ]; then
    inside test "scripts/test.sh ${test_args[*]:-}" || status=1
fi

echo
echo "==== fresh-root: results (Debian 12 minbase, $CLONED) ===="
printf '%s\n' "${RESULTS[@]}"
echo "all: $((SECONDS - t_all)) s, exit $status"
exit "$status"
