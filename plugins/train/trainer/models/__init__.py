"""Model families the trainer reads from and writes to Hugging Face
folders, one package each (as torchtitan lays them out): its config.json
reader (args.py) and its key map (state_dict_adapter.py). The decoder
itself is model.py's, which all three are.
"""

import json
import os

from models import llama, mistral, qwen2

FAMILIES = {f.ARCHITECTURE: f for f in (llama, qwen2, mistral)}


class UnsupportedModel(Exception):
    pass


def read_config(folder):
    with open(os.path.join(folder, "config.json")) as f:
        return json.load(f)


def family(hf_config):
    """The family package for a config.json's architecture."""
    arch = (hf_config.get("architectures") or [""])[0]
    if arch not in FAMILIES:
        raise UnsupportedModel(f"architecture {arch or 'unnamed'} is not one the trainer builds; it builds {', '.join(sorted(FAMILIES))}")
    return FAMILIES[arch]


def model_args(m):
    """ModelArgs for the trainer's model section: a preset's from the shape
    alone, a folder's from its config.json too."""
    from model import ModelArgs
    if not m.hf:
        return ModelArgs.from_config(m), llama
    hf = read_config(m.hf)
    fam = family(hf)
    return fam.model_args(hf, m), fam
