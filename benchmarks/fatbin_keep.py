"""Zero the payloads of every cubin but one architecture's in a shared library's ``.nv_fatbin`` section, so
that the library compresses to what one GPU needs (benchmarks/ort_cuda_device.sh: onnxruntime's 284 MB
CUDA provider -> 52 MB with xz when only sm_90 is kept). The headers stay, so every offset and size in
the file is unchanged; the CUDA runtime loads the cubin for the device's architecture and never reads
the zeroed ones (a device of another architecture would fail to load them).

    python benchmarks/fatbin_keep.py libonnxruntime_providers_cuda.so out.so --keep 90

Fatbin layout (as cuobjdump reads it): containers of a 16-byte header (magic 0xBA55ED50, version,
header size, size of the entries) followed by entries of a header (kind u16: 1 PTX, 2 cubin; version
u16; header size u32; padded payload size u64; ...; the SM version u32 at byte 28) and the payload.
"""

from __future__ import annotations

import argparse
import struct
import subprocess
from collections import Counter

MAGIC = 0xBA55ED50


def section(path: str, name: str = ".nv_fatbin") -> tuple[int, int]:
    """(file offset, size) of section ``name`` (readelf)."""
    for line in subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.replace("[ ", "[").split()
        if name in parts:
            i = parts.index(name)
            return int(parts[i + 3], 16), int(parts[i + 4], 16)
    raise SystemExit(f"{path}: no {name} section")


def keep(data: bytearray, start: int, size: int, archs: set[int]) -> tuple[Counter, int]:
    """Zero in place every entry's payload that is not a cubin of ``archs``; (entries by (kind, sm), bytes zeroed)."""
    pos, end, seen, zeroed = start, start + size, Counter(), 0
    while pos < end:
        magic, _version, hsize, fatsize = struct.unpack_from("<IHHQ", data, pos)
        if magic != MAGIC:  # padding between containers
            pos += 8
            continue
        e, cend = pos + hsize, pos + hsize + fatsize
        while e < cend:
            kind, _v, ehsize, padded = struct.unpack_from("<HHIQ", data, e)
            sm = struct.unpack_from("<I", data, e + 28)[0]
            seen[(kind, sm)] += 1
            if not (kind == 2 and sm in archs):
                data[e + ehsize:e + ehsize + padded] = bytes(padded)
                zeroed += padded
            e += ehsize + padded
        pos = cend
    return seen, zeroed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--keep", type=int, nargs="+", default=[90], help="SM versions whose cubins stay (90: Hopper)")
    a = ap.parse_args(argv)
    data = bytearray(open(a.src, "rb").read())
    seen, zeroed = keep(data, *section(a.src), set(a.keep))
    for (kind, sm), n in sorted(seen.items()):
        print(f"{'cubin' if kind == 2 else 'ptx'} sm_{sm}: {n} entries")
    print(f"zeroed {zeroed:,} bytes")
    open(a.dst, "wb").write(data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
