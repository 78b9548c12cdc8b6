"""Where a trainer parameter lies in a Hugging Face tensor that is not
simply its own: GPT-2 fuses q, k and v into one tensor and stores its
linear layers (Conv1D) as [in, out]. A family's to_hf returns a Slot for
such a parameter and a plain name for the rest."""

from typing import NamedTuple


class Slot(NamedTuple):
    key: str
    # The parameter is block `part` of `parts` equal blocks along the
    # tensor's output dimension.
    part: int = 0
    parts: int = 1
    # Stored [in, out] (Conv1D) rather than [out, in] (nn.Linear).
    transposed: bool = False


def slot(located):
    """A family's to_hf answer as a Slot."""
    return located if isinstance(located, Slot) else Slot(located)


def hf_shape(s: Slot, shape):
    """The shape of the Hugging Face tensor that holds a parameter of
    global shape `shape` at slot s."""
    out = shape[0] * s.parts
    if len(shape) == 1:
        return (out,)
    return (shape[1], out) if s.transposed else (out, *shape[1:])


def hf_box(s: Slot, shape, offset, size):
    """The slices of that tensor holding the box (offset, size) of the
    parameter, in the tensor's own dimension order."""
    start = s.part * shape[0] + offset[0]
    out = slice(start, start + size[0])
    rest = [slice(o, o + n) for o, n in zip(offset[1:], size[1:])]
    return (*rest, out) if s.transposed else (out, *rest)
