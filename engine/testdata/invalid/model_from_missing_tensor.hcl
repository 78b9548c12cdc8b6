# Shards that lack a tensor the architecture needs.
# want: 5:10 Unusable model folder
# detail: no safetensors file holds model.layers.0.mlp.down_proj.weight
model "m" {
  from = "../../model/hf/testdata/folders/missing_tensor"
}
