"""config.json as the trainer loads it, without PyTorch. testdata/ holds
configs plugins/train wrote (go test ./plugins/train -run
TestTrainerConfigFiles -update): config.json sets every field."""

import copy
import dataclasses
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import config as C  # noqa: E402

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")


def written(name):
    with open(os.path.join(TESTDATA, name)) as f:
        return json.load(f)


class LoadTest(unittest.TestCase):
    def test_every_field_goes_over(self):
        raw = written("config.json")
        cfg = C.load(os.path.join(TESTDATA, "config.json"))
        self.assertEqual(dataclasses.asdict(cfg), raw)
        self.assertEqual(cfg.lora.targets, ["q_proj", "v_proj"])
        self.assertIsInstance(cfg.model.rope_theta, float)
        self.assertIs(cfg.layout.scatter_gather, True)

    def test_what_go_leaves_out_takes_its_default(self):
        cfg = C.load(os.path.join(TESTDATA, "pretrain.json"))
        self.assertIsNone(cfg.lora)
        self.assertEqual((cfg.base, cfg.resume_from, cfg.merge, cfg.adapter_params), ("", "", False, 0))
        self.assertIsNone(cfg.layout.overlap_grad_reduce)

    def test_the_evaluators_config(self):
        raw = written("eval.json")
        cfg = C.load(os.path.join(TESTDATA, "eval.json"), C.EvalConfig)
        self.assertEqual((cfg.stage, cfg.data, cfg.weights_format), (raw["stage"], raw["data"], raw["weights_format"]))
        self.assertEqual((cfg.layout.dp, cfg.generate.max_new_tokens, cfg.generate.stop), (2, 6, []))
        self.assertEqual((cfg.base, cfg.max_tokens, cfg.layout.attention), ("", 0, ""))
        self.assertIsInstance(cfg.choices, C.ChoicesFiles)

    def test_problems_name_the_field(self):
        cases = {
            "unknown field": (lambda c: c["layout"].update(ep=2), "config.layout has unknown field ep"),
            "missing field": (lambda c: c["model"].pop("vocab"), "config.model.vocab is missing"),
            "text for a number": (lambda c: c.update(steps="6"), 'config.steps must be a whole number, not a string "6"'),
            "fraction for a whole number": (lambda c: c.update(seed=1.5), "config.seed must be a whole number, not a number 1.5"),
            "a boolean is no number": (lambda c: c["layout"].update(tp=True), "config.layout.tp must be a whole number, not a boolean true"),
            "list element": (lambda c: c["lora"].update(targets=["q_proj", 3]), "config.lora.targets[1] must be a string, not a number 3"),
            "null where a list goes": (lambda c: c.update(data=None), "config.data must be a list, not null"),
            "object where a struct goes": (lambda c: c.update(model=[]), "config.model must be an object, not a list"),
        }
        for name, (change, want) in cases.items():
            with self.subTest(name):
                raw = copy.deepcopy(written("config.json"))
                change(raw)
                with self.assertRaises(C.ConfigError) as e:
                    C.from_dict(C.RunConfig, raw)
                self.assertTrue(str(e.exception).startswith(want), str(e.exception))

    def test_a_file_that_is_no_json(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write("{")
        with self.assertRaises(C.ConfigError):
            C.load(f.name)
        os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
