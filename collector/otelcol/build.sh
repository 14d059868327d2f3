#!/usr/bin/env bash
# Builds the Collector of collector/otelcol once into a cache outside the clone and prints the
# binary's path. The cache key is a hash of go.mod, go.sum and main.go: a change to any of them
# builds a new binary; an unchanged tree reuses the old one. Go's module and build caches stay in
# their default places (also outside the clone), so a rebuild after a small change is quick.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v go >/dev/null || { echo "build.sh: go is not installed" >&2; exit 1; }
key="$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-16)"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/forkwatch"
bin="$dir/otelcol-$key"
if [[ ! -x "$bin" ]]; then
  mkdir -p "$dir"
  # -trimpath: the binary does not depend on where the clone is; the temp name then rename keeps
  # a half-written binary from ever being found by a test.
  (cd "$here" && go build -trimpath -o "$bin.tmp.$$" .)
  mv "$bin.tmp.$$" "$bin"
fi
echo "$bin"
