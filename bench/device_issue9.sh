#!/usr/bin/env bash
# Issue 9's real-hardware check on the lent H200, in one call after the FA4 + CUTLASS DSL install
# (../shared/gpu/README.md; part1 unpacked by the call before):
#   source .gpu/part2/install.sh && bash bench/device_issue9.sh
# smoke (the runner records, the face judges against rules/kernels/limits.py), check --smoke,
# the start-up ratios and the GPU tests; everything under /tmp/issue9, packed into "$OUT/issue9.tgz".
set -uo pipefail
: "${OUT:?set OUT to the output directory}"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1
work=/tmp/issue9
mkdir -p "$work"
export PYTHONUNBUFFERED=1 PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
app="python3 -m attn_preflight"
step() {  # step NAME TIMEOUT COMMAND...
  local name=$1 limit=$2; shift 2
  timeout -k 10 "$limit" "$@" > "$work/$name.txt" 2>&1
  echo "$name exit $?" >> "$work/exits.txt"
}
step smoke-quick 150 $app smoke --level quick --format json -o "$work/smoke-quick.json"
step smoke-quick-table 120 $app smoke --level quick
step smoke-fa4-fp8 120 $app smoke --kernel fa4-dense --dtype fp8 --format json -o "$work/smoke-fa4-fp8.json"
step check-smoke-fp8 150 $app check --smoke --model llama-3.1-8b --attention-backend fa4 --kv-cache-dtype fp8_e4m3
step startup 120 python3 bench/bench_startup.py --runs 21 --json
step pytest-gpu 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests
tar -czf "$OUT/issue9.tgz" -C /tmp issue9
cat "$work/exits.txt"; tail -n 4 "$work"/startup.txt "$work"/pytest-gpu.txt "$work"/smoke-quick-table.txt
