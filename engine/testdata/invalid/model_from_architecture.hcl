# A folder whose architecture the trainer does not build.
# want: 5:10 Unusable model folder
# detail: architecture GPTNeoXForCausalLM is not one gpuflow can train; it trains GPT2LMHeadModel, LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM.
model "m" {
  from = "../../model/hf/testdata/folders/architecture"
}
