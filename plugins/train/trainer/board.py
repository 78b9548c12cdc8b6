"""TensorBoard event files: rank 0 writes each step's training figures and
each validation into the folder gpuflow names (config tensorboard_dir, the
run folder's tensorboard/), so `tensorboard --logdir .gpuflow/runs` shows
every run. Without the tensorboard package the run trains on and says so.
"""

import math

# Seconds between writes to disk, so a running TensorBoard sees a live run.
FLUSH_S = 10


class Board:
    def __init__(self, logdir, enabled, rep):
        self.writer = None
        if not (enabled and logdir):
            return
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as e:
            rep.log(f"no TensorBoard event files: {e}; install the tensorboard package to have them", level="warn")
            return
        self.writer = SummaryWriter(log_dir=logdir, flush_secs=FLUSH_S)

    def scalars(self, step, values):
        """Adds each finite value under its tag at step."""
        if self.writer is None:
            return
        for tag, v in values.items():
            if v is not None and math.isfinite(v):
                self.writer.add_scalar(tag, v, step)

    def close(self):
        if self.writer is not None:
            self.writer.close()
            self.writer = None
