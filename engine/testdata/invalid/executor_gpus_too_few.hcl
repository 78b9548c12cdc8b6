# An executor asking for fewer GPUs per node than the stage claims.
# want: 8:19 Executor does not fit the stage
# detail: asks for 4 GPU(s) per node, but stage probe.p needs 8
hardware "h" {
  profile = "nebius-h100-8"
}
executor "slurm" "half" {
  gpus_per_node = 4
}

stage "probe" "p" {
  hardware = hardware.h
  executor = executor.slurm.half
}
