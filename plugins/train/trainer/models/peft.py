"""LoRA adapters under PEFT's names, the rule every family's peft_tensors
follows: the trainer's layers.3.attention.q_proj.lora_a.weight is PEFT's
base_model.model.<transformers' module>.lora_A.weight."""


def adapter_of(fqn):
    """A trainer adapter's module and PEFT's name for its matrix ("A" or
    "B")."""
    module, which = fqn.rsplit(".lora_", 1)
    return module, "A" if which.startswith("a") else "B"


def peft_name(hf_module, ab):
    """PEFT's name for matrix ab ("A" or "B") of the adapter on
    transformers' module hf_module."""
    return f"base_model.model.{hf_module}.lora_{ab}.weight"
