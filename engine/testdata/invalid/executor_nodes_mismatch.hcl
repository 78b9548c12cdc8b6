# An executor asking for fewer nodes than the stage's hardware has.
# want: 9:11 Executor does not fit the stage
# detail: asks for 1 node(s), but stage probe.p runs on 2
hardware "h" {
  profile = "nebius-h100-8"
  nodes   = 2
}
executor "slurm" "one" {
  nodes = 1
}

stage "probe" "p" {
  hardware = hardware.h
  executor = executor.slurm.one
}
