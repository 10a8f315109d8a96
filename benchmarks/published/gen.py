import json, re, subprocess, sys
DLE = "/work/.mirror/NVIDIA+DeepLearningExamples/repo"
TRT = "/work/.mirror/NVIDIA+TensorRT/repo"
def rev(git, c="HEAD"):
    return subprocess.check_output(["git","-C",git,"rev-parse",c],text=True).strip()
def show(git, c, path):
    return subprocess.check_output(["git","-C",git,"show",f"{c}:{path}"],text=True)
def lastcommit(git, c, path):
    return subprocess.check_output(["git","-C",git,"log","-1","--format=%H",c,"--",path],text=True).strip()

def find_line(lines, text, start=0):
    for i in range(start, len(lines)):
        if text in lines[i]:
            return i
    raise KeyError(text)
def table_after(lines, idx):
    i = idx + 1
    while not lines[i].strip().startswith("|"):
        i += 1
    rows = []
    while i < len(lines) and lines[i].strip().startswith("|"):
        cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        rows.append(cells); i += 1
    # drop header + separators
    out = []
    for r in rows[1:]:
        if all(re.fullmatch(r":?-+:?", c) for c in r if c): continue
        out.append(r)
    return out
def num(s):
    s = s.replace("img/s","").replace("ms","").strip()
    try: return float(s)
    except ValueError: return None
def ms(s):
    v = num(s)
    return None if v is None else round(v/1000.0, 9)

entries = []
def add(**kw):
    e = {k:v for k,v in kw.items() if v is not None or k=="batch"}
    if "latency_s" in e:
        e["latency_s"] = {k:v for k,v in e["latency_s"].items() if v is not None}
        if not e["latency_s"]: del e["latency_s"]
    entries.append(e)

dle_head = rev(DLE)
def dle_src(path, heading, table):
    return {"repo":"NVIDIA/DeepLearningExamples","path":path,"commit":dle_head,
            "file_last_changed_in":lastcommit(DLE,"HEAD",path),
            "url":f"https://github.com/NVIDIA/DeepLearningExamples/blob/{dle_head}/{path}",
            "heading":heading,"table":table}

# ---------- 1. PyTorch ResNet-50 (T4) ----------
p = "PyTorch/Classification/ConvNets/resnet50v1.5/README.md"
L = show(DLE,"HEAD",p).splitlines()
h = "##### Inference performance: NVIDIA T4"; hi = find_line(L,h)
for sub,prec in [("###### FP32 Inference Latency","fp32"),("###### Mixed Precision Inference Latency","fp16")]:
    ti = find_line(L, sub, hi)
    for r in table_after(L, ti):
        add(model="resnet50", device="t4", device_name="NVIDIA T4", precision=prec, batch=int(r[0]),
            scenario="fixed_batch", throughput_items_per_s=num(r[1]),
            latency_s={"avg":ms(r[2]),"p95":ms(r[3]),"p99":ms(r[4])},
            runtime="PyTorch (pytorch-21.03 NGC container), eager, benchmark_inference mode" + (", AMP" if prec=="fp16" else ""),
            runtime_class="framework", source=dle_src(p,h,sub.strip("# ")))

# ---------- 2. TensorFlow1 ResNet-50 (A100 40GB, T4) ----------
p = "TensorFlow/Classification/ConvNets/resnet50v1.5/README.md"
L = show(DLE,"HEAD",p).splitlines()
for h,dev,dname,subs in [
    ("##### Inference performance: NVIDIA DGX A100 (1x A100 40GB)","a100-40gb","NVIDIA DGX A100 (1x A100 40GB)",
     [("**TF32 Inference Latency**","tf32",False),("**TF32 Inference Latency + XLA**","tf32",True),
      ("**Mixed Precision Inference Latency**","fp16",False),("**Mixed Precision Inference Latency + XLA**","fp16",True)]),
    ("##### Inference performance: NVIDIA T4 (1x T4 16G)","t4","NVIDIA T4 (1x T4 16G)",
     [("**FP32 Inference Latency**","fp32",False),("**Mixed Precision Inference Latency**","fp16",False),
      ("**Mixed Precision Inference Latency + XLA**","fp16",True)])]:
    hi = find_line(L,h)
    for sub,prec,xla in subs:
        ti = hi
        while True:  # exact line match for the sub-heading
            ti = find_line(L, sub, ti+1)
            if L[ti].strip()==sub: break
        for r in table_after(L, ti):
            lat = {"avg":ms(r[2]),"p90":ms(r[3]),"p95":ms(r[4]),"p99":ms(r[5])}
            note = None
            if lat["p95"] is None:
                note = f"p95 cell reads '{r[4]}' in the source (malformed); left out"
            add(model="resnet50", device=dev, device_name=dname, precision=prec, batch=int(r[0]),
                scenario="fixed_batch", throughput_items_per_s=num(r[1]), latency_s=lat,
                runtime="TensorFlow 1.x (20.06-tf1-py3 NGC container), inference_benchmark.sh" + (", AMP" if prec=="fp16" else "") + (", XLA" if xla else ""),
                runtime_class="framework", source=dle_src(p,h,sub.strip("*")), note=note)

# ---------- 3. MXNet ResNet-50 (A100 80GB, T4), mixed precision only ----------
p = "MxNet/Classification/RN50v1.5/README.md"
L = show(DLE,"HEAD",p).splitlines()
for h,dev,dname,cont in [("##### Inference performance: NVIDIA DGX A100 (1x A100 80GB)","a100-80gb","NVIDIA DGX A100 (1x A100 80GB)","mxnet-22.10-py3"),
                         ("##### Inference performance: NVIDIA T4","t4","NVIDIA T4","mxnet-20.12-py3")]:
    hi = find_line(L,h)
    for r in table_after(L, hi):
        add(model="resnet50", device=dev, device_name=dname, precision="fp16", batch=int(r[0]),
            scenario="fixed_batch", throughput_items_per_s=num(r[1]),
            latency_s={"avg":ms(r[3]),"p50":ms(r[5]),"p90":ms(r[7]),"p95":ms(r[9]),"p99":ms(r[11])},
            runtime=f"MXNet ({cont} NGC container), benchmark.py --mode val, mixed precision",
            runtime_class="framework", source=dle_src(p,h,"Throughput (img/sec) - mixed precision table"),
            note="Source: 'Inference performance reported as Total IPS (data + compute time taken into account).' TF32/FP32 figures are published only as speedup ratios, so they are left out.")

# ---------- 4. PaddlePaddle ResNet-50: framework (A100 80GB) and Paddle-TRT (A100 80GB, A10) ----------
p = "PaddlePaddle/Classification/RN50v1.5/README.md"
L = show(DLE,"HEAD",p).splitlines()
h = "#### Inference performance: NVIDIA DGX A100 (1x A100 80GB)"; hi = find_line(L,h)
for sub,prec in [("**TF32 Inference Latency**","tf32"),("**Mixed Precision Inference Latency**","fp16")]:
    ti = find_line(L, sub, hi)
    for r in table_after(L, ti):
        add(model="resnet50", device="a100-80gb", device_name="NVIDIA DGX A100 (1x A100 80GB)", precision=prec, batch=int(r[0]),
            scenario="fixed_batch", throughput_items_per_s=num(r[1]),
            latency_s={"avg":ms(r[2]),"p90":ms(r[3]),"p95":ms(r[4]),"p99":ms(r[5])},
            runtime="PaddlePaddle NGC container, train.py --run-scope eval_only" + (" --amp" if prec=="fp16" else ""),
            runtime_class="framework", source=dle_src(p,h,sub.strip("*")))
for h,dev,dname in [("#### Paddle-TRT performance: NVIDIA DGX A100 (1x A100 80GB)","a100-80gb","NVIDIA DGX A100 (1x A100 80GB)"),
                    ("#### Paddle-TRT performance: NVIDIA A10 (1x A10 24GB)","a10","NVIDIA A10 (1x A10 24GB)")]:
    hi = find_line(L,h)
    for sub,prec in [("**TF32 Inference Latency**","tf32"),("**FP16 Inference Latency**","fp16"),("**INT8 Inference Latency**","int8")]:
        ti = find_line(L, sub, hi)
        for r in table_after(L, ti):
            add(model="resnet50", device=dev, device_name=dname, precision=prec, batch=int(r[0]),
                scenario="fixed_batch", throughput_items_per_s=num(r[1]),
                latency_s={"avg":ms(r[2]),"p90":ms(r[3]),"p95":ms(r[4]),"p99":ms(r[5])},
                runtime="Paddle-TRT (Paddle Inference with TensorRT subgraph engine), inference.py --use-synthetic True, PaddlePaddle NGC container",
                runtime_class="tensorrt", source=dle_src(p,h,sub.strip("*")),
                note="Source: 'the benchmark does not include data preprocessing'; synthetic input, 1024 benchmark steps after 16 warm-up steps.")

# ---------- 5/6. Triton ResNet-50 offline (PyTorch->ONNX Runtime-TensorRT; TF-TRT) ----------
for p,hs,rt in [("PyTorch/Classification/ConvNets/triton/resnet50/README.md",
                 [("#### Offline: NVIDIA DGX A100 (1x A100 80GB), ONNX Runtime TensorRT with FP16","a100-80gb","NVIDIA DGX A100 (1x A100 80GB)"),
                  ("#### Offline: NVIDIA T4, ONNX Runtime TensorRT with FP16","t4","NVIDIA T4")],
                 "Triton Inference Server, ONNX Runtime backend with TensorRT execution provider, FP16; max batch 128, 1 model instance; client-side latency (perf_analyzer)"),
                ("TensorFlow/Classification/ConvNets/triton/README.md",
                 [("#### Offline: NVIDIA DGX A100 (1x A100 80GB), TF-TRT with FP16","a100-80gb","NVIDIA DGX A100 (1x A100 80GB)"),
                  ("#### Offline: NVIDIA T4, TF-TRT with FP16","t4","NVIDIA T4")],
                 "Triton Inference Server, TensorFlow backend with TF-TRT, FP16; max batch 128, 2 model instances; client-side latency (perf_analyzer)")]:
    L = show(DLE,"HEAD",p).splitlines()
    for h,dev,dname in hs:
        hi = find_line(L,h); ti = find_line(L,"Full tabular data",hi)
        rows = table_after(L, ti); assert len(rows)==8, (p,h,len(rows))
        for r in rows:
            add(model="resnet50", device=dev, device_name=dname, precision="fp16", batch=int(r[2]),
                scenario="triton_offline_client_batch", throughput_items_per_s=num(r[3]),
                latency_s={"p90":ms(r[4]),"p95":ms(r[5]),"p99":ms(r[6]),"avg":ms(r[7])},
                runtime=rt, runtime_class="triton", source=dle_src(p,h,"Full tabular data"),
                note="End-to-end through Triton (client send, network, queue, compute, receive), so far from a kernel-only figure.")

# ---------- 7. TensorRT demo/BERT ----------
def trt_bert(commit, h, dev, dname, trtver):
    p = "demo/BERT/README.md"
    L = show(TRT, commit, p).splitlines()
    hi = find_line(L, h)
    for sub, model in [("##### BERT base","bert-base"),("##### BERT large","bert-large")]:
        ti = None
        for i in range(hi+1, len(L)):
            if L[i].strip().lower()==sub.lower(): ti=i; break
            if L[i].startswith("#### ") : break
        rows = table_after(L, ti)
        for r in rows:
            if not r[0].isdigit(): continue
            for prec, off in [("int8",2),("fp16",5)]:
                add(model=model, seq_len=int(r[0]), device=dev, device_name=dname, precision=prec, batch=int(r[1]),
                    scenario="fixed_batch",
                    latency_s={"p95":ms(r[off]),"p99":ms(r[off+1]),"avg":ms(r[off+2])},
                    runtime=f"TensorRT {trtver} (TensorRT OSS demo/BERT, engines built with TensorRT plugins), scripts/inference_benchmark.sh",
                    runtime_class="tensorrt",
                    source={"repo":"NVIDIA/TensorRT","path":p,"commit":commit,
                            "url":f"https://github.com/NVIDIA/TensorRT/blob/{commit}/{p}",
                            "heading":h,"table":sub.strip("# ")},
                    note="Latency only is published; 'The time measurements do not include the time required to copy inputs to the device and copy outputs to the host.' Throughput = batch / latency if needed (not in the source).")
c_new = rev(TRT,"9973b2f4"); c_old = rev(TRT,"1d6bf360")
trt_bert(c_new, "#### Inference performance: NVIDIA A100 (40GB)", "a100-40gb", "NVIDIA A100 (40G)", "10.11")
trt_bert(c_old, "#### Inference performance: NVIDIA A100 (40GB)", "a100-40gb", "NVIDIA A100 (40G)", "8.5.1")
trt_bert(c_old, "#### Inference performance: NVIDIA T4 (16GB)", "t4", "NVIDIA T4 (16G)", "8.5.1")

# ---------- 8. TensorFlow1 BERT (A100 40GB, T4) ----------
p = "TensorFlow/LanguageModeling/BERT/README.md"
L = show(DLE,"HEAD",p).splitlines()
for h,dev,dname,t4 in [("###### Fine-tuning inference performance for SQuAD v1.1 on DGX A100  40GB","a100-40gb","NVIDIA DGX A100 (1x A100 40GB)",False),
                        ("###### Fine-tuning inference performance for SQuAD v1.1 on Tesla T4 16GB","t4","NVIDIA Tesla T4 (1x T4 16GB)",True)]:
    hi = find_line(L,h)
    for r in table_after(L, hi):
        if not r[0]: continue
        if t4:
            lat = {"avg":ms(r[5]),"p50":ms(r[6]),"p90":ms(r[7]),"p95":ms(r[8]),"p99":ms(r[9]),"max":ms(r[10])}
        else:
            lat = {"avg":ms(r[5]),"p90":ms(r[6]),"p95":ms(r[7]),"p99":ms(r[8])}
        add(model="bert-"+r[0], seq_len=int(r[1]), device=dev, device_name=dname, precision=r[3], batch=int(r[2]),
            scenario="fixed_batch", throughput_items_per_s=num(r[4]), latency_s=lat,
            runtime="TensorFlow 1.x (20.06-py3 NGC container), scripts/finetune_inference_benchmark.sh (SQuAD v1.1 fine-tuned model)",
            runtime_class="framework", source=dle_src(p,h,"Model | Sequence Length | Batch Size | Precision | Throughput-Average(sent/sec) ..."),
            note="Source: averaged over 1024 iterations; the published average latency exceeds p90/p95/p99 (first-iteration outliers are in the average).")

# ---------- 9. TensorFlow2 BERT (A100 80GB, T4) ----------
p = "TensorFlow2/LanguageModeling/BERT/README.md"
L = show(DLE,"HEAD",p).splitlines()
for h,dev,dname,subs in [
   ("##### Fine-tuning inference performance for SQuAD v1.1 on NVIDIA DGX A100 (1x A100 80GB)","a100-80gb","NVIDIA DGX A100 (1x A100 80GB)",
    [("BERT-Large FP16","bert-large","fp16"),("BERT-Large TF32","bert-large","tf32"),("BERT-Base FP16","bert-base","fp16"),("BERT-Base TF32","bert-base","tf32")]),
   ("##### Fine-tuning inference performance for SQuAD v1.1 on NVIDIA Tesla T4 (1x T4 16GB)","t4","NVIDIA Tesla T4 (1x T4 16GB)",
    [("BERT-Large FP16","bert-large","fp16"),("BERT-Large FP32","bert-large","fp32"),("BERT-Base FP16","bert-base","fp16"),("BERT-Base FP32","bert-base","fp32")])]:
    hi = find_line(L,h)
    for sub,model,prec in subs:
        ti = hi
        while True:
            ti = find_line(L, sub, ti+1)
            if L[ti].strip()==sub: break
        for r in table_after(L, ti):
            o = 1 if prec=="fp16" else 0
            add(model=model, seq_len=int(r[0]), device=dev, device_name=dname, precision=prec, batch=int(r[1]),
                scenario="fixed_batch", throughput_items_per_s=num(r[2]),
                latency_s={"avg":ms(r[3+o]),"p90":ms(r[4+o]),"p95":ms(r[5+o]),"p99":ms(r[6+o])},
                runtime="TensorFlow 2 (21.02-py3 NGC container), scripts/finetune_inference_benchmark.sh (SQuAD v1.1)",
                runtime_class="framework", source=dle_src(p,h,sub),
                note=("The paragraph under this heading says the runs were 'on NVIDIA DGX-2 with 1x V100 32GB GPUs' (an apparent copy-paste slip in the source; the heading says A100 80GB)." if dev=="a100-80gb" else None))

# ---------- 10. Triton BERT-large (TensorRT backend) ----------
p = "PyTorch/LanguageModeling/BERT/triton/large/README.md"
L = show(DLE,"HEAD",p).splitlines()
for h,dev,dname in [("#### Offline: NVIDIA DGX A100 (1x A100 80GB), NVIDIA TensorRT with FP16","a100-80gb","NVIDIA DGX A100 (1x A100 80GB)"),
                    ("#### Offline: NVIDIA T4, NVIDIA TensorRT with FP16","t4","NVIDIA T4")]:
    hi = find_line(L,h); ti = find_line(L,"<summary>Results Table</summary>",hi)
    for r in table_after(L, ti):
        add(model="bert-large", seq_len=384, device=dev, device_name=dname, precision="fp16", batch=int(r[0]),
            scenario="triton_offline_static_batch", throughput_items_per_s=num(r[2]),
            latency_s={"p50":ms(r[10]),"p90":ms(r[11]),"p95":ms(r[12]),"p99":ms(r[13]),"avg":ms(r[14])},
            server_compute_infer_s=ms(r[7]),
            runtime="Triton Inference Server, NVIDIA TensorRT backend, FP16, max batch 16, 1 instance, CUDA graphs disabled; client and server on one host, shared memory",
            runtime_class="triton", source=dle_src(p,h,"Results Table"),
            note="server_compute_infer_s is Triton's 'Server Compute Infer (ms)' column: the engine's time without queueing/transfer.")

# ---------- 11. PyTorch BERT single point ----------
p = "PyTorch/LanguageModeling/BERT/README.md"
h = "###### Fine-tuning inference on NVIDIA DGX A100 (1x A100 80GB)"
L = show(DLE,"HEAD",p).splitlines(); hi = find_line(L,h)
r = table_after(L, hi)[0]
for prec, col in [("tf32",3),("fp16",4)]:
    add(model="bert-large", seq_len=int(r[2]), device="a100-80gb", device_name="NVIDIA DGX A100 (1x A100 80GB)", precision=prec, batch=32,
        scenario="fixed_batch", throughput_items_per_s=num(r[col]),
        runtime="PyTorch (pytorch:21.11-py3 NGC container), scripts/run_squad.sh eval" + (", mixed precision" if prec=="fp16" else ""),
        runtime_class="framework", source=dle_src(p,h,"SQuAD"),
        note="Batch size cell reads '32/32' (TF32/FP16). The model size is not named in the table; the README's SQuAD example uses bert_large_uncased.pt.")

# ---------- 12. MLPerf Inference v3.1 (closed, NVIDIA) ----------
MLC = "mlcommons/inference_results_v3.1"; MLC_C = "eaf622a25c00f2b4b1d2c4f5b4f430570429d24a"
def mlsrc(sysname, bench, scen, quote):
    path = f"closed/NVIDIA/results/{sysname}/{bench}/{scen}/performance/run_1/mlperf_log_summary.txt"
    return {"repo":MLC,"path":path,"commit":MLC_C,"url":f"https://github.com/{MLC}/blob/{MLC_C}/{path}","quoted":quote,
            "system_description":{"path":"closed/NVIDIA/systems/system_descriptions.tsv","row":sysname}}
ML_NOTE_R = "MLPerf closed division ResNet-50 v1.5 (ImageNet 224x224). Precision is not in the log; NVIDIA's ResNet-50 engines are INT8 (precision_verified=false)."
ML_NOTE_B = "MLPerf closed bert-99 = BERT-Large on SQuAD v1.1 with max sequence length 384; NVIDIA's harness runs variable-length (unpadded) sequences, so the work per sample is below a padded seq-384 forward pass. Precision is not in the log; INT8 for the 99% target (precision_verified=false)."
TRT9 = "TensorRT 9.0.0, CUDA 12.2, cuDNN 8.9.2, Driver 525.105.17 (NVIDIA MLPerf harness, LWIS / custom BERT harness)"
TRTORIN = "JetPack 5.1.1, TensorRT 8.5.2, CUDA 11.4 (NVIDIA MLPerf harness), MaxP power setting"
ml = [
 ("resnet50","L4x1_TRT","l4","ASROCKRACK 1U1G-MILAN (1x L4, TensorRT)","Offline",None,{"throughput_items_per_s":12881.7},"Samples per second: 12881.7",TRT9,ML_NOTE_R),
 ("resnet50","L4x1_TRT","l4","ASROCKRACK 1U1G-MILAN (1x L4, TensorRT)","SingleStream",1,{"latency_s":{"p90":348735e-9,"avg":346007e-9,"p50":345894e-9,"p99":354464e-9},"throughput_items_per_s":2890.11},"90th percentile latency (ns) : 348735; Mean latency (ns) : 346007; QPS w/o loadgen overhead : 2890.11",TRT9,ML_NOTE_R),
 ("resnet50","L4x1_TRT","l4","ASROCKRACK 1U1G-MILAN (1x L4, TensorRT)","MultiStream",8,{"latency_s":{"p99":846708e-9,"avg":807846e-9,"p50":806088e-9,"p90":832488e-9}},"99th percentile latency (ns) : 846708 (per query of 8 samples); Mean latency (ns) : 807846",TRT9,ML_NOTE_R),
 ("resnet50","H100-PCIe-80GBx1_TRT","h100-pcie","Gigabyte G482-Z54 (1x H100-PCIe-80GB, TensorRT)","Offline",None,{"throughput_items_per_s":54851.4},"Samples per second: 54851.4",TRT9,ML_NOTE_R),
 ("resnet50","DGX-H100_H100-SXM-80GBx1_TRT","h100-sxm","NVIDIA DGX H100 (1x H100-SXM-80GB, TensorRT)","Offline",None,{"throughput_items_per_s":88526.0},"Samples per second: 88526",TRT9,ML_NOTE_R),
 ("resnet50","Orin_TRT","jetson-orin","NVIDIA Jetson AGX Orin Developer Kit 64G (TensorRT)","Offline",None,{"throughput_items_per_s":6423.63},"Samples per second: 6423.63",TRTORIN,ML_NOTE_R+" NOT GPU-only: system_descriptions.tsv says 'GPU and both DLAs are used in resnet50 and Retinanet, in Offline scenario' (uses_dla=true)."),
 ("resnet50","Orin_TRT","jetson-orin","NVIDIA Jetson AGX Orin Developer Kit 64G (TensorRT)","SingleStream",1,{"latency_s":{"p90":640258e-9,"avg":636375e-9,"p50":636227e-9,"p99":643843e-9},"throughput_items_per_s":1571.40},"90th percentile latency (ns) : 640258; Mean latency (ns) : 636375; QPS w/o loadgen overhead : 1571.40",TRTORIN,ML_NOTE_R),
 ("resnet50","Orin_TRT","jetson-orin","NVIDIA Jetson AGX Orin Developer Kit 64G (TensorRT)","MultiStream",8,{"latency_s":{"p99":2182046e-9,"avg":2164327e-9,"p50":2162887e-9,"p90":2175305e-9}},"99th percentile latency (ns) : 2182046 (per query of 8 samples); Mean latency (ns) : 2164327",TRTORIN,ML_NOTE_R),
 ("bert-large","L4x1_TRT","l4","ASROCKRACK 1U1G-MILAN (1x L4, TensorRT)","Offline",None,{"throughput_items_per_s":1028.95},"Samples per second: 1028.95",TRT9,ML_NOTE_B),
 ("bert-large","L4x1_TRT","l4","ASROCKRACK 1U1G-MILAN (1x L4, TensorRT)","SingleStream",1,{"latency_s":{"p90":2575712e-9,"avg":2434920e-9,"p50":2306687e-9,"p99":3895552e-9},"throughput_items_per_s":410.69},"90th percentile latency (ns) : 2575712; Mean latency (ns) : 2434920; QPS w/o loadgen overhead : 410.69",TRT9,ML_NOTE_B),
 ("bert-large","H100-PCIe-80GBx1_TRT","h100-pcie","Gigabyte G482-Z54 (1x H100-PCIe-80GB, TensorRT)","Offline",None,{"throughput_items_per_s":5711.0},"Samples per second: 5711",TRT9,ML_NOTE_B),
 ("bert-large","DGX-H100_H100-SXM-80GBx1_TRT","h100-sxm","NVIDIA DGX H100 (1x H100-SXM-80GB, TensorRT)","Offline",None,{"throughput_items_per_s":9102.26},"Samples per second: 9102.26",TRT9,ML_NOTE_B),
 ("bert-large","Orin_TRT","jetson-orin","NVIDIA Jetson AGX Orin Developer Kit 64G (TensorRT)","Offline",None,{"throughput_items_per_s":553.693},"Samples per second: 553.693",TRTORIN,ML_NOTE_B),
 ("bert-large","Orin_TRT","jetson-orin","NVIDIA Jetson AGX Orin Developer Kit 64G (TensorRT)","SingleStream",1,{"latency_s":{"p90":5704810e-9,"avg":4424132e-9,"p50":4211607e-9,"p99":6487349e-9},"throughput_items_per_s":226.03},"90th percentile latency (ns) : 5704810; Mean latency (ns) : 4424132; QPS w/o loadgen overhead : 226.03",TRTORIN,ML_NOTE_B),
]
for model,sysn,dev,dname,scen,batch,metrics,quote,rt,note in ml:
    bench = "resnet50" if model=="resnet50" else "bert-99"
    m = dict(metrics)
    if "latency_s" in m: m["latency_s"] = {k: round(v, 9) for k,v in m["latency_s"].items()}
    e = dict(model=model, device=dev, device_name=dname, precision="int8", precision_verified=False, batch=batch,
        scenario={"Offline":"mlperf_offline","SingleStream":"mlperf_single_stream","MultiStream":"mlperf_multi_stream"}[scen],
        runtime=rt, runtime_class="tensorrt", source=mlsrc(sysn,bench,scen,quote), note=note, **m)
    if model!="resnet50": e["seq_len"]=384
    if dev=="jetson-orin" and scen=="Offline" and model=="resnet50": e["uses_dla"]=True
    if scen=="SingleStream": e["batch_note"]="one sample per query"
    if scen=="MultiStream": e["batch_note"]="8 samples per query (samples_per_query : 8); latency is per query"
    if scen=="Offline": e["batch_note"]="the harness picks its own GPU batch; the summary log does not state it"
    add(**e)

# ---------- finish ----------
def key(e):
    return (e["model"], e["device"], e["precision"], e.get("batch") if e.get("batch") is not None else 10**9,
            e.get("seq_len",0), e["runtime"], e["scenario"])
entries.sort(key=key)
notes = json.load(open("/work/scratch/pubgpu/notes.json"))
doc = {"schema":"onnxperf.published-gpu/1","notes":notes,"entries":entries}
out = sys.argv[1]
with open(out,"w") as f:
    json.dump(doc, f, indent=1, ensure_ascii=False); f.write("\n")
json.load(open(out))
from collections import Counter
c = Counter((e["model"], e.get("seq_len"), e["device"], e["precision"], e["runtime_class"]) for e in entries)
for k,v in sorted(c.items(), key=lambda kv: tuple(str(x) for x in kv[0])): print(v, k)
print("total", len(entries))
