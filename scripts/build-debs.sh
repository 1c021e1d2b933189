#!/usr/bin/env bash
# Builds rapidrpc's Debian packages (debian/: rapidrpcd, librapidrpc-dev,
# python3-rapidrpc) in a clean clone of this repository's HEAD, as
# `dpkg-buildpackage -us -uc -b` there, and checks them with lintian: an
# error fails the build, the warnings are printed. Installs what the build
# needs from Debian's packages first (debian/control's Build-Depends), as
# root or through sudo.
#
#   scripts/build-debs.sh [--out DIR] [--version VERSION]
#     --out DIR          where the .deb files go (default: build-debs/)
#     --version VERSION  build the packages as this version instead (the
#                        clone's CMakeLists.txt and debian/changelog say it):
#                        what scripts/check_debs.sh upgrades to
#
# Uncommitted changes are not in the packages: the clone is of HEAD.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/build-debs"
version=""
while (($#)); do
  case "$1" in
    --out) out=$(realpath -m "$2"); shift 2 ;;
    --version) version=$2; shift 2 ;;
    *) echo "build-debs.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

sudo=()
[[ $(id -u) -ne 0 ]] && sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
need=(dpkg-dev debhelper lintian git)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})) || ! (cd "$root" && dpkg-checkbuilddeps >/dev/null 2>&1); then
  echo "build-debs: installing ${missing[*]} and the Build-Depends of debian/control"
  "${sudo[@]}" apt-get update -q
  ((${#missing[@]})) && "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
  "${sudo[@]}" apt-get build-dep -y -q --no-install-recommends "$root"
fi

if [[ -n $(git -C "$root" status --porcelain --untracked-files=no) ]]; then
  echo "build-debs: uncommitted changes are left out: the packages are built from HEAD" >&2
fi
# Always the same folder, so that a compiler cache serves the next build
# (the compiler is given the clone's path: -ffile-prefix-map).
work="${TMPDIR:-/tmp}/rapidrpc-debs"
rm -rf "$work"
mkdir -p "$work"
git clone -q "$root" "$work/rapidrpc"
cd "$work/rapidrpc"
if [[ -n $version ]]; then
  sed -i "s/^project(rapidrpc VERSION [0-9.]*/project(rapidrpc VERSION $version/" CMakeLists.txt
  {
    echo "rapidrpc ($version) unstable; urgency=medium"
    echo
    echo "  * Built as $version by scripts/build-debs.sh --version."
    echo
    echo " -- $(dpkg-parsechangelog -S Maintainer)  $(date -R)"
    echo
    cat debian/changelog
  } > debian/changelog.new
  mv debian/changelog.new debian/changelog
fi

jobs=$(nproc)
export DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}"
# The compiler cache of the project's other builds (scripts/setup.sh), named
# here: debhelper gives the build a HOME of its own, where ccache would find
# an empty cache every time.
if command -v ccache >/dev/null && [[ ${RAPIDRPC_CCACHE:-1} != 0 ]]; then
  CCACHE_DIR=$(ccache -k cache_dir)
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR="$work/rapidrpc" CCACHE_NOHASHDIR=1 CCACHE_DIR
fi
start=$SECONDS
dpkg-buildpackage -us -uc -b
echo "build-debs: dpkg-buildpackage took $((SECONDS - start)) s"

changes=$(ls "$work"/rapidrpc_*.changes)
echo "build-debs: lintian $(basename "$changes")"
lintian --fail-on error "$changes"

# The packages, without the debug symbols' (rapidrpcd-dbgsym, 28 MB, left
# in the work folder): `apt-get install ./build-debs/*.deb` installs what
# runs.
rm -rf "$out"
mkdir -p "$out"
for deb in "$work"/*.deb; do
  [[ $deb == *-dbgsym_* ]] || cp "$deb" "$out"/
done
ls -l "$out"
echo "build-debs: the debug symbols: $(ls "$work"/*-dbgsym_*.deb)"
