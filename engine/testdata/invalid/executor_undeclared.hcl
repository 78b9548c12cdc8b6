# A stage naming an executor nobody declared, with a suggestion.
# want: 8:14 Reference to undeclared executor
# detail: Did you mean "executor.slurm.cluster"?
executor "slurm" "cluster" {
}

stage "probe" "p" {
  executor = executor.slurm.clutser
}
