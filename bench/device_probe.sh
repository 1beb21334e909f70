#!/usr/bin/env bash
# The probe on the lent H200, for the issue's real-hardware check and the fixtures. Run from the repo root
# after installing FA4 + the CUTLASS DSL into /tmp/site (../shared/gpu/README.md), in the same command:
#   source .gpu/part2/install.sh && bash bench/device_probe.sh
# install.sh exports PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages (the .pth fix by hand);
# this script also runs without that dsl_packages entry to record the .pth diagnosis.
# Writes into "$OUT": probe-h200.json / .txt / .md (with the fix), probe-h200-nopth.json / .txt (without),
# timings.txt (cold vs cached probe), bench-h200.txt (bench/bench_probe.py), pytest-gpu.txt (GPU tests).
set -uo pipefail
: "${OUT:?set OUT to the output directory}"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1

with_pth=${PYTHONPATH:-}
dsl=/tmp/site/nvidia_cutlass_dsl/dsl_packages
case ":$with_pth:" in
  *":$dsl:"*) ;;
  *) [ -d "$dsl" ] && with_pth="$dsl${with_pth:+:$with_pth}" ;;
esac
without_pth=$(printf '%s' "$with_pth" | tr ':' '\n' | grep -v '/dsl_packages$' | paste -sd: -)
export XDG_CACHE_HOME
XDG_CACHE_HOME=$(mktemp -d)  # a cold cache: the first run really imports everything

probe() {  # probe PYTHONPATH-for-the-libraries ARGS...
  local libs=$1; shift
  PYTHONPATH="$repo${libs:+:$libs}" python3 -m attn_preflight probe "$@"
}
stamp() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(stamp)" 'BEGIN { printf "%.2f", b - a }'; }

{
  echo "python: $(python3 --version 2>&1); PYTHONPATH with fix: $with_pth; without: $without_pth"
  t0=$(stamp); probe "$with_pth" --format json -o "$OUT/probe-h200.json"; rc=$?
  echo "probe (cold cache, all imports):    $(since "$t0") s, exit $rc"
  t0=$(stamp); probe "$with_pth" > "$OUT/probe-h200.txt"; rc=$?
  echo "probe (cached imports, table):      $(since "$t0") s, exit $rc"
  t0=$(stamp); probe "$with_pth" --no-imports --format json > /dev/null; rc=$?
  echo "probe --no-imports:                 $(since "$t0") s, exit $rc"
  probe "$with_pth" --format markdown -o "$OUT/probe-h200.md"
  probe "$without_pth" --format json -o "$OUT/probe-h200-nopth.json"; echo "probe without the .pth fix: exit $?"
  probe "$without_pth" > "$OUT/probe-h200-nopth.txt"
} > "$OUT/timings.txt" 2>&1

if [ "${1:-}" = "--no-bench" ]; then  # bench/device_final.sh runs the benches and GPU tests itself
  cat "$OUT/timings.txt"; exit 0
fi
PYTHONPATH="$repo${with_pth:+:$with_pth}" python3 bench/bench_probe.py --runs 3 > "$OUT/bench-h200.txt" 2>&1

if python3 -c "import pytest" 2>/dev/null; then
  PYTHONPATH="$repo${with_pth:+:$with_pth}" python3 -m pytest -q -m gpu tests/test_probe_gpus.py \
    > "$OUT/pytest-gpu.txt" 2>&1
else
  echo "pytest is not installed here" > "$OUT/pytest-gpu.txt"
fi
cat "$OUT/timings.txt" "$OUT/bench-h200.txt"
for report in "$OUT/probe-h200.txt" "$OUT/probe-h200-nopth.txt"; do sed -n '1,/^Host$/p' "$report"; done
