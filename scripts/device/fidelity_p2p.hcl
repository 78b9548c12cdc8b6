# Matches fidelity.py's P2P_* constants.
p2p {
  bytes  = "1GiB"
  warmup = 3
  iters  = 10
}
