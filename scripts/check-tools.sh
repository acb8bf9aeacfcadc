#!/usr/bin/env bash
# scripts/check-tools.sh - every external command the tests run is one
# that the test command installs (scripts/test.sh runs this first, as its
# own phase, so that a missing tool is one clear failure rather than a
# scattering of unrelated ones later).
#
#   scripts/check-tools.sh [--list]
#
# 1. It reads every shell script of the suite (tests/, the benchmarks'
#    smoke runs, scripts/) through `bash --pretty-print` (comments gone, one
#    command a line), and takes as a command each word in a command's place:
#    the first word of a line or after | || && ; $( ` ( { then do else !,
#    the test DSL's `-- COMMAND` and `--sh 'SNIPPET'` (quotes are looked
#    through, so `bash -c '...'` is read too), after wrappers (env VAR=...,
#    timeout N, nice, exec, command, xargs, setpriv ..., wait_until N).
#    Shell builtins and keywords, and the functions the scripts define, are
#    not commands. Here-documents are skipped, and so is a command run
#    through a variable or a path ("$PG_BIN/psql"): list such a command by
#    hand.
# 2. Each command found that this machine has in /usr/bin, /usr/sbin, /bin
#    or /sbin must be in scripts/test-tools.txt, with the Debian package
#    that provides it (or "-": a word the scan takes for a command, which
#    it is not). One that is not listed fails, naming the script.
# 3. Each listed command's package must be one that a minimal Debian 12
#    has (Essential: yes or Priority: required, what debootstrap
#    --variant=minbase installs), one of the test command's packages
#    (scripts/deps.sh: IDM_BUILD_PACKAGES, IDM_TEST_PACKAGES), or a
#    dependency of one of those as installed (dpkg's Depends and
#    Pre-Depends: a tool that arrives only as a Recommends fails, since the
#    scripts install without them); and on this machine the command must be installed and belong to
#    that package (dpkg -S), so the list cannot drift from the truth.
#
# --list prints the commands found, one a line with the first script that
# runs it, and exits. Exit status: 0 when all holds, 1 when not (each
# failure on its own line, "check-tools: FAIL ..."), 2 for usage.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2
# shellcheck source=scripts/deps.sh
. "$ROOT/scripts/deps.sh"
LIST=scripts/test-tools.txt
SYS_PATH=/usr/sbin:/usr/bin:/sbin:/bin

list_only=0
case "${1:-}" in
'') ;;
--list) list_only=1 ;;
-h | --help)
    idm_script_help "$0"
    exit 0
    ;;
*)
    echo "usage: scripts/check-tools.sh [--list]" >&2
    exit 2
    ;;
esac

# The scripts of the suite: every shell script under tests/, the test and
# demo commands and what they source, and the benchmark scripts that the
# test command runs as a smoke test.
mapfile -t SCRIPTS < <(
    find tests -name '*.sh' -type f | sort
    printf '%s\n' scripts/test.sh scripts/deps.sh scripts/demo.sh scripts/depgraph.sh \
        bench/run.sh bench/pg.sh bench/keyed.sh bench/bindings.sh
)

# The functions any of them defines (lib.sh's are used by the others).
functions=$(for f in "${SCRIPTS[@]}"; do bash --pretty-print "$f" 2>/dev/null; done |
    sed -n -E 's/^[[:space:]]*(function[[:space:]]+)?([A-Za-z_][A-Za-z0-9_:.-]*)[[:space:]]*\(\)[[:space:]]*$/\2/p' |
    sort -u)
declare -A builtin_of=() function_of=()
for w in $(compgen -b -k); do builtin_of[$w]=1; done
for w in $functions; do function_of[$w]=1; done
# not_command WORD: a builtin or keyword, or a function of the scripts
# that is not also a command of the machine (curl() wraps `command curl`).
not_command() {
    [ -n "${builtin_of[$1]:-}" ] && return 0
    [ -n "${function_of[$1]:-}" ] && ! PATH=$SYS_PATH type -P "$1" >/dev/null 2>&1
}

# words FILE: "WORD FILE" for each word in a command's place.
words() {
    local f=$1 text
    if ! text=$(bash --pretty-print "$f" 2>&1); then
        echo "check-tools: FAIL $f: bash cannot parse it: $text" >&2
        return 1
    fi
    printf '%s\n' "$text" | F=$f perl -ne '
        BEGIN { $doc = undef; }
        if (defined $doc) { $doc = undef if /^\t*\Q$doc\E$/; next; }
        if (/<<-?\s*[\x27"]?([A-Za-z_][A-Za-z0-9_]*)[\x27"]?/) { $next_doc = $1; } else { $next_doc = undef; }
        s/\$\(\(.*?\)\)//g;          # arithmetic
        s/\$\{[^}]*\}//g;            # parameter expansions
        s/[\x27"]//g;                # look through quotes
        s/\s--sh\s/ ; /g;            # the DSL: --sh SNIPPET
        s/\s--\s/ ; /g;              # the DSL: -- COMMAND ARGS
        for my $chunk (split /\|\||&&|\||;|\$\(|`|\(\s|\)|\{|\}|\bthen\b|\bdo\b|\belse\b|!/) {
            my @w = split " ", $chunk;
            while (@w) {
                my $x = $w[0];
                if ($x =~ /^[A-Za-z_][A-Za-z0-9_]*\+?=/ || $x =~ /^[0-9]*[<>]/ || $x =~ /^-/ || $x =~ /^[0-9.]+[smh]?$/) { shift @w; next; }
                if ($x =~ /^(if|elif|while|until|time|exec|command|builtin|nohup|nice|setsid|env|sudo|timeout|xargs|stdbuf|setpriv|wait_until|track|local|export|declare|readonly|in|coproc)$/) { shift @w; next; }
                last;
            }
            next unless @w;
            print "$w[0] $ENV{F}\n" if $w[0] =~ /^[a-z][a-z0-9_.+-]*$/;
        }
        $doc = $next_doc if defined $next_doc;
    '
}

found=$(for f in "${SCRIPTS[@]}"; do words "$f"; done | sort -u -k1,1)
fails=0
fail() {
    echo "check-tools: FAIL $*"
    fails=$((fails + 1))
}

# The list: COMMAND PACKAGE, or COMMAND - for a word that is no command.
declare -A pkg_of=()
while read -r cmd pkg _; do
    case "$cmd" in '' | \#*) continue ;; esac
    pkg_of[$cmd]=$pkg
done <"$LIST"

if [ "$list_only" = 1 ]; then
    while read -r w f; do
        not_command "$w" && continue
        PATH=$SYS_PATH type -P "$w" >/dev/null 2>&1 || [ -n "${pkg_of[$w]:-}" ] || continue
        printf '%-24s %-10s %s\n' "$w" "${pkg_of[$w]:-(unlisted)}" "$f"
    done <<<"$found"
    exit 0
fi

# 2. every command found is listed
n=0
while read -r w f; do
    [ -n "$w" ] || continue
    not_command "$w" && continue
    if [ -n "${pkg_of[$w]:-}" ]; then
        n=$((n + 1))
        continue
    fi
    if PATH=$SYS_PATH type -P "$w" >/dev/null 2>&1; then
        fail "$f runs '$w', which $LIST does not list: add it with the Debian package that provides it" \
            "(and that package to scripts/deps.sh's IDM_TEST_PACKAGES if a minimal Debian lacks it)"
    fi
done <<<"$found"

# 3. each listed command's package is installed by the test command
declare -A allowed=()
while read -r p e prio; do
    if [ "$e" = yes ] || [ "$prio" = required ]; then allowed[$p]=base; fi
done < <(dpkg-query -W -f='${Package} ${Essential} ${Priority}\n' 2>/dev/null)
# The dependencies of the listed packages, as installed here (dpkg's own
# database: Depends and Pre-Depends, an alternative by whichever of its
# packages is installed, a virtual package by what provides it).
PKGS="${IDM_BUILD_PACKAGES[*]} ${IDM_TEST_PACKAGES[*]} ${IDM_NODE_PACKAGES[*]}"
export PKGS
closure=$(dpkg-query -W -f='${db:Status-Status}\t${Package}\t${Provides}\t${Pre-Depends}, ${Depends}\n' 2>/dev/null |
    perl -F'\t' -lane '
        next unless $F[0] eq "installed";
        $dep{$F[1]} = $F[3];
        $have{$F[1]} = 1;
        for (split /,\s*/, $F[2]) { s/\s.*//; push @{$prov{$_}}, $F[1] if $_ ne ""; }
        END {
            my @todo = split " ", $ENV{PKGS};
            my %seen;
            while (defined(my $p = shift @todo)) {
                $p =~ s/:.*//;
                my @real = $have{$p} ? ($p) : @{$prov{$p} || []};
                for my $r (@real) {
                    next if $seen{$r}++;
                    print $r;
                    for my $alt (split /,\s*/, $dep{$r} // "") {
                        my @names = map { (my $n = $_) =~ s/^\s+|\s.*$//g; $n =~ s/:.*//; $n } split /\|/, $alt;
                        my ($pick) = grep { $have{$_} || $prov{$_} } @names;
                        push @todo, $pick if defined $pick;
                    }
                }
            }
        }' 2>/dev/null)
if [ -z "$closure" ]; then
    fail "none of the test command's packages is installed: run scripts/test.sh, which installs them"
fi
for p in $closure; do
    allowed[$p]=${allowed[$p]:-test}
done
# Each listed command's file, by the paths dpkg may know it by: /bin/cat
# for /usr/bin/cat on a merged /usr; a link (alternatives, a wrapper) by
# itself or by what it points to. One dpkg -S for all of them.
declare -A path_of=() owners_of=()
paths=()
for cmd in "${!pkg_of[@]}"; do
    [ "${pkg_of[$cmd]}" = - ] && continue
    path=$(PATH=$SYS_PATH type -P "$cmd" 2>/dev/null) || continue
    path_of[$cmd]=$path
    real=$(readlink -f "$path")
    paths+=("$path" "$real" "/${path#/usr/}" "/${real#/usr/}")
done
while IFS= read -r line; do
    case "$line" in 'diversion by'*) continue ;; esac
    file=${line##*: }
    for p in $(sed 's/, / /g; s/:[a-z0-9]*$//; s/:[a-z0-9]* / /g' <<<"${line%: *}"); do
        owners_of[$file]+=" ${p%%:*} "
    done
done < <(dpkg -S "${paths[@]}" 2>/dev/null)

for cmd in $(printf '%s\n' "${!pkg_of[@]}" | sort); do
    pkg=${pkg_of[$cmd]}
    [ "$pkg" = - ] && continue
    # PKG|PKG: any of them (awk is mawk on a minimal Debian, gawk where
    # that is installed).
    any=
    for want in ${pkg//|/ }; do
        [ -n "${allowed[$want]:-}" ] && any=$want
    done
    if [ -z "$any" ]; then
        fail "'$cmd' is listed as from $pkg, which neither a minimal Debian 12 nor scripts/deps.sh's" \
            "packages (nor their dependencies) bring: add $pkg to IDM_TEST_PACKAGES"
        continue
    fi
    path=${path_of[$cmd]:-}
    if [ -z "$path" ]; then
        fail "'$cmd' (package $pkg) is not installed here: the test command did not install it"
        continue
    fi
    real=$(readlink -f "$path")
    owners=
    for f in "$path" "$real" "/${path#/usr/}" "/${real#/usr/}"; do
        owners+=${owners_of[$f]:-}
    done
    ok=0
    for want in ${pkg//|/ }; do
        [[ $owners == *" $want "* ]] && ok=1
    done
    if [ "$ok" = 0 ]; then
        fail "'$cmd' is listed as from $pkg, but here $path belongs to $(echo ${owners:-no package})"
    fi
done

if [ "$fails" -ne 0 ]; then
    echo "check-tools: $fails failure(s); $LIST and scripts/deps.sh are the lists"
    exit 1
fi
echo "check-tools: $n commands in ${#SCRIPTS[@]} scripts, each installed by the test command or by a minimal Debian 12"
exit 0
