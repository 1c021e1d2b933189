#!/usr/bin/env bash
# Sets everything up, then runs rapidrpcd in the foreground (the demo service
# on localhost:6677 unless told otherwise). Options go to rapidrpcd.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
exec "${RAPIDRPC_BUILD_DIR:-$root/build}/bin/rapidrpcd" "$@"
