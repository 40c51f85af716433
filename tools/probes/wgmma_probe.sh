#!/usr/bin/env bash
# Runs tools/probes/wgmma_staged.cu in its variants on the GPU machine (see that file).
cd "$(dirname "$0")/../.."
OUT="${OUT:-.out}"; mkdir -p "$OUT"
build() {  # name, nvcc flags...
  local name=$1; shift
  nvcc -std=c++20 -O3 -I device_include "$@" tools/probes/wgmma_staged.cu -o "/tmp/$name" -Xptxas -v >"$OUT/$name.build.log" 2>&1 &
}
build p90 -gencode=arch=compute_90a,code=sm_90a
build p90swap -gencode=arch=compute_90a,code=sm_90a -DCUPRIC_WGMMA_B_LEAD=1024 "-DCUPRIC_WGMMA_B_STRIDE=(K*128)"
build p90s4 -gencode=arch=compute_90a,code=sm_90a -DSTAGES=4
build p90s2 -gencode=arch=compute_90a,code=sm_90a -DSTAGES=2
build p80 -gencode=arch=compute_80,code=compute_80
wait
for p in p90 p90swap p90s4 p90s2 p80; do
  echo "== $p ($(grep -o 'Used [0-9]* registers' "$OUT/$p.build.log" | head -1))"
  [ -x "/tmp/$p" ] && timeout 120 "/tmp/$p" || tail -5 "$OUT/$p.build.log"
done
python3 - <<'PY'
import torch, time
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a)
for _ in range(2): a @ b
torch.cuda.synchronize(); e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
e0.record()
for _ in range(5): a @ b
e1.record(); torch.cuda.synchronize(); ms = e0.elapsed_time(e1) / 5
print(f"== cuBLAS (torch) 8192^3 bf16: {ms:.3f} ms, {2 * 8192**3 / ms / 1e9:.1f} TFLOP/s")
PY
