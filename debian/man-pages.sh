#!/bin/sh
# rapidrpcd(8) and rapidrpc(1) from the programs' own --help, so that they
# say what the binaries do:
#
#   man-pages.sh BIN_DIR VERSION OUT_DIR
#
# help2man reads the top-level --help; rapidrpc's subcommands (call, bench)
# have options of their own, added as sections of their own, verbatim.
set -eu
bin=$1 version=$2 out=$3
mkdir -p "$out"

# A program's --help as a roff block printed as it is: backslashes escaped,
# a line starting with a dot or a quote kept from being read as a request.
verbatim() {
  echo ".nf"
  "$@" | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
  echo ".fi"
}

cat > "$out/rapidrpcd.h2m" <<'END'
[FILES]
.TP
.I /etc/rapidrpcd/rapidrpcd.toml
The settings the service unit (rapidrpcd.service) runs the daemon with: each
key is a long option's name, and the command line wins over it.
.TP
.I /var/log/rapidrpcd/
The access log's folder (--access-log), rotated by logrotate.
[SIGNALS]
SIGTERM and SIGINT drain (the calls in flight finish, up to --drain-timeout)
and stop; SIGHUP reads the config file again, re-opens the access log and,
with --python, imports the module anew; SIGUSR1 only re-opens the access
log; SIGUSR2 starts the installed binary, which takes over the sockets.
[SEE ALSO]
rapidrpc(1), /usr/share/doc/rapidrpcd (operations.md: signals, metrics,
the config file, systemd; python.md with python3-rapidrpc).
END
help2man --no-info --section 8 --version-string "$version" \
  --name "fast XML-RPC and JSON-RPC server" \
  --include "$out/rapidrpcd.h2m" --output "$out/rapidrpcd.8" "$bin/rapidrpcd"

{
  for command in call bench; do
    echo "[COMMAND: $command]"
    verbatim "$bin/rapidrpc" "$command" --help
  done
  cat <<'END'
[SEE ALSO]
rapidrpcd(8), /usr/share/doc/rapidrpcd/cli.md
END
} > "$out/rapidrpc.h2m"
help2man --no-info --section 1 --version-string "$version" \
  --name "call an XML-RPC or JSON-RPC server, or load it and measure" \
  --include "$out/rapidrpc.h2m" --output "$out/rapidrpc.1" "$bin/rapidrpc"
