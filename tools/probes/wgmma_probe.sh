#!/usr/bin/env bash
# Runs tools/probes/wgmma_staged.cu in its variants on the GPU machine (see that file).
cd "$(dirname "$0")/../.."
OUT="${OUT:-.out}"; mkdir -p "$OUT"
build() {  # name, nvcc flags... (only the variants named in $V)
  local name=$1; shift
  case " $V " in *" $name "*) ;; *) return ;; esac
  nvcc -std=c++20 -O3 -I device_include "$@" tools/probes/wgmma_staged.cu -o "/tmp/$name" -Xptxas -v >"$OUT/$name.build.log" 2>&1 &
}
V="${PROBES:-p80 s2 s3m2 s4d1 s3d1m2 n256s3 n256s4d1 n256s3d1}"
build p80 -gencode=arch=compute_80,code=compute_80 -DSTAGES=3 -DMINB=2
H=-gencode=arch=compute_90a,code=sm_90a
build s2 $H -DSTAGES=2 -DMINB=2
build s3m2 $H -DSTAGES=3 -DMINB=2
build s4d1 $H -DSTAGES=4 -DDEPTH=1
build s3d1m2 $H -DSTAGES=3 -DDEPTH=1 -DMINB=2
build n256s3 $H -DBN=256 -DSTAGES=3
build n256s4d1 $H -DBN=256 -DSTAGES=4 -DDEPTH=1
build n256s3d1 $H -DBN=256 -DSTAGES=3 -DDEPTH=1
wait
for p in $V; do
  echo "== $p ($(grep -o 'Used [0-9]* registers' "$OUT/$p.build.log" | head -1); $(grep -o '[0-9]* bytes spill stores' "$OUT/$p.build.log" | head -1); $(grep -c 'C75' "$OUT/$p.build.log") C75xx warnings)"
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
