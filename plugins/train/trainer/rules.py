"""The trainer's rule table (rules.json, beside this file): what it refuses
to run. gpuflow checks the same table when it plans and applies a stage;
the trainer checks it again when it starts, so a config written by hand
is refused with the same rule name and reason.
"""

import json
import os

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules.json")


def load(path=PATH):
    with open(path) as f:
        return json.load(f)["rules"]


def facts(layout, model, lora, device):
    """The facts the rules read, from the trainer's config sections."""
    per = layout.get("micro_batch", 0) * layout.get("dp", 1)
    return {"tp": layout.get("tp", 1), "pp": layout.get("pp", 1), "dp": layout.get("dp", 1), "cp": layout.get("cp", 1),
            "vp": max(layout.get("vp", 1), 1), "zero": layout.get("zero", 0), "micro_batch": layout.get("micro_batch", 0),
            "global_batch": layout.get("global_batch", 0), "microbatches": layout.get("global_batch", 0) // per if per > 0 else 0,
            "fsdp": bool(layout.get("fsdp")), "sequence_parallel": bool(layout.get("sequence_parallel")),
            "precision": layout.get("precision", "bf16"), "recompute": layout.get("recompute", "none"),
            "tied": bool(model.get("tied_embeddings")), "lora": bool(lora), "device": device or "cuda",
            "activation": model.get("activation", "swiglu")}


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def compare(got, op, want):
    if op == "==":
        return got == want and isinstance(got, bool) == isinstance(want, bool)
    if op == "!=":
        return not compare(got, "==", want)
    if not (_number(got) and _number(want)):
        return False
    if op == ">":
        return got > want
    if op == "<":
        return got < want
    if op == "not_multiple_of":
        return want != 0 and int(got) % int(want) != 0
    raise ValueError(f"rules.json: unknown op {op}")


def refusals(f, rules=None):
    """The rules the facts break, in the table's order."""
    out = []
    for r in rules if rules is not None else load():
        if all(compare(f.get(c["fact"]), c["op"], f.get(c["ref"]) if "ref" in c else c.get("value")) for c in r["when"]):
            out.append(r)
    return out


def message(r, f):
    text = r["reason"]
    for k, v in f.items():
        text = text.replace("{" + k + "}", str(v).lower() if isinstance(v, bool) else str(v))
    return text
