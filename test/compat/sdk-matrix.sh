#!/usr/bin/env bash
# The instrumentation's compatibility matrix (the contrib packages' .tav.yml job): runs its tests
# (test/instrumentation, then the seed e2e) against the oldest and the newest version of each peer
# range in packages/instrumentation/package.json: the MCP SDK 1.x, @opentelemetry/api, and the
# SDK 2.x packages. The repository's node_modules is never touched: each combination runs in a
# scratch directory whose node_modules links every package to the repository's, except the ones
# under test, installed (once per version, with --ignore-scripts) under
# ${XDG_CACHE_HOME:-$HOME/.cache}/forkwatch/compat/. Exit status: non-zero if any combination fails.
#   bash test/compat/sdk-matrix.sh                                    # the default combinations
#   bash test/compat/sdk-matrix.sh 'sdk=1.31.0 api=1.4.1'             # one combination of your own
# A combination names `sdk`, `api`, `client`, `server`, `node` (the @modelcontextprotocol/*
# packages) and `core`; what it does not name keeps the repository's locked version.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/forkwatch/compat
mkdir -p "$cache"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/forkwatch-compat.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
started=$SECONDS

# The two ends of each range the package.json declares (v2 ranges hold one release today: the
# oldest and newest are then the same, and the combination says so).
DEFAULT_COMBOS=(
  'sdk=1.30.0 api=1.3.0 client=2.4.0 server=2.4.0 node=2.1.2 core=2.4.0'
  'sdk=1.32.2 api=1.10.0 client=2.4.0 server=2.4.0 node=2.1.2 core=2.4.0'
)
# COMPAT_TESTS replaces the list (e.g. one file while investigating); COMPAT_E2E_TESTS (default the
# seed e2e: both guards and both instrumentations end to end) runs after them, alone, since it
# paces a real partition and reap; set it to ' ' to skip it.
TESTS=${COMPAT_TESTS:-$(cd "$root" && find test/instrumentation -name '*.test.ts' | sort)}
E2E_TESTS=${COMPAT_E2E_TESTS:-test/e2e/seed.test.ts}

pkg_of() {
  case $1 in
    sdk) echo @modelcontextprotocol/sdk ;;
    client | server | node | core) echo "@modelcontextprotocol/$1" ;;
    api) echo @opentelemetry/api ;;
    *) echo "compat: unknown package key '$1' (sdk, api, client, server, node, core)" >&2; return 1 ;;
  esac
}

# Installs PKG@VERSION (with the repository's zod, so schemas the tests build are the SDK's own
# zod's) into the cache, once; prints its directory.
install_cached() {
  local pkg=$1 version=$2 dir zod
  zod=$(node -p "require('$root/node_modules/zod/package.json').version")
  dir="$cache/${pkg//\//+}@$version+zod@$zod"
  if [ ! -f "$dir/node_modules/$pkg/package.json" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    echo '{"private":true}' > "$dir/package.json"
    npm install --prefix "$dir" --no-save --no-package-lock --ignore-scripts --no-audit --no-fund --loglevel=error \
      "$pkg@$version" "zod@$zod" >/dev/null
  fi
  local got
  got=$(node -p "require('$dir/node_modules/$pkg/package.json').version")
  [ "$got" = "$version" ] || { echo "compat: asked for $pkg@$version, the cache has $got" >&2; return 1; }
  echo "$dir"
}

run_combo() {
  local combo=$1 dir="$scratch/run" key version pkg from
  rm -rf "$dir" && mkdir -p "$dir/node_modules" "$dir/packages/instrumentation"
  # What the tests read, copied (not linked: Node resolves a linked file's imports from where it
  # really lives, which would be the repository's node_modules).
  cp -R "$root/test" "$root/src" "$dir/"
  cp "$root"/package.json "$root"/tsconfig*.json "$dir/"
  cp -R "$root/packages/instrumentation/src" "$root/packages/instrumentation/package.json" "$dir/packages/instrumentation/"
  for entry in "$root"/node_modules/* "$root"/node_modules/.bin; do
    local name
    name=$(basename "$entry")
    if [[ $name == @* ]]; then
      mkdir -p "$dir/node_modules/$name"
      for p in "$entry"/*; do ln -s "$p" "$dir/node_modules/$name/"; done
    else
      ln -s "$entry" "$dir/node_modules/$name"
    fi
  done
  rm -f "$dir/node_modules/@forkwatch/instrumentation"
  ln -s "$dir/packages/instrumentation" "$dir/node_modules/@forkwatch/instrumentation"
  local zod_from=''
  for kv in $combo; do
    key=${kv%%=*}; version=${kv#*=}
    pkg=$(pkg_of "$key")
    from=$(install_cached "$pkg" "$version")
    rm -rf "$dir/node_modules/$pkg"
    ln -s "$from/node_modules/$pkg" "$dir/node_modules/$pkg"
    [ "$key" = sdk ] && zod_from=$from
  done
  # The 1.x SDK under test and the tests share one zod, as in an app where npm deduplicates it.
  if [ -n "$zod_from" ]; then
    rm -f "$dir/node_modules/zod"
    ln -s "$zod_from/node_modules/zod" "$dir/node_modules/zod"
  fi
  for kv in $combo; do
    pkg=$(pkg_of "${kv%%=*}")
    local got
    got=$(cd "$dir" && node -p "require('./node_modules/$pkg/package.json').version")
    [ "$got" = "${kv#*=}" ] || { echo "compat: $pkg resolves to $got, not ${kv#*=}" >&2; return 1; }
  done
  # --preserve-symlinks: every package resolves its imports from the scratch node_modules, so the
  # OpenTelemetry SDK the tests use shares the api under test (one copy, as in an app), and the
  # package under test gets the repository's copy of any dependency the repository has.
  local api_seen
  api_seen=$(cd "$dir" && node --preserve-symlinks -e "
    const r = require('node:module').createRequire(require.resolve('@opentelemetry/sdk-trace-base'));
    const main = r.resolve('@opentelemetry/api'), at = main.lastIndexOf('/@opentelemetry/api/') + '/@opentelemetry/api'.length;
    console.log(JSON.parse(require('node:fs').readFileSync(main.slice(0, at) + '/package.json', 'utf8')).version)")
  printf '\n=== %s: instrumentation tests on %s (the OpenTelemetry SDK sees api %s)\n' "$(date -u +%H:%M:%S)" "$combo" "$api_seen"
  local node_test=(node --preserve-symlinks --conditions=forkwatch-source --import tsx --test --test-reporter=dot)
  # shellcheck disable=SC2086
  (cd "$dir" && "${node_test[@]}" --test-concurrency=2 $TESTS) || return 1
  if [ -n "$E2E_TESTS" ]; then
    # shellcheck disable=SC2086
    (cd "$dir" && "${node_test[@]}" --test-concurrency=1 $E2E_TESTS) || return 1
  fi
}

combos=("$@")
[ ${#combos[@]} -gt 0 ] || combos=("${DEFAULT_COMBOS[@]}")
failed=()
for combo in "${combos[@]}"; do
  run_combo "$combo" || failed+=("$combo")
done
printf '\n=== compat matrix: %d combination(s) in %d s\n' "${#combos[@]}" $((SECONDS - started))
if [ ${#failed[@]} -gt 0 ]; then
  printf 'compat: FAILED on %s\n' "${failed[@]}" >&2
  exit 1
fi
echo 'compat: every combination passed'
