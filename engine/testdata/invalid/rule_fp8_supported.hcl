# FP8 on a GPU without FP8 tensor cores.
# want: 39:18 Layout rule fp8-supported
hardware "h" {
  nodes = 1

  gpu {
    model      = "A100 80GB SXM"
    count      = 8
    memory_gib = 80
    hbm_tbps   = 2.04

    tflops {
      bf16 = 312
      tf32 = 156
    }
  }

  interconnect {
    kind           = "nvlink3"
    bandwidth_gbps = 300
    latency_us     = 2
    domain_size    = 8
  }

  network {
    kind = "none"
  }
}

model "m" {
  preset = "llama2-7b"
}

layout "l" {
  tp           = 2
  dp           = 4
  micro_batch  = 1
  global_batch = 8
  precision    = "fp8"
}

stage "probe" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
}
