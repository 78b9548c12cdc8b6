# gpuflow's side of scripts/device/fidelity.sh: GPU state, no PyTorch twin.
hardware = profile
health {}
