#!/usr/bin/env bash
# The test install.consumer: installs the build into a temporary prefix,
# builds the programs of this folder against it twice, with find_package
# (CMAKE_PREFIX_PATH) and with `pkg-config --cflags --libs`, and runs each
# (consumer starts a server and calls it); examples/03_typed is built too.
# With --installed instead of a build folder, the same against what is
# installed in the system's own folders (the librapidrpc-dev package:
# debian/tests/consumer).
#
#   check.sh BUILD_DIR|--installed WORK_DIR CXX GENERATOR
set -euo pipefail
build=$1 work=$2 cxx=$3 generator=$4
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
launcher=()
[[ -n ${CMAKE_CXX_COMPILER_LAUNCHER:-} ]] && launcher=("$CMAKE_CXX_COMPILER_LAUNCHER")

rm -rf "$work"
mkdir -p "$work"
prefix=/usr
if [[ $build != --installed ]]; then
  prefix="$work/prefix"
  echo "== cmake --install $build --prefix $prefix"
  cmake --install "$build" --prefix "$prefix" >"$work/install.log"
fi
for f in rapidrpc/rapidrpc.hpp rapidrpc/server.hpp rapidrpc/convert.hpp rapidrpc/demo.hpp; do
  [[ -f $prefix/include/$f ]] || { echo "check: $f is not installed" >&2; exit 1; }
done

echo "== find_package(rapidrpc CONFIG) with CMAKE_PREFIX_PATH=$prefix"
cmake -S "$here" -B "$work/cmake" -G "$generator" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/cmake.log"
cmake --build "$work/cmake"
"$work/cmake/consumer"
"$work/cmake/demo_consumer"

pc=""
if [[ $build != --installed ]]; then
  pc=$(dirname "$(find "$prefix" -name rapidrpc.pc -print -quit)")
  export PKG_CONFIG_PATH="$pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
fi
echo "== pkg-config --cflags --libs rapidrpc${pc:+ (PKG_CONFIG_PATH=$pc)}"
pkg-config --cflags --libs rapidrpc
mkdir -p "$work/pkg-config"
# shellcheck disable=SC2046  # pkg-config's output is a list of words
"${launcher[@]}" "$cxx" -std=c++20 "$here/consumer.cpp" -o "$work/pkg-config/consumer" \
  $(pkg-config --cflags --libs rapidrpc)
# shellcheck disable=SC2046
"${launcher[@]}" "$cxx" -std=c++20 "$here/demo_consumer.cpp" -o "$work/pkg-config/demo_consumer" \
  $(pkg-config --cflags --libs rapidrpc-demo)
"$work/pkg-config/consumer"
"$work/pkg-config/demo_consumer"
echo "== both builds ran"
