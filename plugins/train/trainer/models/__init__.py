"""Model families the trainer reads from and writes to Hugging Face
folders, one package each (as torchtitan lays them out): its config.json
reader (args.py) and its key map (state_dict_adapter.py). The decoder
itself is model.py's, which all of them are: Llama, Qwen2 and Mistral with
ModelArgs.activation "swiglu", GPT-2 with "gelu".
"""

import json
import os

from models import gpt2, llama, mistral, qwen2

FAMILIES = {f.ARCHITECTURE: f for f in (llama, qwen2, mistral, gpt2)}


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
    """ModelArgs for the trainer's model section and its family: a
    preset's from the shape alone (a Llama, or a GPT-2 for activation
    "gelu"), a folder's from its config.json too."""
    from model import ModelArgs
    if not m.hf:
        return ModelArgs.from_config(m), gpt2 if m.activation == "gelu" else llama
    hf = read_config(m.hf)
    fam = family(hf)
    return fam.model_args(hf, m), fam
