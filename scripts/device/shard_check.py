"""Reads token shards written by plugins/dataprep/shard with numpy alone,
following Megatron-LM's MMIDIDX layout, and prints each document, so the
format is checked by a reader that shares no code with the writer.

    python3 scripts/device/shard_check.py PREFIX_OR_NPY [...]

A name ending in .npy is read with numpy.load; anything else is a Megatron
prefix (PREFIX.idx and PREFIX.bin). Exits non-zero on any inconsistency.
"""

import struct
import sys

import numpy as np

MEGATRON_DTYPES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64,
                   6: np.float64, 7: np.float32, 8: np.uint16}


def read_megatron(prefix):
    with open(prefix + ".idx", "rb") as f:
        assert f.read(9) == b"MMIDIDX\x00\x00", "bad magic"
        (version,) = struct.unpack("<Q", f.read(8))
        assert version == 1, f"version {version}"
        (code,) = struct.unpack("<B", f.read(1))
        dtype = MEGATRON_DTYPES[code]
        (seqs,) = struct.unpack("<Q", f.read(8))
        (docs,) = struct.unpack("<Q", f.read(8))
        offset = f.tell()
    idx = np.memmap(prefix + ".idx", mode="r", order="C")
    sizes = np.frombuffer(idx, dtype=np.int32, count=seqs, offset=offset)
    pointers = np.frombuffer(idx, dtype=np.int64, count=seqs, offset=offset + sizes.nbytes)
    doc_idx = np.frombuffer(idx, dtype=np.int64, count=docs, offset=offset + sizes.nbytes + pointers.nbytes)
    assert offset + sizes.nbytes + pointers.nbytes + doc_idx.nbytes == len(idx), "index length"
    bin_ = np.memmap(prefix + ".bin", mode="r", dtype=dtype, order="C")
    itemsize = np.dtype(dtype).itemsize
    assert (pointers == np.concatenate(([0], np.cumsum(sizes[:-1], dtype=np.int64) * itemsize))[:seqs]).all(), "pointers"
    assert int(sizes.sum()) == len(bin_), "bin length"
    assert doc_idx[0] == 0 and doc_idx[-1] == seqs, "doc_idx ends"
    out = []
    for d in range(docs - 1):
        toks = []
        for s in range(doc_idx[d], doc_idx[d + 1]):
            start = pointers[s] // itemsize
            toks.extend(int(t) for t in bin_[start:start + sizes[s]])
        out.append(toks)
    return np.dtype(dtype).name, out


def main():
    for name in sys.argv[1:]:
        if name.endswith(".npy"):
            arr = np.load(name, mmap_mode="r")
            print(f"{name}: npy {arr.dtype} shape {arr.shape} first {arr[:8].tolist()}")
            continue
        dtype, docs = read_megatron(name)
        tokens = sum(len(d) for d in docs)
        print(f"{name}: megatron {dtype}, {len(docs)} documents, {tokens} tokens")
        for k, d in enumerate(docs[:5]):
            print(f"  doc {k}: {d[:12]}{' ...' if len(d) > 12 else ''}")


if __name__ == "__main__":
    main()
