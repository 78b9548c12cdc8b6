# A shape argument that disagrees with the folder's config.json.
# want: 7:13 Model argument contradicts config.json
# detail: layers = 2, but the folder's config.json has num_hidden_layers = 1.
model "m" {
  from    = "../../model/hf/testdata/folders/single"
  seq_len = 32
  layers  = 2
  hidden  = 8
}
