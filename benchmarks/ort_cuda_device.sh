#!/bin/bash
# The device check of benchmarks/ort_cuda.py on a lent GPU machine (the tool `device`), as it was run:
# onnxruntime-gpu 1.31.1 (CUDA 13) travels as an xz tarball in two parts (.gpu/part.aa, .gpu/part.ab,
# ignored: its CUDA provider with the fatbin's non-sm_90 cubins zeroed, 284 -> 52 MB compressed);
# the first call stages part.aa in /tmp/stage, the second carries part.ab and runs this script. To make the
# parts (here): pip download onnxruntime-gpu==1.31.1 (manylinux_2_28, cp312), unzip, drop the TensorRT provider
# and libonnxruntime.so (the Python module does not load them), zero the fatbin payloads of every cubin but
# sm_90 in the CUDA provider's .nv_fatbin section (benchmarks/fatbin_keep.py), tar | xz -6, split -b 31M.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/site
export PYTHONUNBUFFERED=1
log() { echo "== $* [$(date +%T)]"; }
log unpack
cat /tmp/stage/part.aa .gpu/part.ab | xz -d | tar xf - -C /tmp/site || { echo "unpack failed"; exit 3; }
export PYTHONPATH=/tmp/site:$PWD
LIBS=$(python3 - <<'PY'
import glob, os, sys
want = ("libcublas.so.13", "libcublasLt.so.13", "libcudart.so.13", "libcurand.so.10", "libcudnn.so.9", "libcufft.so.12")
dirs = set()
for base in sys.path:
    if os.path.isdir(os.path.join(base, "nvidia")):
        for w in want:
            for p in glob.glob(os.path.join(base, "nvidia", "**", w), recursive=True):
                dirs.add(os.path.dirname(p))
print(":".join(sorted(dirs)))
PY
)
export LD_LIBRARY_PATH=$LIBS:${LD_LIBRARY_PATH:-}
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
ldd /tmp/site/onnxruntime/capi/libonnxruntime_providers_cuda.so | grep -E "not found|cublas|cudart|curand" 
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader
log smoke
python3 - <<'PY' || { echo "smoke failed"; exit 4; }
import numpy as np, onnx, onnxruntime as ort
from onnx import helper, TensorProto as T
print(ort.__version__, ort.__file__, ort.get_available_providers())
g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["c"])], "g",
                      [helper.make_tensor_value_info(n, T.FLOAT16, [256, 256]) for n in "ab"],
                      [helper.make_tensor_value_info("c", T.FLOAT16, [256, 256])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]); m.ir_version = 8
s = ort.InferenceSession(m.SerializeToString(), providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
a = np.ones((256, 256), np.float16)
print(s.get_providers(), float(s.run(None, {"a": a, "b": a})[0][0, 0]))
assert s.get_providers()[0] == "CUDAExecutionProvider"
PY
log measure
timeout 300 python3 benchmarks/ort_cuda.py measure --out "$OUT/ort_cuda_h200.json" 2>&1 | tee "$OUT/measure.log" | grep -v "^\s*$"
v() { n=$1; shift; log "validate $n"; timeout 100 python3 -m onnxperf validate "$@" --provider CUDAExecutionProvider \
      --hw h200 --random-weights --format json -o "$OUT/validate_$n.json" 2> "$OUT/validate_$n.err"; echo "rc=$?"; }
v resnet50_b1 models/resnet50_torch.onnx
v resnet50_b32 models/resnet50_torch.onnx --dim batch=32
for b in 1 8 32; do v bert_b$b models/bert_encoder_torch.onnx --dim batch=$b --dim sequence=128; done
log done
