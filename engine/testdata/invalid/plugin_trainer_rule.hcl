# A layout the trainer cannot run is refused when the stage plans, at the
# layout's argument, by the rule's name.
# want: 15:18 Trainer rule cp-needs-gpus: Context parallelism not supported by the trainer
hardware "h" {
  profile = "nebius-h100-8"
}

model "m" {
  preset = "llama2-7b"
}

layout "l" {
  tp           = 2
  dp           = 2
  cp           = 2
  micro_batch  = 1
  global_batch = 8
}

stage "pretrain" "p" {
  hardware = hardware.h
  model    = model.m
  layout   = layout.l
  data     = "data/shards"
  lr       = 2e-5
  steps    = 100
}
