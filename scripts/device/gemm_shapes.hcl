# The benchmark plugin's square GEMM sweep behind the estimator's
# GEMM-efficiency-by-shape model (docs/estimator.md, "GEMM efficiency").
gemm {
  dtypes   = ["bf16", "fp16"]
  sizes    = [256, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384]
  top_k    = 8
  warmup   = 5
  warmup_s = 0
  rest_s   = 0.2
  repeats  = 3
  iters    = 50
}
