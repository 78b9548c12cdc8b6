# Matches fidelity.py's GEMM_* constants.
gemm {
  dtypes   = ["bf16", "fp16", "tf32", "fp8"]
  sizes    = [8192, 16384]
  top_k    = 8
  warmup   = 5
  warmup_s = 0
  rest_s   = 0.5
  repeats  = 3
  iters    = 50
}
