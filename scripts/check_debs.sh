#!/usr/bin/env bash
# Checks the Debian packages as an administrator meets them, in a fresh
# minimal Debian 12 (debootstrap --variant=minbase, in a folder of its own,
# this machine's apt sources): builds them (scripts/build-debs.sh), and a
# second set of a higher version, then in that system
#   1. `apt-get install ./*.deb` pulls only Debian's packages;
#   2. the packages' own tests (debian/tests: rapidrpcd with its installed
#      config answers calls; the drop-in, `from rapidrpc import
#      SimpleXMLRPCServer`, with /usr/bin/python3; rapidrpcd --python
#      serving a module; a program built against librapidrpc-dev with CMake
#      and pkg-config) pass there;
#   3. an upgrade to the higher version keeps an administrator's change to
#      the conffile /etc/rapidrpcd/rapidrpcd.toml;
#   4. `apt-get purge` leaves no file of the packages behind (nor the Python
#      package's compiled files, nor the service's logs).
# Run as root (debootstrap and chroot). The minimal system is made once and
# kept as a tarball in ~/.cache/rapidrpc (RAPIDRPC_CACHE_DIR).
#
#   scripts/check_debs.sh [--debs DIR]   (DIR: packages already built, and
#                                         DIR-upgrade the higher version's)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
debs=""
while (($#)); do
  case "$1" in
    --debs) debs=$(realpath "$2"); shift 2 ;;
    *) echo "check_debs.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "check_debs.sh: run as root (debootstrap, chroot)" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
command -v debootstrap >/dev/null || { apt-get update -q; apt-get install -y -q --no-install-recommends debootstrap; }

# The packages, and the same a version higher (a fourth number).
version=$(sed -n 's/^project(rapidrpc VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
IFS=. read -r -a parts <<<"$version"
if ((${#parts[@]} == 4)); then
  parts[3]=$((parts[3] + 1))
else
  parts+=(1)
fi
higher=$(IFS=.; echo "${parts[*]}")
if [[ -z $debs ]]; then
  debs="$root/build-debs"
  bash "$root/scripts/build-debs.sh" --out "$debs"
  bash "$root/scripts/build-debs.sh" --out "$debs-upgrade" --version "$higher"
fi

# A fresh minimal Debian 12 from the cached tarball (made on first use).
cache="${RAPIDRPC_CACHE_DIR:-$HOME/.cache/rapidrpc}"
base="$cache/debian12-minbase.tar"
if [[ ! -f $base ]]; then
  mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  mirror=${mirror:-http://deb.debian.org/debian}
  echo "check_debs: debootstrap --variant=minbase bookworm from $mirror (once; kept in $base)"
  made=$(mktemp -d)
  debootstrap --variant=minbase bookworm "$made" "$mirror" >"$made.log" 2>&1 ||
    { cat "$made.log"; exit 1; }
  mkdir -p "$cache"
  tar -C "$made" -cf "$base.new" . && mv "$base.new" "$base"
  rm -rf "$made" "$made.log"
fi
sys=$(mktemp -d "${TMPDIR:-/tmp}/rapidrpc-debian12.XXXXXX")
cleanup() {
  umount "$sys/proc" 2>/dev/null || true
  rm -rf "$sys"
}
trap cleanup EXIT
tar -C "$sys" -xf "$base"
cp /etc/resolv.conf "$sys/etc/resolv.conf"
# The machine's apt sources (Debian's), as an administrator's system has.
rm -f "$sys/etc/apt/sources.list"
cp -r /etc/apt/sources.list.d/. "$sys/etc/apt/sources.list.d/" 2>/dev/null || true
[[ -f /etc/apt/sources.list ]] && cp /etc/apt/sources.list "$sys/etc/apt/sources.list"
mount -t proc proc "$sys/proc"
mkdir -p "$sys/debs" "$sys/debs-upgrade" "$sys/src"
cp "$debs"/*.deb "$sys/debs/"
cp "$debs-upgrade"/*.deb "$sys/debs-upgrade/"
git -C "$root" archive HEAD | tar -C "$sys/src" -x
in_sys() { chroot "$sys" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  DEBIAN_FRONTEND=noninteractive "$@"; }

in_sys apt-get update -q >/dev/null
echo "== 1. apt-get install ./*.deb: what it pulls"
in_sys sh -c 'apt-get install -s -q ./debs/*.deb' | grep '^Inst ' >"$sys/pulled"
ours=(rapidrpcd librapidrpc-dev python3-rapidrpc)
ours_re=$(IFS='|'; echo "${ours[*]}")
not_debian=$(grep -v -E "^Inst ($ours_re) " "$sys/pulled" | grep -v -E '\(.* Debian[:-]' || true)
echo "$(wc -l <"$sys/pulled") packages, $(grep -c -E "^Inst ($ours_re) " "$sys/pulled") of them ours"
[[ -z $not_debian ]] || { echo "check_debs: not from Debian:" >&2; echo "$not_debian" >&2; exit 1; }
in_sys sh -c 'apt-get install -y -q ./debs/*.deb' >"$sys/install.log" 2>&1 ||
  { cat "$sys/install.log"; exit 1; }
in_sys dpkg-query -W -f='${Package} ${Version}\n' "${ours[@]}"

echo "== 2. the packages' own tests (debian/tests), in the fresh system"
read -r -a deps <<<"$(sed -n 's/^Depends: //p' "$root/debian/tests/control" | tr ',' '\n' |
  grep -v -E "^ *($ours_re) *$" | xargs)"
in_sys apt-get install -y -q --no-install-recommends "${deps[@]}" >"$sys/test-deps.log" 2>&1 ||
  { cat "$sys/test-deps.log"; exit 1; }
for t in $(sed -n 's/^Tests: //p' "$root/debian/tests/control"); do
  echo "-- debian/tests/$t"
  if ! in_sys sh -c "cd /src && AUTOPKGTEST_TMP=\$(mktemp -d) ./debian/tests/$t" >"$sys/test.log" 2>&1; then
    cat "$sys/test.log"
    echo "check_debs: debian/tests/$t failed" >&2
    exit 1
  fi
  tail -1 "$sys/test.log"
done

echo "== 3. an upgrade to $higher keeps a changed conffile"
conf=/etc/rapidrpcd/rapidrpcd.toml
sed -i 's/^port = 6677$/port = 7788  # changed by the administrator/' "$sys$conf"
grep -q "changed by the administrator" "$sys$conf" || { echo "check_debs: no port line in $conf" >&2; exit 1; }
in_sys sh -c 'apt-get install -y -q ./debs-upgrade/*.deb' >"$sys/upgrade.log" 2>&1 ||
  { cat "$sys/upgrade.log"; exit 1; }
in_sys dpkg-query -W -f='${Package} ${Version}\n' "${ours[@]}"
for p in "${ours[@]}"; do
  [[ $(in_sys dpkg-query -W -f='${Version}' "$p") == "$higher" ]] ||
    { echo "check_debs: $p was not upgraded to $higher" >&2; exit 1; }
done
grep -q "changed by the administrator" "$sys$conf" ||
  { echo "check_debs: the upgrade lost the change to $conf" >&2; exit 1; }
in_sys rapidrpcd --config "$conf" --print-config | grep -q '^port = 7788$'
echo "$conf kept its change (port = 7788)"

echo "== 4. apt-get purge leaves nothing behind"
# The service's log folder, as systemd makes it for a DynamicUser= service.
mkdir -p "$sys/var/log/private/rapidrpcd" && ln -s private/rapidrpcd "$sys/var/log/rapidrpcd"
echo "a line" >"$sys/var/log/private/rapidrpcd/access.log"
in_sys sh -c 'for p in "$@"; do dpkg -L "$p"; done' sh "${ours[@]}" | sort -u >"$sys/package-files"
in_sys apt-get purge -y -q "${ours[@]}" >"$sys/purge.log" 2>&1 ||
  { cat "$sys/purge.log"; exit 1; }
left=$(while read -r f; do if [[ -e $sys$f && ! -d $sys$f ]]; then echo "$f"; fi; done <"$sys/package-files")
# Nor anything else of theirs: a compiled module, a log, a unit's link, the
# config folder, the maintainer scripts' state.
left+=$(cd "$sys" && find . -xdev \( -path ./proc -o -path ./src -o -path ./debs -o -path ./debs-upgrade \
  -o -path ./var/cache/apt -o -path ./tmp \) -prune -o -name '*rapidrpc*' -print)
[[ -z $left ]] || { echo "check_debs: left behind by the purge:" >&2; echo "$left" >&2; exit 1; }
echo "no file of the packages left ($(wc -l <"$sys/package-files") listed before the purge)"
echo "check_debs: all passed"
