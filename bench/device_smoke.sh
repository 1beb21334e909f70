#!/usr/bin/env bash
# smoke on the lent H200: the issue's real-hardware check, its fixtures and its speed targets. Run from the repo
# root in the same command as the FA4 + CUTLASS DSL install (../shared/gpu/README.md, second transfer):
#   source .gpu/part2/install.sh && bash bench/device_smoke.sh
# Every step has a time limit and writes its files before the next starts, so a cut-short run still returns
# what it finished. Total budget SMOKE_BUDGET_S (default 480 s; the install takes the rest of a 600 s call).
# Into "$OUT":
#   device_smoke.log           each step: start, exit status, seconds
#   env.txt                    GPU, driver, python, torch, installed kernel libraries
#   bench-smoke.txt            bench/bench_smoke.py: cold vs warm `smoke --level quick` (targets 60 s / 15 s)
#   bench/                     its cold and warm smoke JSON and progress logs
#   smoke-h200-quick.json      the cold quick run: copy to tests/fixtures/ (tests/test_smoke_h200.py reads it)
#   smoke-h200-quick.txt       the same, as a table (a warm run)
#   smoke-h200-fa4-fp8.json    `smoke --kernel fa4-dense --dtype fp8`: copy to tests/fixtures/ too (+ .log)
#   pytest-gpu-smoke.txt       the GPU tests (SDPA x4 on the GPU; an illegal memory access isolated)
#   smoke-h200-full.json/.log  `--level full` for SDPA, FA4, CuTe DSL, Triton, if time is left
set -uo pipefail
: "${OUT:?set OUT to the output directory}"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
export XDG_CACHE_HOME=/tmp/attn-preflight-smoke-cache  # outside $OUT: compile caches stay on the machine
rm -rf "$XDG_CACHE_HOME"
budget=${SMOKE_BUDGET_S:-480}
begin=$(date +%s)
log="$OUT/device_smoke.log"

left() { echo $(( budget - ($(date +%s) - begin) )); }

step() {  # step NAME LIMIT_S OUTPUT_FILE COMMAND...: run under `timeout`, never past the budget
  local name=$1 limit=$2 output=$3; shift 3
  local have; have=$(left)
  (( have < limit )) && limit=$have
  if (( limit < 30 )); then
    echo "$(date +%T) skipped $name: ${have} s of the budget left" >> "$log"
    return 0
  fi
  echo "$(date +%T) start $name (limit ${limit} s): $*" >> "$log"
  local t0; t0=$(date +%s)
  timeout -k 15 "$limit" "$@" > "$output" 2>&1
  local rc=$?
  echo "$(date +%T) end $name: exit $rc$( ((rc == 124)) && echo ' (timed out)'), $(( $(date +%s) - t0 )) s" >> "$log"
  return 0
}

environment() {
  date -u
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv 2>&1
  python3 --version
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version())" 2>&1
  python3 -m pip list 2>/dev/null | grep -i -E "^(torch|triton|flash|nvidia-cutlass|quack|apache-tvm|flashinfer|sgl)" || true
  echo "PYTHONPATH=$PYTHONPATH"
  echo "CPUs: $(nproc)"
}

export -f environment
step env 60 "$OUT/env.txt" bash -c environment

mkdir -p "$OUT/bench"
step bench 300 "$OUT/bench-smoke.txt" \
  python3 bench/bench_smoke.py --warm-runs 2 --out "$OUT/bench" --cache-home "$XDG_CACHE_HOME"
[ -f "$OUT/bench/smoke-cold.json" ] && cp "$OUT/bench/smoke-cold.json" "$OUT/smoke-h200-quick.json"

step table 120 "$OUT/smoke-h200-quick.txt" python3 -m attn_preflight smoke --level quick

step fa4-fp8 120 "$OUT/smoke-h200-fa4-fp8.log" \
  python3 -m attn_preflight smoke --kernel fa4-dense --dtype fp8 --format json -o "$OUT/smoke-h200-fa4-fp8.json"

if python3 -c "import pytest" 2>/dev/null; then
  step pytest-gpu 150 "$OUT/pytest-gpu-smoke.txt" \
    python3 -m pytest -q -m gpu tests/test_smoke_runner.py tests/test_smoke_cli.py -p no:cacheprovider
else
  echo "pytest is not installed here" > "$OUT/pytest-gpu-smoke.txt"
fi

step full "$(left)" "$OUT/smoke-h200-full.log" \
  python3 -m attn_preflight smoke --level full --kernel sdpa --kernel fa4 --kernel cutlass-dsl --kernel triton \
  --timeout 120 --format json -o "$OUT/smoke-h200-full.json"

{
  echo "== device_smoke.log"; cat "$log"
  echo "== env.txt"; cat "$OUT/env.txt"
  echo "== bench-smoke.txt"; cat "$OUT/bench-smoke.txt" 2>/dev/null
  echo "== smoke-h200-quick.txt"; sed -n '/^attn-preflight smoke/,$p' "$OUT/smoke-h200-quick.txt" 2>/dev/null
  echo "== smoke-h200-fa4-fp8.log"; tail -n 5 "$OUT/smoke-h200-fa4-fp8.log" 2>/dev/null
  echo "== pytest-gpu-smoke.txt"; tail -n 15 "$OUT/pytest-gpu-smoke.txt" 2>/dev/null
  echo "== smoke-h200-full.log (not ok)"; grep -v ": ok " "$OUT/smoke-h200-full.log" 2>/dev/null | tail -n 40
} | cut -c1-400
