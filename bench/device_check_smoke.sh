#!/usr/bin/env bash
# `check --smoke` on the lent H200 (SM90, FA4 installed). Run from the repo root in the same command as the
# FA4 + CUTLASS DSL install (../shared/gpu/README.md, second transfer):
#   source .gpu/part2/install.sh && bash bench/device_check_smoke.sh
# Three configs, each as JSON (first, cold compile cache) then as a table (warm), every run under `timeout`,
# never past CHECK_SMOKE_BUDGET_S (default 420 s). Into "$OUT" (6 files):
#   llama-fa4.json/.txt       llama-3.1-8b (head_dim 128) on fa4: rules pass, both kernels ok -> verdict pass
#   gemma2-fa4.json/.txt      gemma-2-9b (head_dim 256, softcap 50, window 4096) on fa4: runs on SM90 -> pass
#   llama-fa4-fp8.json/.txt   --kv-cache-dtype fp8_e4m3 on fa4: rule fa4-fp8-sm100 fails and the kernel refuses
#                             ("FP8 is only supported on SM100"): they agree, so no smoke-disagrees -> fail
# Each .txt holds the progress lines, the table and the exit status of both runs. A summary goes to stdout.
set -uo pipefail
: "${OUT:?set OUT to the output directory}"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
export XDG_CACHE_HOME=/tmp/attn-preflight-check-smoke-cache  # outside $OUT: compile caches stay on the machine
budget=${CHECK_SMOKE_BUDGET_S:-420}
begin=$(date +%s)

run() {  # run NAME LIMIT_S CHECK-ARGS...: JSON into NAME.json, then the table into NAME.txt
  local name=$1 limit=$2; shift 2
  local json="$OUT/$name.json" txt="$OUT/$name.txt"
  : > "$txt"
  for fmt in json table; do
    local have=$(( budget - ($(date +%s) - begin) ))
    (( have < limit )) && limit=$have
    if (( limit < 30 )); then
      echo "== $fmt run skipped: ${have} s of the budget left" >> "$txt"
      continue
    fi
    echo "== attn-preflight check --smoke $* --format $fmt (limit ${limit} s)" >> "$txt"
    local t0; t0=$(date +%s)
    if [ "$fmt" = json ]; then
      timeout -k 15 "$limit" python3 -m attn_preflight check --smoke --smoke-timeout 240 "$@" --format json -o "$json" \
        >> "$txt" 2>&1
    else
      timeout -k 15 "$limit" python3 -m attn_preflight check --smoke --smoke-timeout 240 "$@" >> "$txt" 2>&1
    fi
    echo "== exit $?, $(( $(date +%s) - t0 )) s" >> "$txt"
  done
}

run llama-fa4 200 --model llama-3.1-8b --attention-backend fa4
run gemma2-fa4 200 --model gemma-2-9b --attention-backend fa4
run llama-fa4-fp8 150 --model llama-3.1-8b --attention-backend fa4 --kv-cache-dtype fp8_e4m3

for name in llama-fa4 gemma2-fa4 llama-fa4-fp8; do
  echo "== $name: $(grep '^== exit' "$OUT/$name.txt" | tr '\n' ' ')"
  python3 - "$OUT/$name.json" <<'EOF' 2>&1 | cut -c1-400
import json, sys
try:
    data = json.load(open(sys.argv[1]))
except (OSError, ValueError) as err:
    sys.exit(f"   no JSON: {err}")
print(f"   verdict {data['verdict']}; counts {data['counts']}")
for f in data["findings"]:
    if f["rule_id"].startswith("smoke-") or f["status"] == "fail":
        print(f"   {f['status'].upper():5} {f['rule_id']}: {f['message']}")
EOF
done
