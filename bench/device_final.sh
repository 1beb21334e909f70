#!/usr/bin/env bash
# The whole real-hardware record on the lent H200 in two calls to the same warm machine (each < 600 s),
# after the FA4 + CUTLASS DSL install of ../shared/gpu/README.md (part1 unpacked by an earlier call):
#   call 1: source .gpu/part2/install.sh && bash bench/device_final.sh record
#   call 2: export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages && bash bench/device_final.sh bench
# or, for the probe's record alone (its fixtures, the start-up ratios, the GPU tests) in one call:
#   source .gpu/part2/install.sh && bash bench/device_final.sh probe
# Everything goes under /tmp/final and is packed as one archive into "$OUT" (the transfer takes 8 files).
set -uo pipefail
: "${OUT:?set OUT to the output directory}"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1
work=/tmp/final
mkdir -p "$work"
export PYTHONUNBUFFERED=1

record() {
  # probe: the fixtures (with and without the .pth fix), cold and cached timings, the GPU tests
  OUT="$work/probe" bash -c 'mkdir -p "$OUT"; timeout 170 bash bench/device_probe.sh --no-bench' > "$work/probe.log" 2>&1
  mkdir -p "$work/check"
  OUT="$work/check" CHECK_SMOKE_BUDGET_S=170 timeout 185 bash bench/device_check_smoke.sh > "$work/check.log" 2>&1
  local app="python3 -m attn_preflight"
  export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
  mkdir -p "$work/fleet"
  timeout 60 $app probe --format nfd -o "$work/fleet/h200.nfd" > "$work/fleet/nfd.log" 2>&1
  timeout 60 $app report -o "$work/fleet/h200.html" --model llama-3.1-8b \
    --smoke tests/fixtures/smoke-h200-quick.json > "$work/fleet/report.log" 2>&1
  timeout 60 $app fleet "$work/probe/probe-h200.json" "$work/probe/probe-h200-nopth.json" \
    --model llama-3.1-8b --attention-backend fa4 > "$work/fleet/fleet.txt" 2>&1
  echo "fleet exit $?" >> "$work/fleet/fleet.txt"
  timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests > "$work/pytest-gpu.txt" 2>&1
  echo "pytest exit $?" >> "$work/pytest-gpu.txt"
}

bench() {
  export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
  timeout 540 python3 bench/run_all.py --runs 3 --json "$work/bench-h200.json" > "$work/bench-h200.txt" 2>&1
  echo "run_all exit $?" >> "$work/bench-h200.txt"
}

probe() {
  OUT="$work/probe" bash -c 'mkdir -p "$OUT"; timeout 170 bash bench/device_probe.sh --no-bench' > "$work/probe.log" 2>&1
  export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
  timeout 120 python3 bench/bench_startup.py --runs 15 --json > "$work/startup-h200.txt" 2>&1
  echo "bench_startup exit $?" >> "$work/startup-h200.txt"
  timeout 240 python3 -m pytest -q -m gpu -p no:cacheprovider tests > "$work/pytest-gpu.txt" 2>&1
  echo "pytest exit $?" >> "$work/pytest-gpu.txt"
}

case "${1:-}" in
  record) record ;;
  bench) bench ;;
  probe) probe ;;
  *) echo "usage: device_final.sh record|bench|probe" >&2; exit 2 ;;
esac
tar -czf "$OUT/final-$1.tgz" -C /tmp final
for f in "$work"/*.txt "$work"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -n 25 "$f" | cut -c1-300; }; done
