#!/usr/bin/env bash
# Issue 21 on the lent H200: the fatbin reader on the image's torch against its own arch list and cuobjdump,
# probe's compiled-module facts, and `check --smoke` on five configs spanning three kernel libraries:
#   sdpa-llama      llama-3.1-8b, torch_native          torch SDPA (flash / efficient / cuDNN / math)
#   sdpa-qwen3      qwen3-8b, torch_native              torch SDPA
#   fi-llama        llama-3.1-8b, flashinfer            FlashInfer 0.6.6 prefill + paged decode, JIT with nvcc 13.0
#   fi-llama-fp8    llama-3.1-8b, flashinfer, fp8 KV    FlashInfer fp8-KV decode (JIT)
#   gdn-qwen35      qwen3.5-35b-a3b, triton             the GDN layers through FLA's Triton kernels (fla-core 0.6.0);
#                                                       full attention on triton has no smoke kernel (listed so)
# Run from the unpacked working tree with the carried wheels installed in /tmp/site (see the caller's command).
# Writes into "$OUT": <name>.json / <name>.txt per config, probe.json, reader.txt, summary.txt.
set -uo pipefail
: "${OUT:?set OUT to the output directory}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export XDG_CACHE_HOME=/tmp/i21-cache
budget=${I21_BUDGET_S:-540}
begin=$(date +%s)

{
  echo "== reader vs torch's arch list and the image's cuobjdump (libtorch_cuda.so)"
  python3 - <<'EOF'
import glob, os, subprocess, time, torch
from attn_preflight.probe.fatbin import module_archs
lib = glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))[0]
t = time.perf_counter(); archs = module_archs(lib); took = time.perf_counter() - t
print(f"{lib}: {os.path.getsize(lib) / 2**20:.0f} MiB, {archs.entries} entries ({archs.compressed} compressed) in {took:.2f} s")
print("reader sass:", " ".join(archs.sass), "| ptx:", " ".join(archs.ptx), archs.ptx_isa)
print("torch.cuda.get_arch_list():", " ".join(torch.cuda.get_arch_list()))
out = subprocess.run(["cuobjdump", "--list-elf", "--list-ptx", lib], capture_output=True, text=True)
names = [line.rsplit(".", 2)[-2] for line in out.stdout.splitlines() if line.startswith(("ELF file", "PTX file"))]
print("cuobjdump entries:", len(names), "archs:", " ".join(sorted(set(names))))
EOF
} > "$OUT/reader.txt" 2>&1

t0=$(date +%s)
timeout 120 python3 -m attn_preflight probe --format json --output "$OUT/probe.json" > "$OUT/probe.txt" 2>&1
echo "== probe exit $?, $(( $(date +%s) - t0 )) s" >> "$OUT/probe.txt"
timeout 60 python3 -m attn_preflight probe --no-imports >> "$OUT/probe.txt" 2>&1

run() {  # run NAME LIMIT_S CHECK-ARGS...
  local name=$1 limit=$2; shift 2
  local have=$(( budget - ($(date +%s) - begin) ))
  (( have < limit )) && limit=$have
  if (( limit < 30 )); then echo "== $name skipped: ${have} s of the budget left" > "$OUT/$name.txt"; return; fi
  echo "== attn-preflight check --smoke $* (limit ${limit} s)" > "$OUT/$name.txt"
  local t0; t0=$(date +%s)
  timeout -k 10 "$limit" python3 -m attn_preflight check --smoke --smoke-timeout 240 "$@" --format json \
    -o "$OUT/$name.json" >> "$OUT/$name.txt" 2>&1
  echo "== exit $?, $(( $(date +%s) - t0 )) s" >> "$OUT/$name.txt"
}

run sdpa-llama 90 --model llama-3.1-8b --attention-backend torch_native
run gdn-qwen35 120 --model qwen3.5-35b-a3b --attention-backend triton
run fi-llama 240 --model llama-3.1-8b --attention-backend flashinfer
run sdpa-qwen3 90 --model qwen3-8b --attention-backend torch_native
run fi-llama-fp8 200 --model llama-3.1-8b --attention-backend flashinfer --kv-cache-dtype fp8_e4m3

for name in sdpa-llama gdn-qwen35 fi-llama sdpa-qwen3 fi-llama-fp8; do
  echo "== $name: $(grep '^== exit' "$OUT/$name.txt" 2>/dev/null | tr '\n' ' ')"
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
done | tee "$OUT/summary.txt"
cat "$OUT/reader.txt"
