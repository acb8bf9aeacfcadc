# check_man.sh - the man pages are the CLI's contract: each is well-formed
# (groff -ww finds nothing to warn about), has each section once, and
# gives every option that the program's --help lists a tagged paragraph
# of its own in OPTIONS (.TP, then the option: an option run into the
# paragraph before it is not found).
# Usage: bash tests/check_man.sh SOURCE_DIR IDMINT IDMINTD
SRC=${1:?usage: check_man.sh SOURCE_DIR IDMINT IDMINTD}
IDMINT=$2
IDMINTD=$3
export LC_ALL=C
failed=0
passed=0
fail() {
    echo "FAIL: $*" >&2
    failed=$((failed + 1))
}

# options PROGRAM SUBCOMMAND...: the long options its --help lists.
options() {
    "$@" --help 2>&1 | grep -oE '^ +(-[A-Za-z0-9], )?--[a-z][a-z0-9-]*' | sed 's/.*--//' | sort -u
}

# tagged PAGE: the long options that open a .TP paragraph in OPTIONS.
tagged() {
    awk '
        /^\.SH / { in_opts = ($2 == "OPTIONS") }
        in_opts && prev == ".TP" && /^\.B[IR]? / {
            line = $0
            while (match(line, /\\-\\-[a-z][a-z0-9\\-]*/)) {
                o = substr(line, RSTART + 4, RLENGTH - 4)
                gsub(/\\-/, "-", o)
                print o
                line = substr(line, RSTART + RLENGTH)
            }
        }
        { prev = $0 }
    ' "$1" | sort -u
}

check_page() {
    local page=$1
    shift
    local warnings dup missing
    warnings=$(groff -man -ww -z "$page" 2>&1)
    if [ -n "$warnings" ]; then
        fail "$page: groff warns: $warnings"
    else
        passed=$((passed + 1))
    fi
    dup=$(grep -E '^\.SH ' "$page" | sort | uniq -d)
    if [ -n "$dup" ]; then
        fail "$page: sections given twice: $dup"
    else
        passed=$((passed + 1))
    fi
    missing=$(comm -23 <(options "$@") <(tagged "$page"))
    if [ -n "$missing" ]; then
        fail "$page: options of '$* --help' with no tagged paragraph in OPTIONS: $(echo $missing)"
    else
        passed=$((passed + 1))
    fi
}

check_page "$SRC/man/idmintd.8" "$IDMINTD"
check_page "$SRC/man/idmint.1" "$IDMINT" gen
check_page "$SRC/man/idmint.1" "$IDMINT" audit
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
