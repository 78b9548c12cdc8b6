# A time limit Slurm cannot take: it counts whole minutes.
# want: 5:16 Invalid time_limit
# detail: Slurm counts time limits in whole minutes
executor "slurm" "quick" {
  time_limit = "30s"
}

stage "probe" "p" {
  executor = executor.slurm.quick
}
