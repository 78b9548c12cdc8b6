"""Loss masks under tensor and pipeline parallelism, on CPU ranks over gloo,
with the trainer's own loss functions: loss parallelism on the vocabulary
shards under tp2, the masked pipeline loss on the last stage under pp2.
On a batch of prompts (mask 0) then replies (mask 1), the logits of prompt
tokens must get exactly zero gradient and each reply token's logits some,
and the loss and the output layer's gradient must be the single process's.

  torchrun --nproc-per-node=2 limits_masks.py LAYOUT --trainer DIR --out FILE.json

LAYOUT is tp2 or pp2; rank 0 writes FILE.json, the figures and whether
they hold.
"""

import argparse
import json
import os
import sys
import types

import torch
import torch.distributed as dist

ARGS = {"layers": 4, "hidden": 128, "ffn_hidden": 384, "heads": 4, "kv_heads": 2, "vocab": 512, "seq_len": 64}
ROWS, MICRO, SEED = 8, 2, 1
# fp32 on CPU ranks: the split sums agree with the single process's to
# rounding.
TOLERANCE = 1e-5


def masked_batch(vocab, seq_len):
    """Samples of a prompt (mask 0) then a reply (mask 1), cut at another
    place in each row."""
    g = torch.Generator().manual_seed(3)
    tokens = torch.randint(0, vocab, (ROWS, seq_len + 1), generator=g)
    mask = torch.zeros(ROWS, seq_len + 1, dtype=torch.uint8)
    for r in range(ROWS):
        mask[r, int(torch.randint(8, seq_len - 8, (1,), generator=g)):] = 1
    return tokens, mask


def reference(M, parallel, args, inputs, labels, trained):
    """One process: the mean loss over the trained tokens, and the output
    layer's gradient."""
    m = M.Transformer(args)
    M.init_full(m, SEED, "cpu")
    loss = parallel.summed_cross_entropy(m(inputs), labels) / trained
    loss.backward()
    return loss.item(), m.output.weight.grad


def tensor_parallel(M, parallel, args, inputs, labels, trained, mesh):
    """tp2 with sequence parallelism: the logits' gradient is this rank's
    vocabulary columns, the output weight's gradient its rows."""
    part = M.Transformer(args)
    M.init_full(part, SEED, "cpu")
    parallel.apply_tp(part, mesh["tp"], True)
    with parallel.loss_context(True):
        logits = part(inputs)
        logits.retain_grad()
        loss = parallel.vocab_parallel_loss(mesh["tp"], "sum")(logits, labels) / trained
        loss.backward()
    per = args.vocab // 2
    rows = slice(mesh["tp"].get_local_rank() * per, (mesh["tp"].get_local_rank() + 1) * per)
    return loss.item(), [(logits.grad, labels)], part.output.weight.grad.to_local(), rows


def pipeline(M, parallel, args, inputs, labels, trained, mesh):
    """pp2 (1F1B) over ROWS / MICRO micro-batches: the last stage's loss
    function sees each micro-batch's labels, and records the gradient
    that reaches its logits."""
    from torch.distributed.pipelining import PipelineStage
    layout = types.SimpleNamespace(pp=2, vp=1, dp=1, tp=1)
    (stage_id, part), = parallel.build_parts(args, layout, mesh["pp"].get_local_rank(), M.Transformer)[0]
    part.to_empty(device="cpu")
    M.init_full(part, SEED, "cpu")
    stage = PipelineStage(part, stage_id, 2, torch.device("cpu"), group=mesh["pp"].get_group())
    seen = []

    def summed(logits, micro_labels):
        logits.register_hook(lambda g: seen.append((g, micro_labels)))
        return parallel.summed_cross_entropy(logits, micro_labels)

    n = ROWS // MICRO
    masked = parallel.MaskedPipelineLoss(summed, n)
    masked.scale = torch.tensor(1.0) / trained
    schedule, loss_scale = parallel.pipeline_schedule([stage], n, masked)
    if stage_id == 0:
        schedule.step(inputs)
        return None, [], None, None
    losses = []
    schedule.step(target=labels, losses=losses)
    loss = torch.stack([x.detach() for x in losses]).mean() * loss_scale
    return loss.item(), seen, part.output.weight.grad, slice(None)


def figures(ref, got, ignore):
    """This rank's checks against the single process; ignore is the label
    of a token the loss leaves out."""
    ref_loss, ref_grad = ref
    loss, seen, grad, rows = got
    if loss is None:
        return {}
    prompt_max, reply_without, reply_tokens = 0.0, 0, 0
    for g, micro_labels in seen:
        prompt = micro_labels == ignore
        prompt_max = max(prompt_max, float(g[prompt].abs().max()) if prompt.any() else 0.0)
        reply_without += int((g[~prompt].abs().sum(-1) == 0).sum())
        reply_tokens += int((~prompt).sum())
    want = ref_grad[rows]
    return {"loss": loss, "ref_loss": ref_loss, "loss_rel": abs(loss - ref_loss) / ref_loss,
            "grad_rel": float((grad - want).abs().max() / want.abs().max()), "prompt_grad_max": prompt_max,
            "reply_without_grad": reply_without, "reply_tokens": reply_tokens, "micro_batches": len(seen)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("layout", choices=["tp2", "pp2"])
    ap.add_argument("--trainer", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    sys.path.insert(0, a.trainer)
    import data as D
    import model as M
    import parallel
    dist.init_process_group("gloo")
    torch.manual_seed(SEED)
    args = M.ModelArgs(**ARGS)
    tp, pp = (2, 1) if a.layout == "tp2" else (1, 2)
    mesh = parallel.build_mesh(types.SimpleNamespace(tp=tp, pp=pp, dp=1), "cpu")
    tokens, mask = masked_batch(args.vocab, args.seq_len)
    inputs, labels = D.inputs_and_labels(tokens, mask)
    trained = (labels != D.IGNORE).sum().float()
    ref = reference(M, parallel, args, inputs, labels, trained)
    run = tensor_parallel if a.layout == "tp2" else pipeline
    mine = figures(ref, run(M, parallel, args, inputs, labels, trained, mesh), D.IGNORE)
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, mine)
    if dist.get_rank() == 0:
        ranks = [f for f in everyone if f]
        out = {"layout": a.layout, "ranks": dist.get_world_size(), "loss": ranks[0]["loss"], "ref_loss": ref[0],
               "loss_rel": max(f["loss_rel"] for f in ranks), "grad_rel": max(f["grad_rel"] for f in ranks),
               "prompt_grad_max": max(f["prompt_grad_max"] for f in ranks),
               "reply_without_grad": sum(f["reply_without_grad"] for f in ranks),
               "reply_tokens": ranks[0]["reply_tokens"], "micro_batches": ranks[0]["micro_batches"]}
        out["holds"] = (out["prompt_grad_max"] == 0.0 and out["reply_without_grad"] == 0 and out["reply_tokens"] > 0
                        and out["loss_rel"] <= TOLERANCE and out["grad_rel"] <= TOLERANCE)
        tmp = a.out + ".partial"
        with open(tmp, "w") as f:
            json.dump(out, f, indent=1)
        os.replace(tmp, a.out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
