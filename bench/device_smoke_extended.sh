#!/usr/bin/env bash
# FA4's extended arguments on the lent H200 (issue 11): learnable sinks, a custom score_mod and absorbed-MLA qv,
# through `check --smoke` at real models' shapes and `smoke --kernel` quick cases. Second transfer of the FA4
# install (../shared/gpu/README.md):  source .gpu/part2/install.sh && bash bench/device_smoke_extended.sh
# Expected on SM90 (from the flash-attn-4 4.0.0b36 wheel, not from this tool): sinks and score_mod run and match
# the fp32 reference; qv raises ('only support Blackwell arch with qv' or the SM90 head-dim assert).
# Two calls to the same warm machine: `... && bash bench/device_smoke_extended.sh check`, then
# `export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages && bash bench/device_smoke_extended.sh sweep`.
# Each packs its files into "$OUT/smoke-extended-MODE.tar.gz".
set -uo pipefail
: "${OUT:?set OUT to the output directory}"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
export XDG_CACHE_HOME=/tmp/attn-preflight-smoke-extended
work=/tmp/smoke-extended
mkdir -p "$work"
app="python3 -m attn_preflight"
run() {  # run NAME LIMIT ARGS...
  local name=$1 limit=$2; shift 2
  { echo "\$ attn-preflight $*"; timeout "$limit" $app "$@"; echo "exit $?"; } > "$work/$name.txt" 2>&1
}
mode=${1:?check or sweep}
if [[ $mode == check ]]; then
  run gpt-oss-sinks 170 check --smoke --format json --model gpt-oss-20b --attention-backend fa4
  run llama-score-mod 150 check --smoke --format json --model llama-3.1-8b --attention-backend fa4 --feature score_mod
  run deepseek-qv 150 check --smoke --format json --model deepseek-v3 --attention-backend fa4 --tp 8
else
  run kernels 500 smoke --format json --kernel fa4-dense --kernel fa4-paged --level full --timeout 120
fi
tar -czf "$OUT/smoke-extended-$mode.tar.gz" -C "$work" .
for f in "$work"/*.txt; do echo "== $f"; tail -c 1500 "$f"; done
