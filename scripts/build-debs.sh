#!/usr/bin/env bash
# scripts/build-debs.sh [--version V] [--lintian] OUTDIR
#
# Builds idmint's Debian packages from this tree into OUTDIR, the way
# `dpkg-buildpackage -us -uc -b` does in a clone, without touching the tree:
# the committed files (git ls-files, plus what is modified in the work tree)
# are copied to OUTDIR/src/idmint-VERSION and built there, and the .deb,
# .buildinfo and .changes files land in OUTDIR.
#
#   --version V   build as version V instead of debian/changelog's (a new
#                 changelog entry in the copy; the upgrade test's "newer
#                 package"); V must sort above the tree's version for an
#                 upgrade
#   --lintian     run lintian on the .changes afterwards; exit 1 on an error
#                 (warnings are listed; each one the project keeps has an
#                 override in debian/ saying why)
#
# Needs the packages the README's test command installs (debhelper,
# dh-python, lintian and the build dependencies in debian/control).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
version=
lintian=0
while [ $# -gt 0 ]; do
    case $1 in
    --version) version=$2; shift 2 ;;
    --lintian) lintian=1; shift ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build-debs.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -eq 1 ] || { echo "usage: build-debs.sh [--version V] [--lintian] OUTDIR" >&2; exit 2; }
out=$(mkdir -p "$1" && cd "$1" && pwd)

tree_version=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Version)
version=${version:-$tree_version}
src="$out/src/idmint-${version%%-*}"
rm -rf "$src"
mkdir -p "$src"
# The tree's own files only: no build directories, no local artifacts.
# One pass: the files that exist (a tracked file deleted in the work tree
# is left out), copied with their paths; any copy that fails stops here.
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do
        if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
    done | xargs -0 cp --parents -d -t "$src") ||
    { echo "build-debs.sh: cannot copy the tree's files to $src" >&2; exit 1; }

if [ "$version" != "$tree_version" ]; then
    dpkg --compare-versions "$version" gt "$tree_version" ||
        { echo "build-debs.sh: --version $version does not sort above the tree's $tree_version" >&2; exit 2; }
    entry=$(mktemp)
    {
        printf 'idmint (%s) unstable; urgency=medium\n\n' "$version"
        printf '  * Rebuilt from the tree by scripts/build-debs.sh --version.\n\n'
        printf ' -- %s  %s\n\n' "$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -S Maintainer)" "$(date -R)"
        cat "$src/debian/changelog"
    } >"$entry"
    mv "$entry" "$src/debian/changelog"
fi

echo "build-debs.sh: building idmint $version in $src"
t0=$SECONDS
(cd "$src" && dpkg-buildpackage -us -uc -b -j"$(nproc)") >"$out/build-$version.log" 2>&1 || {
    tail -n 40 "$out/build-$version.log" >&2
    echo "build-debs.sh: dpkg-buildpackage failed (whole log: $out/build-$version.log)" >&2
    exit 1
}
# dpkg-buildpackage writes its results beside the source directory.
mv "$out"/src/*_"$version"_*.deb "$out"/src/*_"$version"_*.buildinfo "$out"/src/*_"$version"_*.changes "$out"/
echo "build-debs.sh: built in $((SECONDS - t0)) s:"
(cd "$out" && ls -1 ./*_"$version"_*.deb)

if [ "$lintian" = 1 ]; then
    changes=$(ls "$out"/*_"$version"_*.changes)
    echo "build-debs.sh: lintian $changes"
    set +e
    lintian --fail-on error --display-info "$changes"
    rc=$?
    set -e
    [ $rc -eq 0 ] || { echo "build-debs.sh: lintian reported errors" >&2; exit 1; }
fi
