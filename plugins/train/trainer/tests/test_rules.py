"""The trainer refuses what gpuflow's plan refuses: every combination in
rule_cases.json (written by plugins/train's TestRuleTable from the same
rules.json) gets the same rules from the trainer's own check. Needs no
PyTorch.

  python3 -m unittest discover -s plugins/train/trainer/tests -p 'test_rules.py' -v
"""

import collections
import hashlib
import itertools
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import rules  # noqa: E402

LAYOUT_AXES = ("tp", "pp", "vp", "dp", "cp", "fsdp", "global_batch", "precision", "recompute")


def show(v):
    return str(v).lower() if isinstance(v, bool) else str(v)


def trainer_refusals(case):
    layout = {k: case[k] for k in LAYOUT_AXES}
    layout["micro_batch"] = 1
    model = {"tied_embeddings": case["tied"], "activation": "swiglu"}
    lora = {"rank": 8, "alpha": 16, "targets": ["q_proj"]} if case["lora"] else None
    return [r["name"] for r in rules.refusals(rules.facts(layout, model, lora, case["device"]))]


class RuleTableTest(unittest.TestCase):
    def test_trainer_refuses_what_the_plan_refuses(self):
        with open(os.path.join(HERE, "rule_cases.json")) as f:
            golden = json.load(f)
        names = [a["name"] for a in golden["axes"]]
        digest, count, runs, by = hashlib.sha256(), 0, 0, collections.Counter()
        for values in itertools.product(*(a["values"] for a in golden["axes"])):
            case = dict(zip(names, values))
            if case["vp"] > 1 and case["pp"] == 1:
                continue  # the engine refuses it before any stage plans
            refused = trainer_refusals(case)
            by.update(refused)
            runs += not refused
            count += 1
            line = " ".join(f"{n}={show(case[n])}" for n in names) + ": " + (",".join(refused) or "runs")
            digest.update((line + "\n").encode())
        self.assertEqual(count, golden["cases"])
        self.assertEqual(runs, golden["runs"])
        self.assertEqual(dict(by), golden["refused_by"])
        self.assertEqual(digest.hexdigest(), golden["sha256"])

    def test_message_fills_the_facts(self):
        f = rules.facts({"tp": 2, "pp": 1, "dp": 1, "cp": 4, "micro_batch": 1, "global_batch": 8}, {}, None, "cuda")
        (r,) = rules.refusals(f)
        self.assertEqual(r["name"], "cp-needs-gpus")
        self.assertIn("cp = 4", rules.message(r, f))


if __name__ == "__main__":
    unittest.main()
