"""The trainer's pre-flight check, run by gpuflow with the Python that will
train, before torchrun starts. It prints one JSON object (the last line of
stdout): the software found and the problems that would make the run fail
or crawl, each with a summary and a detail that says what to do.

  python3 preflight.py --gpus 4 --precision bf16

Problems: no PyTorch, no CUDA GPU, fewer GPUs than the layout runs per
node, no NCCL (the run would fall back to Gloo), fp8 on a GPU without fp8
products, and an NCCL in PyTorch whose major.minor version differs from the
system's libnccl (ranks on other nodes, or tools linked against the
system's, would then speak another NCCL). A difference in the patch level
alone is a warning. GPUFLOW_ALLOW_NCCL_MISMATCH=1 turns the mismatch into a
warning too.
"""

import argparse
import ctypes
import json
import os
import platform
import subprocess

SYSTEM_NCCL_DIRS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/nccl/lib", "/usr/local/cuda/lib64", "/usr/lib64"]


def system_nccl():
    """(version, path) of the system's libnccl.so.2, or (None, None)."""
    for path in ldconfig_paths() + [os.path.join(d, "libnccl.so.2") for d in SYSTEM_NCCL_DIRS]:
        if os.path.exists(path):
            return nccl_version(path), path
    return None, None


def ldconfig_paths():
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.split("=>")[-1].strip() for line in out.splitlines() if "libnccl.so.2" in line and "=>" in line]


def nccl_version(path):
    """Asks the library itself. A full path loads that file, not the copy
    PyTorch may have loaded under the same name."""
    try:
        lib = ctypes.CDLL(path)
        v = ctypes.c_int()
        if lib.ncclGetVersion(ctypes.byref(v)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    code = v.value  # major*10000 + minor*100 + patch since NCCL 2.9
    return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"


def check(gpus, precision, device="cuda"):
    rep = {"python": platform.python_version(), "problems": [], "warnings": []}

    def problem(summary, detail):
        rep["problems"].append({"summary": summary, "detail": detail})

    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        problem("PyTorch not found", f"The trainer's Python cannot import torch ({e}). Install PyTorch with CUDA, or set GPUFLOW_PYTHON to an interpreter that has it.")
        return rep
    rep["torch"] = torch.__version__
    rep["cuda"] = torch.version.cuda or ""
    if device == "cpu":
        if not dist.is_gloo_available():
            problem("Gloo not available", "This PyTorch has no Gloo backend, which ranks on CPU cores talk over.")
        return rep
    if not torch.cuda.is_available():
        problem("No GPU", "PyTorch sees no CUDA GPU on this machine (torch.cuda.is_available() is false); the trainer runs on NVIDIA GPUs only.")
        return rep
    rep["gpus"] = torch.cuda.device_count()
    rep["gpu_name"] = torch.cuda.get_device_name(0)
    if rep["gpus"] < gpus:
        problem("Not enough GPUs", f"The layout runs {gpus} processes on this machine, one per GPU, but PyTorch sees {rep['gpus']} GPUs. "
                "Choose a layout of fewer GPUs, or check CUDA_VISIBLE_DEVICES.")
    if not dist.is_nccl_available():
        problem("NCCL not available", "This PyTorch has no NCCL backend, so distributed training would fall back to Gloo, which moves every "
                "GPU tensor through the CPU. Install a CUDA build of PyTorch (it ships NCCL).")
        return rep
    if precision == "fp8" and torch.cuda.get_device_capability(0) < (8, 9):
        problem("fp8 not supported here", f"{rep['gpu_name']} has compute capability {torch.cuda.get_device_capability(0)}; fp8 products need 8.9 or later. Use precision = \"bf16\".")
    rep["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
    rep["system_nccl"], rep["system_nccl_path"] = system_nccl()
    compare_nccl(rep)
    return rep


def compare_nccl(rep):
    ours, theirs = rep.get("nccl"), rep.get("system_nccl")
    if not ours or not theirs or ours == theirs:
        return
    msg = (f"PyTorch uses NCCL {ours} and the system's libnccl ({rep['system_nccl_path']}) is {theirs}. Every rank of a job must "
           "speak the same NCCL; a mismatch between nodes, or with tools linked against the system's, fails or silently falls back to "
           "slower transports. Install a PyTorch built for the system's NCCL (or the matching system NCCL)")
    if ours.split(".")[:2] == theirs.split(".")[:2]:
        rep["warnings"].append({"summary": "NCCL patch levels differ", "detail": msg + "; patch levels of one minor version interoperate."})
    elif os.environ.get("GPUFLOW_ALLOW_NCCL_MISMATCH") == "1":
        rep["warnings"].append({"summary": "NCCL versions differ", "detail": msg + "; GPUFLOW_ALLOW_NCCL_MISMATCH=1 lets the run go on."})
    else:
        rep["problems"].append({"summary": "NCCL versions differ", "detail": msg + ", or set GPUFLOW_ALLOW_NCCL_MISMATCH=1 for a one-node run."})


def main():
    ap = argparse.ArgumentParser(description="gpuflow trainer pre-flight check")
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--precision", default="bf16")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    a = ap.parse_args()
    print(json.dumps(check(a.gpus, a.precision, a.device)), flush=True)


if __name__ == "__main__":
    main()
