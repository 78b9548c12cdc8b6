# Matches fidelity.py's HBM_* constants.
hbm {
  bytes  = "4GiB"
  warmup = 3
  iters  = 20
}
