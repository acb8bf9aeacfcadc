# check_citations.sh - comments and documents cite only what is in the
# tree. A user's clone has the man pages (man/: the CLI's and idmintd's
# contract) and docs/ (the design), nothing beside the tree: a file that
# names the folder the developers keep beside the project, or one of its
# documents (the contract, the style guide, the infrastructure notes; the
# names are built below) when the tree has no file of that name, is
# reported with its line, and the check fails.
# Usage: bash tests/check_citations.sh SOURCE_DIR
SRC=${1:?usage: check_citations.sh SOURCE_DIR}
export LC_ALL=C
cd "$SRC" || exit 2

# The files to read: git's tracked and untracked-but-not-ignored files in
# a checkout; every file but build trees and installed packages elsewhere
# (an unpacked release).
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    list=$(git ls-files -co --exclude-standard)
else
    list=$(find . -path ./.git -prune -o -path './build*' -prune -o -name node_modules -prune -o \
        -type f -print | sed 's|^\./||')
fi
list=$(printf '%s\n' "$list" | grep -v -x -e 'tests/check_citations.sh' | while IFS= read -r f; do
    [ -f "$f" ] && printf '%s\n' "$f"
done)

# Written in parts, so that this file does not itself name what it forbids.
beside=shared
docs=(CONTRACT STYLE INFRA)
pattern="\\.\\./$beside/|(^|[^[:alnum:]_.-])$beside/($(IFS='|'; echo "${docs[*]}"))\\.md"
for base in "${docs[@]}"; do
    name=$base.md
    if ! printf '%s\n' "$list" | grep -q -e "^$name\$" -e "/$name\$"; then
        pattern="$pattern|(^|[^[:alnum:]_./-])$base\\.md"
    fi
done

hits=$(printf '%s\n' "$list" | tr '\n' '\0' | xargs -0 grep -I -n -E -e "$pattern" -- 2>/dev/null)
if [ -n "$hits" ]; then
    printf '%s\n' "$hits" >&2
    echo "FAIL: $(printf '%s\n' "$hits" | cut -d: -f1 | sort -u | wc -l) files cite files outside the tree" \
        "(cite man/idmint.1, man/idmintd.8, docs/ or the code instead)" >&2
    exit 1
fi
echo "ok: $(printf '%s\n' "$list" | wc -l) files cite only files in the tree"
