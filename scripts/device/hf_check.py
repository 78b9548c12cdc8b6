"""Checks gpuflow's Hugging Face interchange against transformers and PEFT
on small random-weight models made on the spot (AutoConfig-style configs,
from_config, save_pretrained), one per supported architecture (GPT-2 tied
and untied among them, whose LoRA export PEFT loads onto its fused c_attn),
and Mistral and Qwen2 with sliding windows shorter than the sequence.

  python3 hf_check.py make WORK              models, data, a tokenizer
  python3 hf_check.py logits WORK TRAINER    gpuflow's forward vs transformers'
  torchrun --nproc-per-node 2 hf_check.py probe WORK TRAINER
                                             what each rank reads when loading
  python3 hf_check.py compare WORK           exports, PEFT, losses by layout

Results are JSON lines in WORK/results.jsonl; `table` prints them as
Markdown.
"""

import argparse
import glob
import inspect
import json
import os
import sys
import time

import numpy as np
import torch

SEQ = 32
# Tolerances on logits, as the largest difference over the largest logit.
TOL = {"fp32": 1e-4, "bf16": 3e-2}
SMALL = dict(hidden_size=64, intermediate_size=160, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
             vocab_size=256, max_position_embeddings=256)
# GPT-2 of the same size, under GPT2Config's names; dropout off so that
# a training step is the same in both.
GPT2_SMALL = dict(n_embd=64, n_inner=160, n_layer=4, n_head=4, vocab_size=256, n_positions=256, activation_function="gelu_new",
                  resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
LLAMA31_ROPE = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 64}
ARCHS = {
    "llama3.1": ("LlamaConfig", dict(SMALL, rms_norm_eps=1e-5, rope_theta=500000.0, rope=LLAMA31_ROPE, tie_word_embeddings=False)),
    "llama3.2-tied": ("LlamaConfig", dict(SMALL, rms_norm_eps=1e-5, rope_theta=500000.0, rope=LLAMA31_ROPE, tie_word_embeddings=True, head_dim=16)),
    "qwen2": ("Qwen2Config", dict(SMALL, rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=False)),
    "qwen2-tied": ("Qwen2Config", dict(SMALL, rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True)),
    "mistral": ("MistralConfig", dict(SMALL, rms_norm_eps=1e-5, rope_theta=10000.0, sliding_window=64, tie_word_embeddings=False)),
    # Sliding windows shorter than the sequence (SEQ): in every layer, and
    # in Qwen2's layers from max_window_layers on.
    "mistral-window": ("MistralConfig", dict(SMALL, rms_norm_eps=1e-5, rope_theta=10000.0, sliding_window=8, tie_word_embeddings=False)),
    "qwen2-window": ("Qwen2Config", dict(SMALL, rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=False, use_sliding_window=True,
                                         sliding_window=8, max_window_layers=2)),
    "gpt2": ("GPT2Config", dict(GPT2_SMALL, tie_word_embeddings=True)),
    "gpt2-untied": ("GPT2Config", dict(GPT2_SMALL, tie_word_embeddings=False)),
}


def record(work, **row):
    with open(os.path.join(work, "results.jsonl"), "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)


def make_config(cls_name, kw):
    import transformers
    cls = getattr(transformers, cls_name)
    kw = dict(kw)
    if cls_name == "GPT2Config":  # learned positions: no rotary settings
        return cls(**kw)
    rope, theta = kw.pop("rope", None), kw.pop("rope_theta")
    if "rope_parameters" in inspect.signature(cls.__init__).parameters:
        kw["rope_parameters"] = dict(rope or {"rope_type": "default"}, rope_theta=theta)
    else:
        kw["rope_theta"] = theta
        if rope:
            kw["rope_scaling"] = rope
    return cls(**kw)


def make_tokenizer(folder, vocab):
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    tok = Tokenizer(WordLevel({f"t{i}": i for i in range(vocab)}, unk_token="t0"))
    tok.pre_tokenizer = Whitespace()
    tok.save(os.path.join(folder, "tokenizer.json"))


def write_shard(prefix, tokens):
    """A Megatron indexed dataset of one document (uint16 tokens)."""
    tokens.astype(np.uint16).tofile(prefix + ".bin")
    with open(prefix + ".idx", "wb") as f:
        f.write(b"MMIDIDX\x00\x00" + (1).to_bytes(8, "little") + bytes([8]) + (1).to_bytes(8, "little") + (2).to_bytes(8, "little"))
        f.write(np.array([len(tokens)], np.int32).tobytes() + np.array([0], np.int64).tobytes() + np.arange(2, dtype=np.int64).tobytes())


def cmd_make(a):
    from transformers import AutoModelForCausalLM
    torch.manual_seed(0)
    for name, (cls, kw) in ARCHS.items():
        folder = os.path.join(a.work, "models", name)
        model = AutoModelForCausalLM.from_config(make_config(cls, kw), dtype=torch.float32)
        with torch.no_grad():  # biases and norms away from their zero and one starts
            for n, p in model.named_parameters():
                if n.endswith(".bias") or "norm" in n or ".ln_" in n:
                    p.add_(torch.randn_like(p) * 0.1)
        model.save_pretrained(folder, max_shard_size="200KB")
        make_tokenizer(folder, kw["vocab_size"])
        print("made", folder, sorted(os.listdir(folder)), flush=True)
    rng = np.random.default_rng(0)
    os.makedirs(os.path.join(a.work, "data"), exist_ok=True)
    write_shard(os.path.join(a.work, "data", "train"), rng.integers(0, SMALL["vocab_size"], 40000))
    big = os.path.join(a.work, "models", "big")
    cfg = make_config("Qwen2Config", dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
                                          num_key_value_heads=4, vocab_size=32000, max_position_embeddings=1024, rms_norm_eps=1e-6,
                                          rope_theta=1000000.0, tie_word_embeddings=False))
    model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    model.save_pretrained(big, max_shard_size="200MB")
    print("made", big, sorted(os.listdir(big)), flush=True)


def model_section(hf, folder):
    """The model section of the trainer's config.json for a Hugging Face
    folder, as plugins/train writes it (config.py's ModelConfig)."""
    import config as C
    if hf["architectures"][0] == "GPT2LMHeadModel":
        shape = {"layers": hf["n_layer"], "hidden": hf["n_embd"], "ffn_hidden": hf.get("n_inner") or 4 * hf["n_embd"],
                 "heads": hf["n_head"], "kv_heads": hf["n_head"], "tied_embeddings": hf.get("tie_word_embeddings", True),
                 "activation": "gelu"}
    else:
        shape = {"layers": hf["num_hidden_layers"], "hidden": hf["hidden_size"], "ffn_hidden": hf["intermediate_size"],
                 "heads": hf["num_attention_heads"], "kv_heads": hf.get("num_key_value_heads") or hf["num_attention_heads"],
                 "tied_embeddings": hf.get("tie_word_embeddings", False), "activation": "swiglu"}
    return C.from_dict(C.ModelConfig, dict(shape, vocab=hf["vocab_size"], seq_len=SEQ, architecture=hf["architectures"][0],
                                           rope_theta=500000.0, norm_eps=1e-5, hf=folder))


def gpuflow_model(trainer, folder, device, dtype):
    """The trainer's own model, loaded by the trainer's own loader."""
    sys.path.insert(0, trainer)
    import hf as H
    import model as M
    import models
    m = model_section(models.read_config(folder), folder)
    args, fam = models.model_args(m)
    with torch.device("meta"):
        net = M.Transformer(args)
    net.to_empty(device=device)
    H.load(folder, [net], fam.to_hf, lambda k: True)
    net.init_buffers(device)
    return net.to(dtype).eval()


def hf_model(folder, device, dtype):
    from transformers import AutoModelForCausalLM
    model, info = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, output_loading_info=True)
    return model.to(device).eval(), info


def tokens(vocab, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (2, SEQ), generator=g)


def rel_diff(a, b):
    a, b = a.float().cpu(), b.float().cpu()
    return float((a - b).abs().max() / b.abs().max())


@torch.no_grad()
def cmd_logits(a):
    cases = [("fp32", "cpu", torch.float32)]
    if torch.cuda.is_available():
        cases += [("fp32", "cuda", torch.float32), ("bf16", "cuda", torch.bfloat16)]
    for name in ARCHS:
        folder = os.path.join(a.work, "models", name)
        x = tokens(SMALL["vocab_size"])
        for prec, dev, dtype in cases:
            ours = gpuflow_model(a.trainer, folder, torch.device(dev), dtype)(x.to(dev))
            theirs = hf_model(folder, dev, dtype)[0](x.to(dev)).logits
            d = rel_diff(ours, theirs)
            record(a.work, check="logits", arch=name, device=dev, precision=prec, rel_diff=d, tol=TOL[prec], ok=d <= TOL[prec])


def proc_rchar():
    with open("/proc/self/io") as f:
        return int(next(l for l in f if l.startswith("rchar")).split()[1])


def cmd_probe(a):
    """Under 2 gloo ranks on CPU: the trainer's loader into an FSDP-sharded
    model (bytes each rank read, GB/s from a warm page cache), and
    torch.distributed.checkpoint's HuggingFaceStorageReader into a state
    dict sharded the same way (bytes read() returned to each rank)."""
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    folder = os.path.join(a.work, "models", "big")
    sys.path.insert(0, a.trainer)
    import hf as H
    import model as M
    import models
    import parallel
    m = model_section(models.read_config(folder), folder)
    args, fam = models.model_args(m)
    with torch.device("meta"):
        net = M.Transformer(args)
    mesh = init_device_mesh("cpu", (2,))
    parallel.apply_fsdp(net, mesh, True, compute_dtype=torch.float32)
    net.to_empty(device="cpu")
    for i in range(2):  # the second pass reads from a warm page cache
        line, every = H.load_report(folder, [net], fam.to_hf, lambda k: True, torch.device("cpu"))
    files = sum(os.path.getsize(p) for p in glob.glob(os.path.join(folder, "*.safetensors")))
    if rank == 0:
        record(a.work, check="load", loader="safe_open get_slice (gpuflow)", ranks=2, bytes_per_rank=[e[0] for e in every],
               file_bytes=files, seconds=max(e[2] for e in every), line=line)
    from safetensors import safe_open
    from torch.distributed.checkpoint import load as dcp_load
    try:
        from torch.distributed.checkpoint import HuggingFaceStorageReader
    except ImportError:
        from torch.distributed.checkpoint.hf_storage import HuggingFaceStorageReader
    wm = H.weight_map(folder)
    sd = {}
    for key, file in wm.items():
        with safe_open(os.path.join(folder, file), framework="pt") as f:
            shape, dtype = f.get_slice(key).get_shape(), f.get_slice(key).get_dtype()
        t = torch.zeros(shape, dtype={"BF16": torch.bfloat16, "F32": torch.float32}[dtype])
        sd[key] = distribute_tensor(t, mesh, [Shard(0)])
    dist.barrier()
    r0, t0 = proc_rchar(), time.perf_counter()
    dcp_load(sd, storage_reader=HuggingFaceStorageReader(path=folder))
    dt, read = time.perf_counter() - t0, proc_rchar() - r0
    every = [None, None]
    dist.all_gather_object(every, (read, dt))
    src = inspect.getsource(sys.modules[HuggingFaceStorageReader.__module__])
    if rank == 0:
        record(a.work, check="load", loader="DCP HuggingFaceStorageReader", ranks=2, bytes_per_rank=[e[0] for e in every],
               file_bytes=files, seconds=max(e[1] for e in every), uses_get_slice="get_slice" in src)
    dist.destroy_process_group()


def state_outputs(run_dir, address):
    for path in glob.glob(os.path.join(run_dir, ".gpuflow", "state", "*.json")):
        with open(path) as f:
            st = json.load(f)
        stage = (st.get("stages") or {}).get(address)
        if stage:
            unwrap = lambda v: v["value"] if isinstance(v, dict) and "value" in v and "type" in v else v
            return {k: unwrap(v) for k, v in (stage.get("outputs") or {}).items()}, stage.get("status"), stage.get("error", "")
    return {}, "not run", ""


@torch.no_grad()
def compare_load(a, run, arch, layout, ref_loss):
    out, status, err = state_outputs(run, "pretrain.load")
    if status != "succeeded":
        record(a.work, check="load+export", arch=arch, layout=layout, ok=False, error=(status, str(err)[:400]))
        return None
    x = tokens(SMALL["vocab_size"], seed=2)
    orig = hf_model(os.path.join(a.work, "models", arch), "cpu", torch.float32)[0](x).logits
    exported, info = hf_model(out["hf"], "cpu", torch.float32)
    d = rel_diff(exported(x).logits, orig)
    problems = {k: v for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    files = sorted(os.listdir(out["hf"]))
    ok = d <= TOL["fp32"] and not problems and "tokenizer.json" in files and "config.json" in files
    loss_diff = None if ref_loss is None else abs(out["final_loss"] - ref_loss)
    loss_tol = 1e-2 if layout == "gpu" else 1e-4  # the GPU computes in bf16, CPU ranks in fp32
    record(a.work, check="load+export", arch=arch, layout=layout, rel_diff=d, step1_loss=out["final_loss"], loss_diff_vs_1rank=loss_diff,
           loading_problems=problems, files=files, loss_tol=loss_tol, ok=ok and (loss_diff is None or loss_diff <= loss_tol))
    return out["final_loss"]


@torch.no_grad()
def peft_vs_merged(base_folder, peft_folder, merged_folder):
    from peft import PeftModel
    x = tokens(SMALL["vocab_size"], seed=3)
    base = hf_model(base_folder, "cpu", torch.float32)[0]
    plain = base(x).logits
    adapted = PeftModel.from_pretrained(base, peft_folder).eval()(x).logits
    merged = hf_model(merged_folder, "cpu", torch.float32)[0](x).logits
    return rel_diff(adapted, merged), rel_diff(plain, merged)


def compare_lora(a, run, arch, layout):
    out, status, err = state_outputs(run, "finetune.lora")
    if status != "succeeded":
        record(a.work, check="lora export", arch=arch, layout=layout, ok=False, error=(status, str(err)[:400]))
        return
    d, moved = peft_vs_merged(os.path.join(a.work, "models", arch), out["peft"], out["hf"])
    record(a.work, check="lora export", arch=arch, layout=layout, peft_vs_merged=d, base_vs_merged=moved,
           ok=d <= TOL["fp32"] and moved > 10 * TOL["fp32"])


def cmd_compare(a):
    for arch in ARCHS:
        ref = None
        for run in sorted(glob.glob(os.path.join(a.work, "runs", arch, "load-*"))):
            layout = os.path.basename(run)[len("load-"):]
            loss = compare_load(a, run, arch, layout, ref if layout != "1" else None)
            if layout == "1":
                ref = loss
        for run in sorted(glob.glob(os.path.join(a.work, "runs", arch, "lora-*"))):
            compare_lora(a, run, arch, os.path.basename(run)[len("lora-"):])
    chain = os.path.join(a.work, "runs", "chain")
    tune, status, err = state_outputs(chain, "finetune.tune")
    scratch, _, _ = state_outputs(chain, "pretrain.scratch")
    if status != "succeeded":
        record(a.work, check="chain", ok=False, error=(status, str(err)[:400]))
        return
    # The chain's model comes from a preset, so its exports are stored in
    # bf16: the merged weights are rounded where PEFT adds in fp32.
    d, moved = peft_vs_merged(scratch["hf"], tune["peft"], tune["hf"])
    record(a.work, check="chain", peft_vs_merged=d, tol=TOL["bf16"], base_vs_merged=moved, ok=d <= TOL["bf16"] and moved > 10 * d)


def cmd_table(a):
    rows = [json.loads(l) for l in open(os.path.join(a.work, "results.jsonl"))]
    for r in rows:
        keys = [k for k in r if k not in ("line", "files")]
        print("| " + " | ".join(f"{k}={r[k]:.3g}" if isinstance(r[k], float) else f"{k}={r[k]}" for k in keys) + " |")
    bad = [r for r in rows if r.get("ok") is False]
    print(f"{len(rows)} checks, {len(bad)} failed")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["make", "logits", "probe", "compare", "table"])
    ap.add_argument("work")
    ap.add_argument("trainer", nargs="?")
    a = ap.parse_args()
    {"make": cmd_make, "logits": cmd_logits, "probe": cmd_probe, "compare": cmd_compare, "table": cmd_table}[a.cmd](a)


if __name__ == "__main__":
    main()
