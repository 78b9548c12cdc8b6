"""An optional profile of a few training steps, to see where a layout's
step time goes: GPUFLOW_TRAIN_PROFILE=N profiles N steps after the first
tenth, and each rank writes profile-rank<R>.txt in the run folder: the
steps' wall time and the operators and kernels that took the most host
and device time; and profile-rank<R>.trace.json.gz, the timeline
(Chrome trace format), which scripts/device/trace_summary.py reads across
ranks to tell a collective's transfer from its wait for the other ranks.
"""

import os
import time

import torch

from report import TrainerError, warmup_steps_to_skip

ENV = "GPUFLOW_TRAIN_PROFILE"


def steps_to_profile():
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return 0
    try:
        n = int(raw)
    except ValueError:
        raise TrainerError(f"{ENV} is not a number", f"{ENV}={raw!r}; set it to how many steps to profile, or unset it.")
    return max(n, 0)


class StepProfiler:
    """Profiles steps [first, last) of a run of total steps; a no-op when
    GPUFLOW_TRAIN_PROFILE is unset."""

    def __init__(self, total, rank, device):
        n = steps_to_profile()
        self.first = warmup_steps_to_skip(total)
        self.last = min(total, self.first + n) if n else -1
        self.rank, self.prof, self.t0 = rank, None, 0.0
        self.cuda = device.type == "cuda"

    def _sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def before(self, step):
        if step != self.first or self.last <= self.first:
            return
        self._sync()
        acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if self.cuda else [])
        self.prof = torch.profiler.profile(activities=acts)
        self.prof.__enter__()
        self.t0 = time.perf_counter()

    def after(self, step):
        if self.prof is None or step + 1 != self.last:
            return
        self._sync()
        wall = time.perf_counter() - self.t0
        self.prof.__exit__(None, None, None)
        events = self.prof.key_averages()
        n = self.last - self.first
        lines = [f"steps {self.first}-{self.last - 1}: wall {wall / n * 1e3:.1f} ms per step "
                 f"(the tables' totals are over all {n} steps; a kernel's time shows both under its own name and under the operator that launched it)", ""]
        for key in ("self_cpu_time_total", "self_device_time_total"):
            lines.append(events.table(sort_by=key, row_limit=25, max_name_column_width=60))
        with open(f"profile-rank{self.rank}.txt", "w") as f:
            f.write("\n".join(lines))
        self._export_trace()
        self.prof = None

    def _export_trace(self):
        # The profiler compresses a path ending in .gz itself. Written whole
        # under a name the readers' pattern (profile-rank*) skips, then
        # renamed: a reader never sees half a trace.
        final = f"profile-rank{self.rank}.trace.json.gz"
        partial = "partial-" + final
        self.prof.export_chrome_trace(partial)
        os.replace(partial, final)
