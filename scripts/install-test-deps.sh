#!/usr/bin/env bash
# Installs every real part the full test suite uses, so that `npm test` skips nothing: Debian's
# prometheus, promtool, alertmanager (amtool), docker-compose and chromium (+ fonts-liberation);
# the OpenTelemetry Collector built from Go modules (needs Go); a Python virtualenv with the pinned
# `mcp` for the proxy's Python e2e and the python/ package (installed into it from this clone). Idempotent: what is present is not reinstalled. Runs apt-get:
# run it as root (a container, CI). `.ci/run` sources it; a person runs
# `bash scripts/install-test-deps.sh` once after `npm ci`.
# Caches outside the clone: ${XDG_CACHE_HOME:-$HOME/.cache}/forkwatch/ (Collector, venv).
set -euo pipefail
root=${root:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"
if ! declare -F log >/dev/null; then log() { printf '\n=== %s: %s\n' "$(date -u +%H:%M:%S)" "$*"; }; fi

log "Debian packages (prometheus, promtool, alertmanager, docker-compose)"
export DEBIAN_FRONTEND=noninteractive
missing=()
for pair in prometheus:prometheus promtool:prometheus prometheus-alertmanager:prometheus-alertmanager docker-compose:docker-compose; do
  cmd=${pair%%:*}; pkg=${pair##*:}
  command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  # policy-rc.d keeps the packages' services from being started: tests start their own.
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  apt-get install -y -qq --no-install-recommends $(printf '%s\n' "${missing[@]}" | sort -u) >/dev/null
  rm -f /usr/sbin/policy-rc.d
fi
# The tests that need these skip where they are absent (a developer's laptop); CI must run them.
for cmd in prometheus promtool amtool docker-compose; do
  command -v "$cmd" >/dev/null 2>&1 || { echo "CI: $cmd is missing after apt-get: its tests would be skipped" >&2; exit 1; }
done
prometheus --version 2>&1 | head -1
promtool --version 2>&1 | head -1

# ---- Chromium for the incident view's browser test (test/e2e/incident-view.test.ts) ----------
# playwright-core drives Debian's chromium (no browser download: the machine has no internet).
log "Debian chromium (incident view browser test)"
# fonts-liberation (a Recommends, named here) so text renders in the screenshots.
if [ ! -x /usr/bin/chromium ] || ! dpkg -s fonts-liberation >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
fi
# The test skips where chromium is absent (a developer's laptop); CI must run it.
[ -x /usr/bin/chromium ] || { echo "CI: /usr/bin/chromium is missing after apt-get: the incident view's browser test would be skipped" >&2; exit 1; }
/usr/bin/chromium --version 2>/dev/null | head -1 || true
# ---- end chromium -------------------------------------------------------------------------------

log "OpenTelemetry Collector from Go modules (collector/otelcol)"
# Self-contained block. Builds the Collector with exactly the components collector/otel/*.yaml
# name, once per hash of go.mod+go.sum+main.go, into ${XDG_CACHE_HOME:-$HOME/.cache}/forkwatch/
# (Go's module and build caches stay in their default places, outside the clone too). The Collector
# e2e test and `npm run bench -- wire` find it by the same hash; they skip without it, so CI fails here.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"; fi
command -v go >/dev/null 2>&1 || { echo "CI: go is missing: the Collector e2e test would be skipped" >&2; exit 1; }
go version
otelcol_bin="$(bash collector/otelcol/build.sh)"
"$otelcol_bin" --version

# ---- Python virtualenv: the proxy's e2e against a Python MCP server (test/e2e/proxy-python.test.ts)
# and the Python instrumentation package python/ (test/python/package.test.ts runs its ruff + pytest) ----
# Built from the pinned test/fixtures/python/requirements.txt (mcp, uvicorn, opentelemetry-sdk/-exporter-
# otlp-proto-http/-instrumentation/-distro, fastmcp 4.x, pytest, ruff, hatchling) into a cache keyed by the hash of
# requirements.txt followed by python/pyproject.toml (outside the clone, reused across runs); the tests
# find it at the same path (test/e2e/helpers/python-venv.ts). The package itself is reinstalled from
# this clone on every run (non-editable, no deps, no build isolation: a few seconds), so the venv's
# copy and its `opentelemetry_instrumentor` entry point match the sources under test.
log "Python virtualenv (mcp from PyPI, the python/ package)"
py_req="$root/test/fixtures/python/requirements.txt"
py_hash=$(cat "$py_req" "$root/python/pyproject.toml" | sha256sum | cut -c1-12)
py_venv="${XDG_CACHE_HOME:-$HOME/.cache}/forkwatch/venv-$py_hash"
if [ ! -x "$py_venv/bin/python" ] || ! "$py_venv/bin/python" -c 'import mcp, uvicorn, pytest, opentelemetry.sdk, fastmcp' >/dev/null 2>&1; then
  command -v python3 >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null; }
  python3 -m venv "$py_venv" 2>/dev/null || { apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-venv >/dev/null && rm -rf "$py_venv" && python3 -m venv "$py_venv"; }
  "$py_venv/bin/pip" install -q --disable-pip-version-check -r "$py_req"
fi
"$py_venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation --force-reinstall "$root/python"
"$py_venv/bin/python" -c 'import mcp, uvicorn, pytest, fastmcp, forkwatch_instrumentation' || { echo "CI: the Python virtualenv $py_venv lacks mcp, fastmcp or the python/ package: Python tests would be skipped" >&2; exit 1; }
export FORKWATCH_PYTHON_VENV="$py_venv"
# ---- end Python virtualenv ----
