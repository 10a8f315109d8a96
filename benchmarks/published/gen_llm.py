"""Rebuild ``llm_inference.json`` and ``bert_extra.json`` (issue 29, item 3): published GPU inference
figures, each copied from a named file at a pinned commit (or, for a page, from a named URL and date).

Usage: ``python gen_llm.py OUTDIR`` (writes OUTDIR/llm_inference.json and OUTDIR/bert_extra.json and prints
counts). Nothing is computed but unit conversions: ms and ns become seconds (x 1e-3, x 1e-9), "19,694"
becomes 19694.0. Every entry keeps the row or line it came from (``source.quoted``, whitespace collapsed)
and the number as written (``value_as_written``) with the factor applied (``scale``), so
``value == float(value_as_written without commas) * scale`` can be checked against the quote.

Local mirrors read here (brought with the session's ``fetch`` tool; git directories, read with
``git show COMMIT:PATH``; the commits used are pinned below, not HEAD):

- ``/work/.mirror/WhiteD2125+TensorRT-LLM/repo``: a fork of NVIDIA/TensorRT-LLM whose history holds
  NVIDIA's own "Update TensorRT-LLM (#NNN)" commits up to 2024-04-24 (the upstream snapshot is 2.5 GB,
  over the 500 MB fetch limit). docs/source/performance.md at 75b6210f (2023-10-18, no version stated),
  0f041b7b (v0.6.1 tables, first published at e093e484), 728cc004 (v0.8.0), 71d8d4d3 (v0.9.0).
- ``/work/.mirror/mlcommons+inference_results_v4.1/repo`` at 198fc467 (MLPerf Inference v4.1 results).
- ``/work/.mirror/ggerganov+llama.cpp/repo`` at c392e509 (examples/llama-bench/README.md).
- ``/work/.mirror/XiongjieDai+GPU-Benchmarks-on-LLM-Inference/repo`` at aa72e0ec (LLaMA 3 tables) and
  eafac9d2 (the LLaMA 2 table, removed in the next commit).
- ``/work/.mirror/vllm-project+vllm-project.github.io/repo`` at c3a01c4a (vLLM blog sources).
- ``/work/.mirror/NVIDIA+TensorRT/repo`` (demo/BERT/README.md at 21f31ba7, 69b9d453, c664ce22, 37c01d41,
  0d2bf982) for bert_extra.json.

Files read through the file index (``read_file``: repository, path and commit are what the index
returned) are copied below as literal text blocks, the table rows exactly as the file has them:
NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md at 258c7540 (v0.17 throughput table and the
v0.14 online-serving table) and at 00f37686 (v1.0 tables); mlcommons/inference_results_v4.0 at 3c4a1cf1
(five NVIDIA single-GPU mlperf_log_summary.txt files). A page (not a repository file) is cited by its
address and date: the r/LocalLLaMA post of 2024-11-02 read through a mirror in the pages corpus.
"""
import json
import math
import re
import subprocess
import sys
from collections import Counter

TRTLLM_FORK = "/work/.mirror/WhiteD2125+TensorRT-LLM/repo"
MLPERF41 = "/work/.mirror/mlcommons+inference_results_v4.1/repo"
LLAMACPP = "/work/.mirror/ggerganov+llama.cpp/repo"
XDAI = "/work/.mirror/XiongjieDai+GPU-Benchmarks-on-LLM-Inference/repo"
VLLM_BLOG = "/work/.mirror/vllm-project+vllm-project.github.io/repo"
TRT = "/work/.mirror/NVIDIA+TensorRT/repo"


# ---------------------------------------------------------------- helpers
def git(repo, *args):
    return subprocess.check_output(["git", "-C", repo, *args], text=True)


def rev(repo, c="HEAD"):
    return git(repo, "rev-parse", c).strip()


def show(repo, commit, path):
    return git(repo, "show", f"{commit}:{path}")


def tree(repo, commit, under):
    return git(repo, "ls-tree", "-r", "--name-only", commit, under).split("\n")


def last_changed(repo, commit, path):
    return git(repo, "log", "-1", "--format=%H", commit, "--", path).strip()


def collapse(s):
    """One line, runs of whitespace as one space: how quoted rows are stored."""
    return re.sub(r"\s+", " ", s.strip())


def cells(line):
    """The cells of one markdown table row (one outer pipe dropped at each end, each cell stripped)."""
    s = line.strip()
    s = s[1:] if s.startswith("|") else s
    s = s[:-1] if s.endswith("|") else s
    return [c.strip() for c in s.split("|")]


def is_sep(line):
    return all(re.fullmatch(r":?-+:?", c) for c in cells(line) if c)


def tables_after(lines, idx):
    """The first markdown table at or after line ``idx``: (header cells, [(row cells, raw line)])."""
    i = idx
    while not lines[i].strip().startswith("|"):
        i += 1
    head = cells(lines[i])
    rows = []
    i += 1
    while i < len(lines) and lines[i].strip().startswith("|"):
        if not is_sep(lines[i]):
            rows.append((cells(lines[i]), lines[i]))
        i += 1
    return head, rows


def find_line(lines, text, start=0, exact=False):
    for i in range(start, len(lines)):
        if (lines[i].strip() == text) if exact else (text in lines[i]):
            return i
    raise KeyError(text)


def written(cell):
    """The number as the source writes it (bold markers dropped), or None for an empty/OOM cell."""
    s = cell.replace("*", "").strip()
    return s if re.fullmatch(r"[0-9][0-9,]*(\.[0-9]+)?", s) else None


def num(s):
    return float(s.replace(",", ""))


def source(repo, path, commit, heading, quoted, **kw):
    d = {"repo": repo, "path": path, "commit": commit,
         "url": f"https://github.com/{repo}/blob/{commit}/{path}", "heading": heading,
         "quoted": collapse(quoted)}
    d.update(kw)
    return d


ENTRIES = []
BERT = []


def add(*, model, device, device_name, device_count, precision, runtime, runtime_class, scenario,
        metric, as_written, unit_as_written, scale, source, source_kind, stat=None, batch=None,
        concurrency=None, input_len=None, output_len=None, **extra):
    """One published figure. value = float(as_written) * scale (scale 1, 1e-3 for ms, 1e-9 for ns)."""
    value = num(as_written) * scale
    if scale != 1:
        value = float(f"{value:.12g}")
    assert math.isfinite(value) and value > 0, (model, device, as_written)
    assert as_written in source["quoted"], (as_written, source["quoted"])
    e = {"model": model, "device": device, "device_name": device_name, "device_count": device_count,
         "precision": precision, "runtime": runtime, "runtime_class": runtime_class,
         "scenario": scenario, "batch": batch, "concurrency": concurrency,
         "input_len": input_len, "output_len": output_len,
         "metric": metric, "stat": stat, "value": value, "unit": UNITS[metric],
         "value_as_written": as_written, "unit_as_written": unit_as_written, "scale": scale,
         "source": source, "source_kind": source_kind}
    e.update({k: v for k, v in extra.items() if v is not None})
    ENTRIES.append(e)


UNITS = {"output_tokens_per_s": "tokens/s", "output_tokens_per_s_per_gpu": "tokens/s per GPU",
         "total_tokens_per_s": "tokens/s", "prompt_tokens_per_s": "tokens/s",
         "requests_per_s": "requests/s", "samples_per_s": "samples/s",
         "ttft_s": "s", "tpot_s": "s", "itl_s": "s", "latency_s": "s"}


# ---------------------------------------------------------------- 1. TensorRT-LLM performance.md (static batching)
TRTLLM = "NVIDIA/TensorRT-LLM"
TRTLLM_MODELS = {  # name in the table -> (model id, heading of its reproduction section in the same file)
    "LLaMA 7B": ("llama-2-7b", "### Llama2-7b"), "LLaMA 70B": ("llama-2-70b", "### Llama2-70b"),
    "GPT-J 6B": ("gpt-j-6b", "### GPT-J 6B"), "Falcon 180B": ("falcon-180b", "### Falcon-180B"),
    "Mistral 7B": ("mistral-7b", None), "Mixtral 8x7B": ("mixtral-8x7b", None)}
CONFIG_KEYS = {"num_hidden_layers": "layers", "hidden_size": "hidden", "num_attention_heads": "heads",
               "num_key_value_heads": "kv_heads", "intermediate_size": "intermediate",
               "vocab_size": "vocab"}


def model_config(lines, heading):
    """The checkpoint config JSON printed under the model's reproduction heading, if the file has one."""
    if heading is None:
        return None
    try:
        h = find_line(lines, heading, exact=True)
    except KeyError:
        return None
    end = next((i for i in range(h + 1, len(lines)) if lines[i].startswith("### ")), len(lines))
    text = "\n".join(lines[h:end])
    m = re.search(r"```json\n(\{.*?\n\})\n```", text, re.S)
    if not m:
        return None
    cfg = json.loads(m.group(1))
    return {CONFIG_KEYS[k]: cfg[k] for k in CONFIG_KEYS if k in cfg} or None


TRT_STATIC = [  # commit, version note
    ("75b6210f", "TensorRT-LLM (version not stated in the file; commit of 2023-10-18, the v0.5.0 release month)"),
    ("0f041b7b", None), ("728cc004", None), ("71d8d4d3", None)]
DEVICES_STATIC = {"H100": ("h100-sxm", "H100 (the file: 'an H100-HBM3-80GB system')"),
                  "H200": ("h200", "H200"), "L40S": ("l40s", "L40S"),
                  "A100": ("a100", "A100 (variant not stated)")}


def trtllm_static():
    path = "docs/source/performance.md"
    for short, vnote in TRT_STATIC:
        commit = rev(TRTLLM_FORK, short)
        text = show(TRTLLM_FORK, commit, path)
        lines = text.split("\n")
        h100_named = "H100-HBM3-80GB" in text
        m = re.search(r"All data was generated using version ([0-9.]+)", text)
        general = f"TensorRT-LLM {m.group(1)}" if m else None
        if "This data has been updated for v0.6.1" in text:
            general = "TensorRT-LLM v0.6.1"
        for i, line in enumerate(lines):
            hm = re.match(r"### (H100|H200|L40S|A100) GPUs \((FP8|FP16)\)(<sup>\*</sup>)?\s*$", line)
            if not hm:
                continue
            section = max(j for j in range(i) if lines[j].startswith("## "))
            sect = lines[section].strip()
            latency = sect.startswith("## Low Latency")
            gpu, prec = hm.group(1), hm.group(2)
            dev, dname = DEVICES_STATIC[gpu]
            if gpu == "H100" and not h100_named:
                dev, dname = "h100", "H100 (variant not stated at this commit)"
            version = general or vnote
            scoped = "\n".join(lines[i:i + 4])
            if "data is from TensorRT-LLM v0.5" in scoped or (latency and "data is from TensorRT-LLM v0.5" in "\n".join(lines[section:section + 3])):
                version = "TensorRT-LLM v0.5 (the file: 'The following data is from TensorRT-LLM v0.5.')"
            head, rows = tables_after(lines, i + 1)
            unit = head[-1]
            per_gpu = "/GPU" in unit
            for r, raw in rows:
                if not r[0] or r[0] not in TRTLLM_MODELS:
                    continue
                mid, mhead = TRTLLM_MODELS[r[0]]
                if short == "75b6210f" and mid.startswith("llama-2-7b"):
                    mid = "llama-7b"
                cfg = model_config(lines, mhead)
                batch, tp, isl = int(r[1]), int(r[2]), int(r[3])
                if prec == "FP8":
                    p = {"label": "FP8", "weights": "fp8", "activations": "fp8"}
                    if "kv_cache_quant_algo\": \"FP8\"" in text or "--fp8_kv_cache" in text:
                        p["kv_cache"] = "fp8"
                else:
                    p = {"label": "FP16", "weights": "fp16", "activations": "fp16"}
                src = source(TRTLLM, path, commit, sect + " / " + line.strip(), raw,
                             table=collapse(" | ".join(head)), read_from="WhiteD2125/TensorRT-LLM (fork snapshot sharing this upstream commit)",
                             file_last_changed_in=last_changed(TRTLLM_FORK, commit, path))
                note = []
                if short == "75b6210f" and r[0].startswith("LLaMA 7B"):
                    note.append("The file names the model 'LLaMA 7B' only; later revisions of the same file reproduce it as Llama2-7b.")
                if mid == "llama-2-70b" and short == "75b6210f":
                    note.append("'LLaMA 70B': the only 70B LLaMA published by Oct 2023 is Llama 2 70B.")
                if tp > 1 and not per_gpu and not latency:
                    note.append(f"Throughput header reads '{unit}' (not per GPU) for a TP{tp} row; later revisions relabel such columns 'out tok/s/GPU', so total vs per-GPU is ambiguous here.")
                common = dict(model=mid, model_name=r[0], model_config=cfg, device=dev, device_name=dname,
                              device_count=tp, parallelism={"tp": tp}, precision=p,
                              runtime=f"{version}, gptSessionBenchmark (static batching, one engine per model)",
                              runtime_class="tensorrt-llm", source=src, source_kind="vendor_doc",
                              note=" ".join(note) or None)
                if latency:
                    w = written(r[4])
                    if w and "First Token Latency Benchmark" in text:
                        common["note"] = ((common["note"] or "") + " The table's Batch Size column reads 1; the file's reproduction "
                                          "commands for first-token latency pass larger batches (in_out_sizes such as \"64:128,1\") "
                                          "with one output token. Copied as the table writes it.").strip()
                    if w:
                        add(**common, scenario="first_token_latency_batch1", metric="ttft_s", stat=None,
                            batch=batch, input_len=isl, output_len=1, as_written=w, unit_as_written="ms",
                            scale=1e-3)
                else:
                    w = written(r[5])
                    if w:
                        add(**common, scenario="static_batch_throughput",
                            metric="output_tokens_per_s_per_gpu" if per_gpu else "output_tokens_per_s",
                            batch=batch, input_len=isl, output_len=int(r[4]), as_written=w,
                            unit_as_written=unit.replace("Throughput ", ""), scale=1)


# ---------------------------------------------------------------- 2. TensorRT-LLM perf-overview.md v0.17 (258c7540)
V017_COMMIT = "258c7540c03517def55d9a5aadfa9288af474e1b"
V017_HEAD = ("| Throughput (tokens / sec) | | GPU | H200 141GB HBM3 | H100 80GB HBM3 | GH200 480GB | L40S | A100-SXM4-80GB |\n"
             "| | Precision | | FP8 | FP8 | FP8 | FP8 | FP16 |")
# Copied from the file (read_file NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md @ 258c7540),
# the LLaMA v3.1 8B and 70B rows of the throughput table; whitespace collapsed.
V017_ROWS = """
| LLaMA v3.1 8B | 1 | 128, 128 | 29526.04 | 28836.77 | 29852.96 | 9104.61 | 6627.27 |
| | | 128, 2048 | 25398.86 | 21109.38 | 21769.55 | 5365.81 | 5255.99 |
| | | 128, 4096 | 17370.8 | 13593.65 | 14189.89 | 3025.92 | 3453.79 |
| | | 500, 2000 | 21020.81 | 16500.69 | 17137.29 | 4273.75 | 4276.58 |
| | | 1000, 1000 | 17537.96 | 15244.78 | 16482.77 | 4054.71 | 3786.83 |
| | | 2048, 128 | 3794.14 | 3556.73 | 3843.95 | 1066.52 | 799.61 |
| | | 2048, 2048 | 11968.5 | 9488.42 | 10265.9 | 2225.27 | 2424.16 |
| | | 5000, 500 | 3987.79 | 3559.36 | 3932.58 | 981.2 | 825.13 |
| | | 20000, 2000 | 1804.1 | 1401.31 | 1560.2 | 327.97 | 330.04 |
| LLaMA v3.1 70B | 1 | 128, 128 | 4020.75 | 3378.03 | 3636.91 | | |
| | | 128, 2048 | 4165.68 | 911.62 | 2082.74 | | |
| | | 128, 4096 | 2651.75 | 426.32 | 1263.98 | | |
| | | 500, 2000 | 3018.39 | 775.57 | 1973.86 | | |
| | | 1000, 1000 | 2823.45 | 839.97 | 1746.12 | | |
| | | 2048, 128 | 465.99 | 343.29 | 424.96 | | |
| | | 2048, 2048 | 1913.8 | | 1086.93 | | |
| | | 5000, 500 | 560.16 | 245.34 | 422.36 | | |
| | | 20000, 2000 | 279.52 | | | | |
| | 2 | 128, 128 | 6823.01 | 6645.12 | | | 1313.96 |
| | | 128, 2048 | 8290.35 | 6169.58 | | | 531.26 |
| | | 128, 4096 | 6526.67 | 3897.06 | | | |
| | | 500, 2000 | 6848.02 | 4972.57 | | | 439.41 |
| | | 1000, 1000 | 5164.76 | 4390.53 | | | 472.94 |
| | | 2048, 128 | 809 | 772.66 | | | 148.96 |
| | | 2048, 2048 | 4183.88 | 2898.16 | | | 261.1 |
| | | 5000, 500 | 1025.38 | 919.73 | | | 121.47 |
| | | 20000, 2000 | 640.62 | 443.01 | | | |
| | 4 | 128, 128 | 11098.63 | 11127.53 | | 1523.52 | 2733.48 |
| | | 128, 2048 | 14156 | 11511.93 | | 1942.66 | 2811.27 |
| | | 128, 4096 | 10574.06 | 7439.41 | | 1440.23 | 1976.49 |
| | | 500, 2000 | 12452.79 | 9836.7 | | 1634.72 | 2275.79 |
| | | 1000, 1000 | 8911.29 | 7430.99 | | 1209.25 | 1921.77 |
| | | 2048, 128 | 1358.06 | 1302.6 | | 177.72 | 325.15 |
| | | 2048, 2048 | 7130.44 | 5480.03 | | 969.68 | 1393.64 |
| | | 5000, 500 | 1811.55 | 1602.78 | | 249.52 | 392.62 |
| | | 20000, 2000 | 1199.68 | 920.19 | | 162.25 | 212.08 |
| | 8 | 128, 128 | 15355.84 | 14730.69 | | 1464.03 | 4717.62 |
| | | 128, 2048 | 21195.88 | 17061.82 | | 2303.31 | 5241.5 |
| | | 128, 4096 | 16941.52 | 14171.43 | | 2018.22 | 3724.67 |
| | | 500, 2000 | 17278.4 | 14679.33 | | 1971.96 | 4445.37 |
| | | 1000, 1000 | 13181.24 | 11451.16 | | 1333.62 | 3320.41 |
| | | 2048, 128 | 1983.03 | 1923.41 | | 176.16 | 542.38 |
| | | 2048, 2048 | 11142.47 | 8801.95 | | 1200.16 | 2553.71 |
| | | 5000, 500 | 2717.83 | 2457.42 | | 259.71 | 696.34 |
| | | 20000, 2000 | 1920.45 | 1512.6 | | 209.87 | 413.38 |
"""
V017_GPUS = [("h200", "H200 141GB HBM3", "FP8"), ("h100-sxm", "H100 80GB HBM3", "FP8"),
             ("gh200-480gb", "GH200 480GB", "FP8"), ("l40s", "L40S", "FP8"), ("a100-80gb", "A100-SXM4-80GB", "FP16")]
# The online-serving table of the same file (generated with v0.14.0, 500 requests, BF16), LLaMA 3.1 8B
# and 70B rows, copied as the file writes them (no spaces in this table).
V017_SERVING_HEAD = ("| **Model** | **GPU** | **TP** | **Input Length** | **Output Length** | **QPS** | **Tput(req/s)** | "
                     "**Mean TTFT(ms)** | **Mean ITL(ms)** | **Total Token Tput (tok/s)** | **Output Tput (tok/s)** |")
V017_SERVING = """
|LLaMA 3.1 70B|H100 80GB HBM3|4|467|256|2|2|62|21|1406|498||
||||||4|4|68|24|2750|973|
||||||8|7|92|32|5256|1860|
||||||16|12|175|66|8941|3164|
||||||32|16|1229|86|11537|4083|
||||||INF|16|9123|85|11593|4103|
||||467|16|2|2|53|18|844|28|
||||||4|4|58|20|1908|63|
||||||8|8|71|24|3795|126|
||||||16|16|109|38|7492|248|
||||||32|28|1197|482|13655|452|
||||||INF|28|9126|548|13719|454|
||||202|214|2|2|48|20|780|401|
||||||4|4|51|22|1499|771|
||||||8|7|57|25|2702|1390|
||||||16|11|74|32|4364|2245|
||||||32|14|116|42|5837|3003|
||||||INF|16|4482|50|6725|3459|
|LLaMA 3.1 8B||1|467|256|2|2|23|8|1423|504|
||||||4|4|24|9|2624|929|
||||||8|8|26|9|5535|1959|
||||||16|15|30|11|10636|3765|
||||||32|26|50|19|19138|6774|
||||||INF|37|3335|39|26614|9420|
||||467|16|2|2|19|7|956|32|
||||||4|4|20|7|1910|63|
||||||8|8|22|7|3808|126|
||||||16|16|24|8|7567|251|
||||||32|31|29|10|14894|493|
||||||INF|79|3280|193|38319|1269|
||||202|214|2|2|19|7|809|416|
||||||4|4|20|8|1586|816|
||||||8|7|21|9|3047|1568|
||||||16|13|23|10|5597|2879|
||||||32|23|27|11|9381|4825|
||||||INF|39|1657|21|16117|8291|
|LLaMA 3.1 70B|H200 131GB HBM3|4|467|256|2|2|58|18|1411|499|
||||||4|4|63|20|2770|980|
||||||8|7|84|27|5328|1886|
||||||16|13|165|60|9224|3264|
||||||32|16|1279|83|11800|4176|
||||||INF|16|9222|83|11826|4185|
||||467|16|2|2|50|15|956|32|
||||||4|4|55|16|1909|63|
||||||8|8|67|20|3799|126|
||||||16|16|103|33|7499|248|
||||||32|28|1259|485|13586|450|
||||||INF|29|9074|546|13792|457|
||||202|214|2|2|43|17|793|408|
||||||4|4|46|18|1524|784|
||||||8|7|51|21|2796|1438|
||||||16|11|67|28|4639|2386|
||||||32|15|112|39|6288|3235|
||||||INF|17|4480|48|7230|3719|
|LLaMA 3.1 8B|H200 131GB HBM3|1|467|256|2|2|21|6|1425|504|
||||||4|4|23|7|2828|1001|
||||||8|8|24|7|5567|1971|
||||||16|15|27|9|10761|3809|
||||||32|27|44|16|19848|7025|
||||||INF|40|3237|36|28596|10121|
||||467|16|2|2|18|5|956|32|
||||||4|4|19|6|1910|63|
||||||8|8|20|6|3810|126|
||||||16|16|22|7|7567|250|
||||||32|31|27|9|14927|494|
||||||INF|81|3227|190|39007|1291|
||||202|214|2|2|17|6|812|418|
||||||4|4|18|6|1597|822|
||||||8|7|19|7|3088|1589|
||||||16|14|20|8|5771|2969|
||||||32|24|24|9|9931|5109|
||||||INF|43|1665|19|17861|9189|
"""


def trtllm_v017():
    path = "docs/source/performance/perf-overview.md"
    heading = "## Throughput Measurements (**All data in the table below was generated using version 0.17 and presents token throughput in tokens/second.**)"
    model = None
    tp = None
    for raw in V017_ROWS.strip().split("\n"):
        r = cells(raw)
        if r[0]:
            model = r[0]
        if r[1]:
            tp = int(r[1])
        isl, osl = (int(x) for x in r[2].split(","))
        for (dev, dname, prec), cell in zip(V017_GPUS, r[3:8]):
            w = written(cell)
            if not w:
                continue
            mid = {"LLaMA v3.1 8B": "llama-3.1-8b", "LLaMA v3.1 70B": "llama-3.1-70b"}[model]
            src = source(TRTLLM, path, V017_COMMIT, heading, raw, table=collapse(V017_HEAD))
            p = ({"label": "FP8", "weights": "fp8", "activations": "fp8", "kv_cache": "fp8"} if prec == "FP8"
                 else {"label": "FP16", "weights": "fp16", "activations": "fp16"})
            note = ("Per row the model's TP size is the GPU count. The file: 'a local inference client is fed requests at an infinite rate'; "
                    "'If you specify FP8 quantization, the KV cache will automatically be set to FP8 as well'. ")
            if dev == "gh200-480gb":
                note += "GH200 runs used the legacy gptManagerBenchmark flow per the file. 'GH200 480GB' is the superchip's LPDDR5X+HBM total as written; not mapped to a preset."
            if dev == "a100-80gb":
                note += "A100 is FP16 (no FP8 on Ampere)."
            add(model=mid, model_name=model, device=dev, device_name=dname, device_count=tp,
                parallelism={"tp": tp}, precision=p,
                runtime="TensorRT-LLM 0.17, trtllm-bench throughput (in-flight batching, max-throughput offline scenario)",
                runtime_class="tensorrt-llm", scenario="inflight_batching_max_throughput",
                concurrency="unbounded (all requests queued at once)", input_len=isl, output_len=osl,
                metric="output_tokens_per_s", as_written=w, unit_as_written="tokens / sec (table title: 'token throughput in tokens/second')",
                scale=1, source=src, source_kind="vendor_doc", note=note.strip())
    # online serving
    heading = "## Online Serving Measurements (**All data in the table below was generated using version 0.14.0, with 500 requests and BF16 precision.**)"
    model = gpu = tp = isl = osl = None
    for raw in V017_SERVING.strip().split("\n"):
        r = cells(raw)
        if r[0]:
            model = r[0]
        if r[1]:
            gpu = r[1]
        if r[2]:
            tp = int(r[2])
        if r[3]:
            isl, osl = int(r[3]), int(r[4])
        qps = r[5]
        dev = {"H100 80GB HBM3": "h100-sxm", "H200 131GB HBM3": "h200"}[gpu]
        mid = {"LLaMA 3.1 8B": "llama-3.1-8b", "LLaMA 3.1 70B": "llama-3.1-70b"}[model]
        src = source(TRTLLM, path, V017_COMMIT, heading, raw, table=V017_SERVING_HEAD)
        note = ("Triton Inference Server with the TensorRT-LLM backend; 500 requests. 'QPS' is the offered request rate as written "
                "(INF = unthrottled). The GPU cell reads 'H200 131GB HBM3' in the file." if dev == "h200" else
                "Triton Inference Server with the TensorRT-LLM backend; 500 requests. 'QPS' is the offered request rate as written (INF = unthrottled).")
        for col, metric, unit, scale in ((7, "ttft_s", "Mean TTFT(ms)", 1e-3), (8, "itl_s", "Mean ITL(ms)", 1e-3),
                                          (10, "output_tokens_per_s", "Output Tput (tok/s)", 1)):
            w = written(r[col])
            if not w:
                continue
            add(model=mid, model_name=model, device=dev, device_name=gpu, device_count=tp, parallelism={"tp": tp},
                precision={"label": "BF16", "weights": "bf16", "activations": "bf16"},
                runtime="TensorRT-LLM 0.14.0 through tensorrtllm_backend (Triton), online serving",
                runtime_class="tensorrt-llm-serving", scenario="online_serving", request_rate_qps=qps,
                input_len=isl, output_len=osl, metric=metric, stat="mean" if scale != 1 else None,
                as_written=w, unit_as_written=unit, scale=scale, source=src, source_kind="vendor_doc", note=note)


# ---------------------------------------------------------------- 3. TensorRT-LLM perf-overview.md v1.0 (00f37686)
V10_COMMIT = "00f37686aa854010d68bcbd0f4ab000221541ca6"
# Copied from the file (read_file NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md, the version the
# index holds, commit 00f37686); whitespace collapsed.
V10_TABLES = {
    "#### Llama 3.3 70B": ("| Sequence Length (ISL/OSL) | B200<br/>TP1 (FP4) | GB200<br/>TP1 (FP4) | H200<br/>TP1 (FP8) | H100<br/>TP2 (FP8) |", """
| 128/128 | 11,147 | 12,189 | 3,803 | 6,378 |
| 128/2048 | 9,922 | 11,309 | 4,336 | 6,651 |
| 128/4096 | 6,831 | 7,849 | 2,872 | 4,199 |
| 500/2000 | 7,762 | 9,028 | 3,666 | 5,222 |
| 1000/1000 | 7,007 | 7,326 | 2,909 | 4,205 |
| 1000/2000 | 6,271 | 6,513 | 2,994 | 4,146 |
| 2048/128 | 1,339 | 1,450 | 442 | 762 |
| 2048/2048 | 4,783 | 5,646 | 2,003 | 3,082 |
| 5000/500 | 1,459 | 1,602 | 566 | 898 |
| 20000/2000 | 665 | 755 | 283 | 437 |
"""),
    "#### Llama 3.1 8B": ("| Sequence Length (ISL/OSL) | H200<br/>TP1 (FP8) | H100<br/>TP1 (FP8) |", """
| 128/128 | 27,911 | 28,312 |
| 128/2048 | 26,221 | 22,714 |
| 128/4096 | 18,027 | 14,325 |
| 500/2000 | 20,770 | 17,660 |
| 1000/1000 | 17,744 | 15,220 |
| 1000/2000 | 16,828 | 13,899 |
| 2048/128 | 3,538 | 3,450 |
| 2048/2048 | 12,194 | 9,305 |
| 5000/500 | 3,902 | 3,459 |
| 20000/2000 | 1,804 | 1,351 |
""")}
V10_DEVICES = {"B200": ("b200", "B200 180GB (DGX B200)"), "GB200": ("gb200", "GB200 192GB (GB200 NVL72)"),
               "H200": ("h200", "H200 SXM 141GB (DGX H200)"), "H100": ("h100-sxm", "H100 SXM 80GB (DGX H100)")}
V10_CHECKPOINTS = {("llama-3.3-70b", "FP4"): "nvidia/Llama-3.3-70B-Instruct-FP4",
                   ("llama-3.3-70b", "FP8"): "nvidia/Llama-3.3-70B-Instruct-FP8",
                   ("llama-3.1-8b", "FP8"): "nvidia/Llama-3.1-8B-Instruct-FP8"}


def trtllm_v10():
    path = "docs/source/performance/perf-overview.md"
    for heading, (head, body) in V10_TABLES.items():
        mid = {"#### Llama 3.3 70B": "llama-3.3-70b", "#### Llama 3.1 8B": "llama-3.1-8b"}[heading]
        cols = []
        for c in cells(head)[1:]:
            gm = re.fullmatch(r"(\w+)<br/>TP(\d+) \((FP4|FP8)\)", c)
            cols.append((gm.group(1), int(gm.group(2)), gm.group(3)))
        for raw in body.strip().split("\n"):
            r = cells(raw)
            isl, osl = (int(x) for x in r[0].split("/"))
            for (gpu, tp, prec), cell in zip(cols, r[1:]):
                w = written(cell)
                if not w:
                    continue
                dev, dname = V10_DEVICES[gpu]
                src = source(TRTLLM, path, V10_COMMIT, "## Throughput Measurements / " + heading, raw, table=head)
                add(model=mid, model_name=heading.strip("# "), device=dev, device_name=dname, device_count=tp,
                    parallelism={"tp": tp}, precision={"label": prec, "weights": prec.lower(),
                                                        "checkpoint": V10_CHECKPOINTS[(mid, prec)]},
                    runtime="TensorRT-LLM (perf-overview of the v1.0 documentation: 'NEW for v1.0'), trtllm-bench throughput, PyTorch backend",
                    runtime_class="tensorrt-llm", scenario="inflight_batching_max_throughput",
                    concurrency="unbounded (all requests queued at once)", input_len=isl, output_len=osl,
                    metric="output_tokens_per_s", as_written=w,
                    unit_as_written="Total Output Throughput (tokens/sec)", scale=1, source=src, source_kind="vendor_doc",
                    note="The file: 'a local inference client is fed requests at an infinite rate ... The reported metric is `Total Output Throughput (tokens/sec)`'. Weights quantized with ModelOpt (NVIDIA's published checkpoints).")


# ---------------------------------------------------------------- 4. MLPerf Inference v4.1 (mirror)
MLPERF_BENCH = {"resnet50": ("resnet50", None), "bert-99": ("bert-large", 384), "gptj-99": ("gpt-j-6b", None),
                "llama2-70b-99": ("llama-2-70b", None), "mixtral-8x7b": ("mixtral-8x7b", None)}
MLPERF_DEVICES = [("H200-SXM-141GB", "h200"), ("B200-SXM-180GB", "b200"), ("GH200 Grace Hopper Superchip 144GB", "gh200-144gb"),
                  ("GH200 Grace Hopper Superchip 96GB", "gh200-96gb"), ("Jetson AGX Orin 64G", "jetson-orin"),
                  ("NVIDIA L40S", "l40s"), ("NVIDIA L4", "l4"), ("MI300X", "mi300x"), ("H100-SXM-80GB", "h100-sxm")]
# (first match wins: L40S before L4, whose name is a prefix of it)
MLPERF_MULTI = {"NVIDIA/H200-SXM-141GBx8_TRT", "NVIDIA/DGX-H100_H100-SXM-80GBx8_TRT", "AMD/8xMI300X_2xEPYC-9374F",
                "Fujitsu/CDI_L40Sx8_TRT", "NeuralMagic/vLLM_8xL40S-reference-cpu-pytorch-v2.3.1-default_config"}
MLPERF_LLM = {"gptj-99", "llama2-70b-99", "mixtral-8x7b"}
# (summary line label, metric, stat, scale, scenarios, llm only)
MLPERF_LINES = [
    ("Samples per second", "samples_per_s", None, 1, {"Offline"}, False),
    ("Tokens per second", "output_tokens_per_s", None, 1, {"Offline"}, True),
    ("Scheduled samples per second", "samples_per_s", None, 1, {"Server"}, False),
    ("Completed tokens per second", "output_tokens_per_s", None, 1, {"Server"}, True),
    ("99.00 percentile latency (ns)", "latency_s", "p99", 1e-9, {"Server"}, False),
    ("90th percentile latency (ns)", "latency_s", "p90", 1e-9, {"SingleStream"}, False),
    ("Mean latency (ns)", "latency_s", "mean", 1e-9, {"SingleStream"}, False),
    ("99th percentile latency (ns)", "latency_s", "p99", 1e-9, {"MultiStream"}, False),
    ("Mean First Token latency (ns)", "ttft_s", "mean", 1e-9, {"Server"}, True),
    ("99.00 percentile first token latency (ns)", "ttft_s", "p99", 1e-9, {"Server"}, True),
    ("Mean Time to Output Token (ns)", "tpot_s", "mean", 1e-9, {"Server"}, True),
    ("99.00 percentile time to output token (ns)", "tpot_s", "p99", 1e-9, {"Server"}, True)]
MLPERF_SCEN = {"Offline": "mlperf_offline", "Server": "mlperf_server", "SingleStream": "mlperf_single_stream",
               "MultiStream": "mlperf_multi_stream"}


def summary_value(text, label):
    """(number as written, the line) for the first summary line that starts with ``label`` and a colon."""
    for line in text.split("\n"):
        m = re.match(rf"\s*{re.escape(label)}\s*:\s*([0-9.]+)\s*$", line)
        if m:
            return m.group(1), line
    return None, None


def mlperf_entry(repo, commit, path, text, *, bench, scen, dev, dname, count, system, rt, prec, submitter,
                 status, read_from=None):
    model, seq = MLPERF_BENCH[bench]
    scen_norm = scen[0].upper() + scen[1:].lower() if scen.islower() else scen
    scen_norm = {"Singlestream": "SingleStream", "Multistream": "MultiStream"}.get(scen_norm, scen_norm)
    for label, metric, stat, scale, scens, llm_only in MLPERF_LINES:
        if scen_norm not in scens or (llm_only and bench not in MLPERF_LLM):
            continue
        w, line = summary_value(text, label)
        if not w or num(w) <= 0:
            continue
        src = {"repo": repo, "path": path, "commit": commit, "url": f"https://github.com/{repo}/blob/{commit}/{path}",
               "heading": "MLPerf Results Summary", "quoted": collapse(line),
               "system_description": {"path": path.split("/results/")[0] + f"/systems/{system}.json"}}
        if read_from:
            src["read_from"] = read_from
        note = {"resnet50": "MLPerf closed ResNet-50 v1.5 (ImageNet 224x224).",
                "bert-large": "MLPerf closed bert-99: BERT-Large SQuAD v1.1, max sequence length 384 (harnesses may run unpadded variable-length sequences).",
                "gpt-j-6b": "MLPerf closed gptj-99: GPT-J 6B summarization (CNN/DailyMail), input up to 1,919 tokens, output up to 128.",
                "llama-2-70b": "MLPerf closed llama2-70b-99: Llama-2-70B-chat on OpenOrca samples; 'Tokens per second' counts output tokens.",
                "mixtral-8x7b": "MLPerf closed mixtral-8x7b."}[model]
        if scen_norm == "Offline":
            note += " Offline: the harness picks its own batch; the summary does not state it."
        if status == "preview":
            note += " System status 'preview' (not yet available when submitted)."
        if "CTS" in dname:
            note += " H200-SXM-141GB-CTS: a custom-thermal-solution H200 SXM (system name as written)."
        add(model=model, seq_len=seq, device=dev, device_name=dname, device_count=count,
            precision=prec, runtime=rt, runtime_class="mlperf-" + submitter.lower(), scenario=MLPERF_SCEN[scen_norm],
            batch=1 if scen_norm == "SingleStream" else None, metric=metric, stat=stat, as_written=w,
            unit_as_written=label, scale=scale, source=src, source_kind="benchmark_submission",
            mlperf={"round": repo.rsplit("_", 1)[1], "division": "closed", "submitter": submitter, "system": system,
                    "benchmark": bench, "scenario": scen_norm, "status": status},
            note=note)


def mlperf_v41():
    repo, commit = "mlcommons/inference_results_v4.1", rev(MLPERF41)
    files = [f for f in tree(MLPERF41, commit, "closed") if f.endswith("/performance/run_1/mlperf_log_summary.txt")
             and "/results/" in f]
    for f in files:
        _, submitter, _, system, bench, scen = f.split("/")[:6]
        if bench not in MLPERF_BENCH:
            continue
        sys_json = json.loads(show(MLPERF41, commit, f"closed/{submitter}/systems/{system}.json"))
        try:
            count = int(sys_json["accelerators_per_node"]) * int(sys_json.get("number_of_nodes") or 1)
        except ValueError:  # CPU-only systems write 'N/A'
            continue
        if count != 1 and (f"{submitter}/{system}" not in MLPERF_MULTI or bench not in MLPERF_LLM):
            continue
        name = sys_json["accelerator_model_name"]
        dev = next((d for key, d in MLPERF_DEVICES if key in name), None)
        if dev is None:
            continue
        meas = [m for m in tree(MLPERF41, commit, f"closed/{submitter}/measurements/{system}/{bench}/{scen}/")
                if m.endswith(".json")]
        prec = {"label": None}
        for m in meas:
            d = json.loads(show(MLPERF41, commit, m))
            if "weight_data_types" in d:
                prec = {"weight_data_types": d["weight_data_types"], "weight_transformations": d.get("weight_transformations"),
                        "input_data_types": d.get("input_data_types"), "stated_in": m}
                break
        rt = sys_json.get("framework", "") + (("; " + sys_json["other_software_stack"]) if sys_json.get("other_software_stack") else "")
        mlperf_entry(repo, commit, f, show(MLPERF41, commit, f), bench=bench, scen=scen, dev=dev,
                     dname=f"{name} ({sys_json['system_name']})", count=count, system=system, rt=rt, prec=prec,
                     submitter=submitter, status=sys_json.get("status"))


# ---------------------------------------------------------------- 5. MLPerf Inference v4.0 (read_file, literal)
V40_COMMIT = "3c4a1cf196b70175cfe7c59e067cd1d923aa4f3f"
V40_SYSTEMS = {
    "DGX-H100_H100-SXM-80GBx1_TRT": ("h100-sxm", "NVIDIA DGX H100 (1x H100-SXM-80GB, TensorRT)", "available",
                                     "TensorRT 9.3.0, CUDA 12.2; TensorRT 9.3.0, CUDA 12.2, cuDNN 8.9.6, Driver 535.129.03, DALI 1.28.0"),
    "H200-SXM-141GBx1_TRT": ("h200", "NVIDIA H200 (1x H200-SXM-141GB, TensorRT)", "preview",
                             "TensorRT 9.3.0, CUDA 12.2; TensorRT 9.3.0, CUDA 12.2, cuDNN 8.9.6, Driver 550.54, DALI 1.28.0")}
# The lines of each mlperf_log_summary.txt that carry a figure, copied from read_file at 3c4a1cf1.
V40_SUMMARIES = [
    ("DGX-H100_H100-SXM-80GBx1_TRT", "resnet50", "Offline", "Samples per second: 88714.3"),
    ("DGX-H100_H100-SXM-80GBx1_TRT", "resnet50", "Server",
     "Scheduled samples per second : 72976.91\n99.00 percentile latency (ns)   : 10033457"),
    ("DGX-H100_H100-SXM-80GBx1_TRT", "bert-99", "Offline", "Samples per second: 9081.51"),
    ("DGX-H100_H100-SXM-80GBx1_TRT", "bert-99", "Server",
     "Scheduled samples per second : 6995.64\n99.00 percentile latency (ns)   : 70190912"),
    ("H200-SXM-141GBx1_TRT", "gptj-99", "Offline", "Samples per second: 30.7624")]


def mlperf_v40():
    repo = "mlcommons/inference_results_v4.0"
    for system, bench, scen, text in V40_SUMMARIES:
        dev, dname, status, rt = V40_SYSTEMS[system]
        path = f"closed/NVIDIA/results/{system}/{bench}/{scen}/performance/run_1/mlperf_log_summary.txt"
        mlperf_entry(repo, V40_COMMIT, path, text, bench=bench, scen=scen, dev=dev, dname=dname, count=1,
                     system=system, rt=rt, prec={"label": None}, submitter="NVIDIA", status=status,
                     read_from="file index (read_file), lines copied into gen_llm.py")


# ---------------------------------------------------------------- 6. llama.cpp examples/llama-bench/README.md
def right_aligned(cols, vals):
    """Columns matched to values from the right: the README's CSV and SQL examples list one column fewer
    than their rows carry (one more 0/1 flag before cpu_info), so columns are matched from the right, except the
    first two (build_commit, build_number), which line up from the left (as the JSON example confirms)."""
    rec = dict(zip(reversed(cols), reversed(vals)))
    rec["build_commit"], rec["build_number"] = vals[0], vals[1]  # the first two columns line up from the left
    return rec


def llamacpp_readme():
    repo = "ggerganov/llama.cpp"
    path = "examples/llama-bench/README.md"
    commit = rev(LLAMACPP)
    text = show(LLAMACPP, commit, path)
    heads = {"### CSV": "csv", "### JSON": "json", "### JSONL": "jsonl", "### SQL": "sql"}
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.strip() not in heads:
            continue
        kind = heads[line.strip()]
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("### ") or lines[j].startswith("## ")), len(lines))
        block = "\n".join(lines[i:end])
        if kind == "csv":
            rows = [l for l in block.split("\n") if l.startswith('"')]
            cols = next(l for l in block.split("\n") if l.startswith("build_commit")).split(",")
            recs = [(right_aligned(cols, [c.strip('"') for c in r.split(",")]), r) for r in rows]
        elif kind == "json":
            arr = json.loads(block[block.index("```json") + 7: block.rindex("```")])
            recs = []
            for rec in arr:
                key = f'"avg_ts": {rec["avg_ts"]}'
                recs.append((rec, next(l for l in block.split("\n") if key in l)))
        elif kind == "jsonl":
            recs = [(json.loads(l), l) for l in block.split("\n") if l.startswith("{")]
        else:
            cols = [c.strip() for c in re.search(r"INSERT INTO test \(([^)]*)\)", block).group(1).split(",")]
            recs = []
            for l in block.split("\n"):
                m = re.search(r"VALUES \((.*)\);", l)
                if m:
                    vals = [v.strip().strip("'") for v in m.group(1).split("', '")]
                    recs.append((right_aligned(cols, vals), l))
        for rec, raw in recs:
            n_prompt, n_gen = int(rec["n_prompt"]), int(rec["n_gen"])
            w = str(rec["avg_ts"])
            if w not in raw:
                continue
            pp = n_prompt > 0
            add(model="llama-7b", model_name=rec["model_type"], model_config={"params": int(rec["model_n_params"]),
                "file_bytes": int(rec["model_size"])},
                device="rtx3090ti", device_name=rec["gpu_info"], device_count=1,
                precision={"label": "Q4_0", "weights": "q4_0", "kv_cache": "f16" if str(rec["f16_kv"]).lower() in ("1", "true") else None},
                runtime=f"llama.cpp build {rec['build_commit']} ({rec['build_number']}), llama-bench, CUDA, n_gpu_layers={rec['n_gpu_layers']}, n_batch={rec['n_batch']}",
                runtime_class="llama.cpp", scenario="llama_bench_pp" if pp else "llama_bench_tg",
                batch=1, input_len=n_prompt if pp else 0, output_len=n_gen,
                metric="prompt_tokens_per_s" if pp else "output_tokens_per_s", stat="mean", as_written=w,
                unit_as_written="avg_ts", scale=1,
                source=source(repo, path, commit, line.strip() + " (output-format example)", raw,
                              file_last_changed_in=last_changed(LLAMACPP, commit, path)),
                source_kind="project_doc_example",
                note=f"Example output in llama-bench's README ({kind}); run at {rec['test_time']} on {rec['cpu_info']} + {rec['gpu_info']}. "
                     "llama-bench runs one sequence: pp = prompt of n_prompt tokens, tg = n_gen tokens generated one by one. "
                     "RTX 3090 Ti has no onnxperf preset (rtx3090 is a different card).")


# ---------------------------------------------------------------- 7. XiongjieDai/GPU-Benchmarks-on-LLM-Inference
XDAI_GPUS = {"3090 24GB": ("rtx3090", "NVIDIA GeForce RTX 3090 24GB"), "4090 24GB": ("rtx4090", "NVIDIA GeForce RTX 4090 24GB"),
             "RTX 6000 Ada 48GB": ("rtx6000-ada", "NVIDIA RTX 6000 Ada 48GB"), "A40 48GB": ("a40", "NVIDIA A40 48GB"),
             "L40S 48GB": ("l40s", "NVIDIA L40S 48GB"), "A100 PCIe 80GB": ("a100-pcie-80gb", "NVIDIA A100 PCIe 80GB"),
             "A100 SXM 80GB": ("a100-80gb", "NVIDIA A100 SXM 80GB"), "H100 PCIe 80GB": ("h100-pcie", "NVIDIA H100 PCIe 80GB"),
             "A100 80GB": ("a100-80gb-unspecified", "NVIDIA A100 80GB (form factor not stated)"),
             "M1 7‑Core GPU 8GB": ("apple-m1-7core-gpu", "Apple M1, 7-core GPU, 8GB"),
             "M1 Max 32‑Core GPU 64GB": ("apple-m1-max-32core-gpu", "Apple M1 Max, 32-core GPU, 64GB"),
             "M1 Max 24-Core GPU 32GB": ("apple-m1-max-24core-gpu", "Apple M1 Max, 24-core GPU, 32GB"),
             "M2 Ultra 76-Core GPU 192GB": ("apple-m2-ultra-76core-gpu", "Apple M2 Ultra, 76-core GPU, 192GB"),
             "M3 Max 40‑Core GPU 64GB": ("apple-m3-max-40core-gpu", "Apple M3 Max, 40-core GPU, 64GB"),
             "3070 8GB": ("rtx3070", "NVIDIA GeForce RTX 3070 8GB"), "3080 10GB": ("rtx3080-10gb", "NVIDIA GeForce RTX 3080 10GB"),
             "3080 Ti 12GB": ("rtx3080ti", "NVIDIA GeForce RTX 3080 Ti 12GB"), "4070 Ti 12GB": ("rtx4070ti", "NVIDIA GeForce RTX 4070 Ti 12GB"),
             "4080 16GB": ("rtx4080", "NVIDIA GeForce RTX 4080 16GB"), "RTX 4000 Ada 20GB": ("rtx4000-ada", "NVIDIA RTX 4000 Ada 20GB"),
             "RTX 5000 Ada 32GB": ("rtx5000-ada", "NVIDIA RTX 5000 Ada 32GB"), "RTX A6000 48GB": ("rtx-a6000", "NVIDIA RTX A6000 48GB"),
             "M3 10-Core GPU 16GB": ("apple-m3-10core-gpu", "Apple M3, 10-core GPU, 16GB"),
             "M3 Max 40-Core GPU 48GB": ("apple-m3-max-40core-gpu-48gb", "Apple M3 Max, 40-core GPU, 48GB")}


def xdai_device(gpu):
    m = re.fullmatch(r"(.*?)\s*\*\s*(\d+)", gpu)
    base, count = (m.group(1), int(m.group(2))) if m else (gpu, 1)
    if base in XDAI_GPUS:
        dev, name = XDAI_GPUS[base]
    else:
        dev = re.sub(r"[^a-z0-9]+", "-", base.lower().replace("‑", "-")).strip("-")
        name = base
    return dev, name, count


def xdai_llama3():
    repo, path = "XiongjieDai/GPU-Benchmarks-on-LLM-Inference", "README.md"
    commit = rev(XDAI, "aa72e0ec")
    lines = show(XDAI, commit, path).split("\n")
    start = find_line(lines, "### LLaMA 3 🦙🦙🦙:")
    for i in range(start, len(lines)):
        if not lines[i].startswith("#### "):
            continue
        sub = lines[i].strip()
        head, rows = tables_after(lines, i + 1)
        gpu = None
        q4 = {}  # (GPU cell, column) -> the 8B Q4_K_M figure, to flag F16 prompt figures below it
        for r, raw in rows:
            if r[0]:
                gpu = r[0]
            dev, dname, count = xdai_device(gpu)
            mm = re.fullmatch(r"(8B|70B) (Q4_K_M|F16)", r[1].strip())
            if not mm:
                continue
            mid = {"8B": "llama-3-8b", "70B": "llama-3-70b"}[mm.group(1)]
            for col, cell in zip(head[2:], r[2:]):
                w = written(cell)
                if not w:
                    continue
                kind, n = col.split()
                pp = kind == "pp"
                add(model=mid, model_name=f"LLaMA 3 {r[1].strip()}", device=dev, device_name=dname, device_count=count,
                    precision={"label": mm.group(2), "weights": mm.group(2).lower()},
                    runtime="llama.cpp (build not stated), llama-bench -p 512,1024,4096,8192 -n 512,1024,4096,8192; "
                            + ("Metal" if dev.startswith("apple") else "CUDA 12.1.1 on RunPod, Ubuntu 22.04.2"),
                    runtime_class="llama.cpp", scenario="llama_bench_pp" if pp else "llama_bench_tg", batch=1,
                    input_len=int(n) if pp else 0, output_len=0 if pp else int(n),
                    metric="prompt_tokens_per_s" if pp else "output_tokens_per_s", stat="mean", as_written=w,
                    unit_as_written="tokens/s ('Average speed in tokens/s')", scale=1,
                    source=source(repo, path, commit, "## Benchmarks / ### LLaMA 3 / " + sub, raw,
                                  table=collapse(" | ".join(head)), gpu_cell=gpu),
                    source_kind="community",
                    note=("Community measurement (one person's runs on rented GPUs, May 2024). " +
                          (f"{count} GPUs: llama.cpp splits the layers across them (its default split mode; the README does not name the mode). " if count > 1 else "") +
                          ("This F16 prompt-processing figure is below the same GPU's 8B Q4_K_M one in the same column; copied as published. "
                           if pp and r[1].strip() == "8B F16" and (gpu, col) in q4 and num(w) < q4[(gpu, col)] else "")).strip())
                if r[1].strip() == "8B Q4_K_M":
                    q4[(gpu, col)] = num(w)
        if lines[i].startswith("#### Apple"):
            break


def xdai_llama2():
    repo, path = "XiongjieDai/GPU-Benchmarks-on-LLM-Inference", "README.md"
    commit = rev(XDAI, "eafac9d")
    lines = show(XDAI, commit, path).split("\n")
    start = find_line(lines, "### LLaMA 2 🦙🦙:")
    method_commit = rev(XDAI, "a6e69a6")
    for i in range(start, len(lines)):
        if not lines[i].startswith("#### "):
            continue
        sub = lines[i].strip()
        head, rows = tables_after(lines, i + 1)
        gpu = None
        for r, raw in rows:
            if r[0]:
                gpu = r[0]
            dev, dname, count = xdai_device(gpu)
            mm = re.fullmatch(r"(7B|13B|70B)_(q4_0|f16)", r[1].strip())
            if not mm:
                continue
            mid = {"7B": "llama-2-7b", "13B": "llama-2-13b", "70B": "llama-2-70b"}[mm.group(1)]
            for col, metric in ((8, "output_tokens_per_s"), (9, "prompt_tokens_per_s")):
                w = written(r[col])
                if not w:
                    continue
                add(model=mid, model_name=f"LLaMA 2 {r[1].strip()}", device=dev, device_name=dname, device_count=count,
                    precision={"label": mm.group(2).upper(), "weights": mm.group(2)},
                    runtime="llama.cpp ./main (build not stated), " + ("Metal" if dev.startswith("apple") else "CUDA 12.1.1 or 11.8.0 on RunPod"),
                    runtime_class="llama.cpp", scenario="llama_cpp_main_generate", batch=1,
                    input_len=None, output_len=1024 if metric == "output_tokens_per_s" else None,
                    metric=metric, stat="mean of 3 runs", as_written=w,
                    unit_as_written=head[col], scale=1,
                    source=source(repo, path, commit, "## Benchmarks / ### LLaMA 2 / " + sub, raw,
                                  table=collapse(" | ".join(head)), gpu_cell=gpu,
                                  method={"commit": method_commit, "text": "A longer prompt will make prompt processing speed per token faster. Here, we input around 500 tokens for the test. ... ./main ... -n 1024 --ignore-eos"}),
                    source_kind="community",
                    note=("Community measurement (Dec 2023). Mean 'eval' (generation) and 'prompt eval' speeds of llama.cpp's own timings; "
                          "the README of the time (a6e69a6) gives the prompt as 'around 500 tokens' and -n 1024 generated tokens. "
                          "This table was removed from the README in the next commit (75fee52, 'Remove outdated results')." +
                          (f" {count} GPUs, llama.cpp layer split." if count > 1 else "")))
        if lines[i].startswith("#### Apple"):
            break


# ---------------------------------------------------------------- 8. r/LocalLLaMA post (page)
REDDIT = {
    "url": "https://www.reddit.com/r/LocalLLaMA/comments/1ghvwsj/llamacpp_compute_and_memory_bandwidth_efficiency/",
    "read_at": "https://reddit.adminforge.de/r/LocalLLaMA/comments/1ghvwsj/llamacpp_compute_and_memory_bandwidth_efficiency/lv4f9ys/?context=3",
    "date": "2024-11-02", "author": "u/randomfoo2",
    "title": "llama.cpp Compute and Memory Bandwidth Efficiency w/ Different Devices/Backends",
    "head": "Build | Hardware | Backend | FP16 TFLOPS | MBW GB/s | pp512 t/s | tg128 t/s | t/TFLOP | MBW % |"}
REDDIT_ROWS = """
b4008 | RTX 3050 6GB | CUDA (FA) | 13.6 | 168 | 1250.59 | 37.77 | 92.29 | 80.04 |
b4011 | RTX 3090 | CUDA (FA) | 71.0 | 936.2 | 6073.39 | 167.28 | 85.54 | 63.61 |
b4011 | RTX 4090 | CUDA (FA) | 165.2 | 1008 | 13944.43 | 187.7 | 84.41 | 66.29 |
b4008 | W7900 | ROCm | 122.6 | 864 | 2872.74 | 95.56 | 23.43 | 39.37 |
b4008 | 7900 XTX | ROCm | 122.8 | 960 | 3206.94 | 102.92 | 26.12 | 38.17 |
b4008 | Radeon 780M | ROCm | 16.6 | 89.6 | 240.79 | 18.61 | 14.51 | 73.94 |
b4011 | M2 (10CU) | Metal | 7.1 | 100 | 185.34 | 21.67 | 26.10 | 77.15 |
"""
REDDIT_DEV = {"RTX 3050 6GB": "rtx3050-6gb", "RTX 3090": "rtx3090", "RTX 4090": "rtx4090", "W7900": "radeon-pro-w7900",
              "7900 XTX": "radeon-rx-7900xtx", "Radeon 780M": "radeon-780m", "M2 (10CU)": "apple-m2"}


def reddit():
    for raw in REDDIT_ROWS.strip().split("\n"):
        r = cells(raw)
        build, hw, backend = r[0], r[1], r[2]
        for col, pp in ((5, True), (6, False)):
            w = written(r[col])
            src = {"url": REDDIT["url"], "read_at": REDDIT["read_at"], "date": REDDIT["date"], "author": REDDIT["author"],
                   "title": REDDIT["title"], "heading": REDDIT["head"], "quoted": collapse(raw), "corpus": "search (pages)"}
            add(model="llama-2-7b", model_name="TheBloke/Llama-2-7B-GGUF Q4_0", device=REDDIT_DEV[hw], device_name=hw,
                device_count=1, precision={"label": "Q4_0", "weights": "q4_0"},
                runtime=f"llama.cpp {build}, llama-bench, {backend}" + (" (-fa 1)" if "FA" in backend else ""),
                runtime_class="llama.cpp", scenario="llama_bench_pp" if pp else "llama_bench_tg", batch=1,
                input_len=512 if pp else 0, output_len=0 if pp else 128,
                metric="prompt_tokens_per_s" if pp else "output_tokens_per_s", stat="mean", as_written=w,
                unit_as_written="pp512 t/s" if pp else "tg128 t/s", scale=1, source=src, source_kind="community",
                note="Community post: 'All tests were done with the Q4_0 quant of TheBloke/Llama-2-7B-GGUF', llama-bench 'typically with no additional options. CUDA runs are with -fa 1.' "
                     "The rows the post took from llama.cpp's Apple Silicon discussion (build '???') are left out.")


# ---------------------------------------------------------------- 9. vLLM blog (vllm-project/vllm-project.github.io)
def vllm_blog():
    repo, path = "vllm-project/vllm-project.github.io", "_posts/2026-04-22-fp8-kvcache.md"
    commit = rev(VLLM_BLOG)
    lines = show(VLLM_BLOG, commit, path).split("\n")
    t = find_line(lines, "*Table 4: Performance results for Llama-3.1-8B")
    head, rows = tables_after(lines, t + 1)
    for r, raw in rows:
        cfg = r[0]
        for col, metric, stat, unit, scale in ((1, "ttft_s", "median", "Median TTFT (ms)", 1e-3),
                                                (2, "itl_s", "median", "Median ITL (ms)", 1e-3),
                                                (4, "output_tokens_per_s", None, "Output tok/s", 1)):
            w = written(r[col])
            add(model="llama-3.1-8b", model_name="Llama-3.1-8B", device="h100", device_name="NVIDIA H100 (variant not stated)",
                device_count=1, precision={"label": f"KV cache {cfg}", "kv_cache": cfg.lower()},
                runtime="vLLM v0.19.1 ('after' in the post's Table 3), FlashAttention-3, vllm bench serve",
                runtime_class="vllm", scenario="serving_fixed_concurrency", concurrency=8,
                input_len=None, output_len=None, metric=metric, stat=stat, as_written=w, unit_as_written=unit,
                scale=scale,
                source=source(repo, path, commit, lines[t].strip(), raw, table=collapse(" | ".join(head)),
                              file_last_changed_in=last_changed(VLLM_BLOG, commit, path)),
                source_kind="project_blog",
                note="Post of 2026-04-22 ('The State of FP8 KV-Cache and Attention Quantization in vLLM'): 'All Hopper experiments run on a single H100 GPU'; "
                     "'150 requests at concurrency 8, each with ~20k input tokens and ~2k output tokens (±15% variance)'. Weight precision not stated.",
                workload={"requests": 150, "input_tokens_approx": 20000, "output_tokens_approx": 2000, "variance": "±15%"})


# ---------------------------------------------------------------- 10. bert_extra.json: TensorRT demo/BERT rows not in gpu_inference.json
BERT_TABLES = [  # commit, heading, device, device_name, TensorRT version note, extra note
    ("37c01d41", "### Inference Performance NVIDIA L40S", "l40s", "NVIDIA L40S",
     "TensorRT 10.7.0.23 (README 'Version Info' at this commit)",
     "This table is unchanged through 9973b2f4 (where gen.py's A100 rows are pinned; Version Info there reads 10.11)."),
    ("69b9d453", "### Inference Performance NVIDIA L40S", "l40s", "NVIDIA L40S",
     "TensorRT 10.2.0.19 (README 'Version Info' at this commit)", "Replaced at 37c01d41 (and, for one release, at c664ce22)."),
    ("69b9d453", "### Inference Performance NVIDIA L4", "l4", "NVIDIA L4",
     "TensorRT 10.2.0.19 (README 'Version Info' at this commit)", "Replaced at 37c01d41 (and, for one release, at c664ce22)."),
    ("37c01d41", "### Inference Performance NVIDIA L4", "l4", "NVIDIA L4",
     "TensorRT 10.7.0.23 (README 'Version Info' at this commit)",
     "LABEL CONFLICT: commit 8c6d69dd (TensorRT 10.9 release) renamed this section 'Inference performance: NVIDIA A30' with every number unchanged "
     "(still so at 9973b2f4). The numbers are within a few percent of the repo's earlier L4 table (69b9d453) and about twice the repo's "
     "earlier A30 tables (0d2bf982, 14c0b86b), so the section is recorded under its first label, L4, with device_label_conflict set."),
    ("21f31ba7", "### Inference Performance NVIDIA L40S", "l40s", "NVIDIA L40S",
     "TensorRT 10.1.0.27 (README 'Version Info' at this commit)", "First L40S table; replaced at 69b9d453."),
    ("21f31ba7", "### Inference Performance NVIDIA L4", "l4", "NVIDIA L4",
     "TensorRT 10.1.0.27 (README 'Version Info' at this commit)", "First L4 table; replaced at 69b9d453."),
    ("c664ce22", "### Inference Performance NVIDIA L40S", "l40s", "NVIDIA L40S",
     "TensorRT 10.4.0.26 (README 'Version Info' at this commit)",
     "This table was in the README only at c664ce22 (10.4 release); the next release commit (c8a50438) restored the 69b9d453 numbers."),
    ("c664ce22", "### Inference Performance NVIDIA L4", "l4", "NVIDIA L4",
     "TensorRT 10.4.0.26 (README 'Version Info' at this commit)",
     "This table was in the README only at c664ce22 (10.4 release); the next release commit (c8a50438) restored the 69b9d453 numbers."),
    ("0d2bf982", "#### Inference performance: NVIDIA A30", "a30", "NVIDIA A30",
     "TensorRT 8.6.1 per the commit message 'Update demoBERT perf numbers for 8.6.1' (the README's Version Info still reads 8.5.1)", None)]


def bert_extra():
    path = "demo/BERT/README.md"
    for short, h, dev, dname, trtver, extra in BERT_TABLES:
        commit = rev(TRT, short)
        L = show(TRT, commit, path).split("\n")
        hi = find_line(L, h, exact=True)
        for sub, model in (("##### BERT base", "bert-base"), ("##### BERT large", "bert-large")):
            ti = None
            for i in range(hi + 1, len(L)):
                if L[i].strip().lower() == sub.lower():
                    ti = i
                    break
                if L[i].startswith("### ") or L[i].startswith("#### "):
                    break
            _, rows = tables_after(L, ti)
            for r, raw in rows:
                if not r[0].isdigit():
                    continue
                for prec, off in (("int8", 2), ("fp16", 5)):
                    e = {"model": model, "seq_len": int(r[0]), "device": dev, "device_name": dname, "precision": prec,
                         "batch": int(r[1]), "scenario": "fixed_batch",
                         "latency_s": {k: round(num(r[off + j]) / 1000.0, 9) for j, k in enumerate(("p95", "p99", "avg"))},
                         "runtime": f"{trtver}, TensorRT OSS demo/BERT (engines built with TensorRT plugins), scripts/inference_benchmark.sh",
                         "runtime_class": "tensorrt",
                         "source": {"repo": "NVIDIA/TensorRT", "path": path, "commit": commit,
                                    "url": f"https://github.com/NVIDIA/TensorRT/blob/{commit}/{path}",
                                    "heading": h, "table": sub.strip("# "), "quoted": collapse(raw)},
                         "note": "Latency only is published; 'The time measurements do not include the time required to copy inputs to the device and copy outputs to the host.' "
                                 "Megatron Large with Sparsity rows (INT8 QAT) are left out." + (" " + extra if extra else "")}
                    if "LABEL CONFLICT" in (extra or ""):
                        e["device_label_conflict"] = True
                    BERT.append(e)


# ---------------------------------------------------------------- notes and output
NOTES = [
    "Published LLM (and MLPerf ResNet-50/BERT) GPU inference figures for checking onnxperf's predictions (issue 29, item 3). "
    "Every number is copied from the cited file at the cited commit, or from the cited page and date; nothing is computed but unit "
    "conversions (ms, ns -> s; thousands separators dropped). Each entry keeps the quoted row/line (whitespace collapsed), the number "
    "as written and the factor applied, so value == value_as_written * scale.",
    "Fields: model (e.g. llama-2-7b, llama-3.1-8b; model_name as the source writes it; model_config only where the same file prints the "
    "checkpoint config), device (onnxperf preset id where one exists, else a plain lower-case name), device_name (as written), "
    "device_count (GPUs the figure spans; parallelism.tp where stated), precision (label as written; weights/activations/kv_cache only "
    "as far as the source says), runtime, runtime_class, scenario, batch / concurrency / request_rate_qps, input_len, output_len, metric, "
    "stat, value (SI: tokens/s, samples/s, seconds), unit, value_as_written, unit_as_written, scale, source {repo, path, commit, url, "
    "heading, table, quoted} or {url, date, ...} for a page, source_kind, note.",
    "Metrics: output_tokens_per_s (generated tokens per second over the whole system), output_tokens_per_s_per_gpu (TensorRT-LLM "
    "v0.6.1-v0.9.0 tables 'out tok/s/GPU'), prompt_tokens_per_s (llama.cpp pp), samples_per_s (MLPerf Offline 'Samples per second', "
    "Server 'Scheduled samples per second'), latency_s (MLPerf, stat p90/p99/mean), ttft_s (time to first token; TensorRT-LLM 'Low Latency' "
    "tables are batch 1 with one output token), tpot_s (MLPerf 'Time to Output Token'), itl_s (inter-token latency).",
    "runtime_class: tensorrt-llm (vendor tables: static batching with gptSessionBenchmark up to v0.9, in-flight batching with "
    "trtllm-bench from v0.10), tensorrt-llm-serving (through Triton), mlperf-<submitter> (MLPerf closed division harnesses), "
    "llama.cpp (llama-bench / main; batch 1), vllm. source_kind: vendor_doc, benchmark_submission, project_doc_example, project_blog, "
    "community (one person's runs; weigh accordingly).",
    "TensorRT-LLM: NVIDIA/TensorRT-LLM cannot be fetched whole (2.5 GB snapshot, limit 500 MB). docs/source/performance.md revisions "
    "75b6210f, 0f041b7b, 728cc004 and 71d8d4d3 are NVIDIA's own 'Update TensorRT-LLM (#NNN)' commits, read from the fork "
    "WhiteD2125/TensorRT-LLM whose history contains them (source.read_from). perf-overview.md at 258c7540 (v0.17) and 00f37686 (v1.0) "
    "were read through the file index. Other perf-overview versions (v0.10, v0.11/0.12 with GH200, v0.14 with A100-PCIE-80GB, v0.20) "
    "were readable only without a commit (the index returns their text but not their revision) or only in forks "
    "(arthurrasmusson e00d4e65, dominicshanshan ab4143e1) and are left out.",
    "MLPerf: v4.1 from the fetched results repository (closed division; single-accelerator systems for resnet50, bert-99, gptj-99, "
    "llama2-70b-99, mixtral-8x7b, and for the LLM benchmarks also the 8-GPU NVIDIA H200/DGX-H100, AMD MI300X, Fujitsu L40S and "
    "NeuralMagic vLLM L40S systems). v4.0: the snapshot is 1.4 GB (over the limit); five NVIDIA single-GPU summaries were read "
    "through the file index (H100-SXM ResNet-50 and BERT-99 Offline/Server, H200 GPT-J Offline). v5.0: the snapshot has too many files "
    "to fetch and the index holds no result files, so nothing from v5.0. Precision: MLPerf summaries do not state it; entries carry the "
    "submitter's measurements JSON (weight_data_types, weight_transformations) where present. 99.9%-accuracy variants are left out.",
    "llama.cpp: the GitHub discussions (CUDA and Apple Silicon scoreboards) are not reachable. From the repository, the only GPU figures "
    "with a named GPU are llama-bench README's output-format examples (RTX 3090 Ti, build 3469684); batched-bench's README sample "
    "table names no GPU and is left out. Community tables: XiongjieDai/GPU-Benchmarks-on-LLM-Inference (Llama 3 8B/70B Q4_K_M/F16, "
    "tg/pp 512-8192, May 2024; Llama 2 7B/13B/70B q4_0/f16, Dec 2023) and an r/LocalLLaMA post of 2024-11-02 (Llama-2-7B Q4_0 "
    "pp512/tg128, builds b4008/b4011). No Llama-7B Q8_0 GPU figure was found in a reachable source.",
    "vLLM: vllm-project/vllm is 1.1 GB (not fetchable) and keeps no benchmark figures in files; the blog's performance posts show figures "
    "as images. The one table found is in the FP8 KV-cache post (2026-04-22, Llama-3.1-8B on one H100, concurrency 8). MLPerf v4.1 "
    "Llama-2-70B entries of NeuralMagic (vLLM 0.5.2 on 8x L40S) and AMD (vLLM 0.4.3+rocm on 1x and 8x MI300X) are vLLM figures too.",
    "bert_extra.json (schema onnxperf.published-gpu/1, like gpu_inference.json): TensorRT demo/BERT L40S (TensorRT 10.1, 10.2, 10.4 and 10.7 tables), "
    "L4 (10.1, 10.2, 10.4; and the 10.7 table with device_label_conflict, see its note) and A30 (8.6.1) rows, BERT base/large, seq 128/384, batch 1-128, "
    "INT8 and FP16, latency only. Kept apart from gpu_inference.json so gen.py's output is unchanged.",
]


def main(outdir):
    trtllm_static()
    trtllm_v017()
    trtllm_v10()
    mlperf_v41()
    mlperf_v40()
    llamacpp_readme()
    xdai_llama3()
    xdai_llama2()
    reddit()
    vllm_blog()
    bert_extra()
    ENTRIES.sort(key=lambda e: (e["source_kind"], e["runtime_class"], e["model"], e["device"], e["device_count"],
                                e["metric"], e["input_len"] or 0, e["output_len"] or 0, str(e.get("batch")),
                                str(e.get("concurrency")), str(e.get("request_rate_qps")), e["source"].get("commit", ""),
                                e["value"]))
    doc = {"schema": "onnxperf.published-llm/1", "notes": NOTES, "entries": ENTRIES}
    with open(f"{outdir}/llm_inference.json", "w") as f:  # one entry per line: small diffs, a third of the size
        head = json.dumps({k: v for k, v in doc.items() if k != "entries"}, indent=1, ensure_ascii=False)
        f.write(head[:-2] + ',\n "entries": [\n')
        f.write(",\n".join(json.dumps(e, ensure_ascii=False, separators=(", ", ": ")) for e in ENTRIES))
        f.write("\n ]\n}\n")
    BERT.sort(key=lambda e: (e["model"], e["device"], e["precision"], e["batch"], e["seq_len"], e["runtime"]))
    bdoc = {"schema": "onnxperf.published-gpu/1", "notes": [NOTES[0].replace("LLM (and MLPerf ResNet-50/BERT)", "BERT"), NOTES[-1]],
            "entries": BERT}
    with open(f"{outdir}/bert_extra.json", "w") as f:
        json.dump(bdoc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    for label, key in (("source", lambda e: e["source"].get("repo") or e["source"]["url"]),
                       ("device", lambda e: e["device"]), ("metric", lambda e: e["metric"])):
        print(f"-- by {label}")
        for k, v in sorted(Counter(map(key, ENTRIES)).items(), key=lambda kv: -kv[1]):
            print(f"{v:5d} {k}")
    print("llm entries", len(ENTRIES), "bert_extra entries", len(BERT))


if __name__ == "__main__":
    main(sys.argv[1])
