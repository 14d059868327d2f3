#!/usr/bin/env bash
# Runs the instrumentation's tests (unit, the seed e2e, zero-code) against each MCP SDK version
# given, then puts the locked version back. CI runs it with the oldest and newest of the peer
# range in packages/instrumentation/package.json (the contrib packages' .tav.yml job).
#   bash test/compat/sdk-matrix.sh 1.24.0 1.32.2
set -euo pipefail
cd "$(dirname "$0")/../.."
locked=$(node -p "require('./package-lock.json').packages['node_modules/@modelcontextprotocol/sdk'].version")
restore() { npm install --no-save --no-audit --no-fund --ignore-scripts "@modelcontextprotocol/sdk@$locked" >/dev/null 2>&1 || true; }
trap restore EXIT
for v in "$@"; do
  printf '\n=== instrumentation tests on @modelcontextprotocol/sdk %s\n' "$v"
  npm install --no-save --no-audit --no-fund --ignore-scripts "@modelcontextprotocol/sdk@$v" >/dev/null
  got=$(node -p "require('./node_modules/@modelcontextprotocol/sdk/package.json').version")
  [ "$got" = "$v" ] || { echo "compat: asked for SDK $v, node_modules has $got" >&2; exit 1; }
  node --conditions=forkwatch-source --import tsx --test --test-concurrency=2 \
    $(find test/instrumentation -name '*.test.ts' | sort) test/e2e/seed.test.ts test/e2e/zero-code.test.ts
done
