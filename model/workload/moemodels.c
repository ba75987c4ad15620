/* moemodels.c - the built-in mixtures of experts, every shape value from the model's published configuration
 * (the source beside each; docs/model.md lists them).  The training sequence (seq) is a run setting, not a
 * shape: each model's pre-training sequence where its paper gives one, else 4096 (the Megatron-MoE model
 * zoo's benchmarking configs, yanring/Megatron-MoE-ModelZoo model_configs/benchmarking, e8650517); --seq
 * changes it.  Rotary positions, RMSNorm, SwiGLU experts and untied embeddings throughout (each config).
 * Counting: moe.c; the parameter counts are checked against the published ones by tests/unit/test_moe.c.
 */
#include "spec.h"

#define MOE(id_, name_, l, h, a, g, f, s, v, src)                                                               \
  .id = id_, .name = name_, .kind = PF_WL_TRANSFORMER, .layers = l, .hidden = h, .heads = a, .kv_heads = g,      \
  .ffn_hidden = f, .seq = s, .vocab = v, .swiglu = true, .source = src

const pf_workload pf_moe_builtins[] = {
    {MOE("mixtral-8x7b", "Mixtral 8x7B", 32, 4096, 32, 8, 14336, 4096, 32000,
         "Jiang et al. 2024, arXiv 2401.04088, Table 1 (dim 4096, 32 layers, head dim 128, 32 heads, 8 KV heads, "
         "hidden 14336, vocabulary 32000, 8 experts, top 2); Megatron-MoE model zoo Mixtral-8x7B.yaml"),
     .experts = 8, .topk = 2, .moe_ffn_hidden = 14336},
    {MOE("mixtral-8x22b", "Mixtral 8x22B", 56, 6144, 48, 8, 16384, 4096, 32000,
         "mistralai/Mixtral-8x22B-v0.1 config.json (hidden 6144, 56 layers, 48 heads, 8 KV heads, intermediate "
         "16384, vocabulary 32000, 8 local experts, 2 a token); Megatron-MoE model zoo Mixtral-8x22B.yaml"),
     .experts = 8, .topk = 2, .moe_ffn_hidden = 16384},
    {MOE("deepseek-v2-lite", "DeepSeek-V2-Lite", 27, 2048, 16, 16, 10944, 4096, 102400,
         "deepseek-ai/DeepSeek-V3 inference/configs/config_16B.json (9b4e9788): dim 2048, 27 layers, 1 dense, "
         "inter 10944, moe_inter 1408, 16 heads, 64 routed + 2 shared experts, 6 a token, q_lora 0, kv_lora 512, "
         "qk nope 128 rope 64, v 128, vocabulary 102400; DeepSeek-V2 paper arXiv 2405.04434 (sequence 4K)"),
     .experts = 64, .topk = 6, .moe_ffn_hidden = 1408, .shared_ffn_hidden = 2 * 1408, .first_dense = 1,
     .kv_lora_rank = 512, .qk_nope_dim = 128, .qk_rope_dim = 64, .v_head_dim = 128},
    {MOE("deepseek-v2", "DeepSeek-V2", 60, 5120, 128, 128, 12288, 4096, 102400,
         "deepseek-ai/DeepSeek-V3 inference/configs/config_236B.json (9b4e9788): dim 5120, 60 layers, 1 dense, "
         "inter 12288, moe_inter 1536, 128 heads, 160 routed + 2 shared experts, 6 a token, 8 groups, 3 a token, "
         "q_lora 1536, kv_lora 512, qk nope 128 rope 64, v 128, vocabulary 102400; arXiv 2405.04434 (sequence 4K)"),
     .experts = 160, .topk = 6, .moe_ffn_hidden = 1536, .shared_ffn_hidden = 2 * 1536, .first_dense = 1,
     .router_groups = 8, .router_group_topk = 3, .q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_dim = 128,
     .qk_rope_dim = 64, .v_head_dim = 128},
    {MOE("deepseek-v3", "DeepSeek-V3", 61, 7168, 128, 128, 18432, 4096, 129280,
         "deepseek-ai/DeepSeek-V3 inference/configs/config_671B.json (9b4e9788): dim 7168, 61 layers, 3 dense, "
         "inter 18432, moe_inter 2048, 128 heads, 256 routed + 1 shared experts, 8 a token, 8 groups, 4 a token, "
         "sigmoid scores, q_lora 1536, kv_lora 512, qk nope 128 rope 64, v 128, vocabulary 129280; one MTP module "
         "and sequence 4K: DeepSeek-V3 report arXiv 2412.19437 sections 2.2 and 4.2"),
     .experts = 256, .topk = 8, .moe_ffn_hidden = 2048, .shared_ffn_hidden = 2048, .first_dense = 3,
     .router = PF_ROUTER_SIGMOID, .router_groups = 8, .router_group_topk = 4, .q_lora_rank = 1536,
     .kv_lora_rank = 512, .qk_nope_dim = 128, .qk_rope_dim = 64, .v_head_dim = 128, .mtp_layers = 1},
    {MOE("qwen3-30b-a3b", "Qwen3-30B-A3B", 48, 2048, 32, 4, 6144, 4096, 151936,
         "Qwen/Qwen3-30B-A3B config.json (hidden 2048, 48 layers, 32 heads, 4 KV heads, head_dim 128, 128 experts, "
         "8 a token, moe_intermediate 768, vocabulary 151936, q/k RMSNorm); Megatron-MoE model zoo "
         "Qwen3-30B-A3B.yaml; sequence 4096: Qwen3 report arXiv 2505.09388 section 3.2"),
     .head_dim = 128, .qk_norm = true, .experts = 128, .topk = 8, .moe_ffn_hidden = 768},
    {MOE("qwen3-235b-a22b", "Qwen3-235B-A22B", 94, 4096, 64, 4, 12288, 4096, 151936,
         "Qwen/Qwen3-235B-A22B config.json (hidden 4096, 94 layers, 64 heads, 4 KV heads, head_dim 128, 128 "
         "experts, 8 a token, moe_intermediate 1536, vocabulary 151936, q/k RMSNorm); Megatron-MoE model zoo "
         "Qwen3-235B-A22B.yaml; sequence 4096: arXiv 2505.09388 section 3.2"),
     .head_dim = 128, .qk_norm = true, .experts = 128, .topk = 8, .moe_ffn_hidden = 1536},
    {MOE("olmoe-1b-7b", "OLMoE-1B-7B", 16, 2048, 16, 16, 1024, 4096, 50304,
         "allenai/OLMoE-1B-7B-0924 config.json (hidden 2048, 16 layers, 16 heads, 64 experts, 8 a token, "
         "intermediate 1024, vocabulary 50304, q/k norm); Muennighoff et al. 2024, arXiv 2409.02060 (sequence 4096)"),
     .qk_norm = true, .experts = 64, .topk = 8, .moe_ffn_hidden = 1024},
    {MOE("dbrx", "DBRX", 40, 6144, 48, 8, 10752, 4096, 100352,
         "databricks/dbrx-base config.json (d_model 6144, 40 layers, 48 heads, kv_n_heads 8, ffn_hidden 10752, "
         "16 experts, top 4, vocabulary 100352); sequence 4096 assumed (its max_seq_len is 32768)"),
     .experts = 16, .topk = 4, .moe_ffn_hidden = 10752},
    {MOE("llama4-scout", "Llama 4 Scout 17B-16E (text)", 48, 5120, 40, 8, 16384, 8192, 202048,
         "meta-llama/Llama-4-Scout-17B-16E config.json text_config (hidden 5120, 48 layers, 40 heads, 8 KV heads, "
         "head_dim 128, intermediate 8192 with a shared expert of 8192, intermediate_size_mlp 16384, 16 local "
         "experts, 1 a token, interleave_moe_layer_step 1, vocabulary 202048; q/k L2 norm without weights); "
         "sequence 8192 (its rope original_max_position_embeddings)"),
     .head_dim = 128, .experts = 16, .topk = 1, .moe_ffn_hidden = 8192, .shared_ffn_hidden = 8192},
    {MOE("llama4-maverick", "Llama 4 Maverick 17B-128E (text)", 48, 5120, 40, 8, 16384, 8192, 202048,
         "meta-llama/Llama-4-Maverick-17B-128E config.json text_config (hidden 5120, 48 layers, 40 heads, 8 KV "
         "heads, head_dim 128, intermediate 8192 with a shared expert of 8192, dense layers intermediate_size_mlp "
         "16384, 128 local experts, 1 a token, interleave_moe_layer_step 2, vocabulary 202048); sequence 8192"),
     .head_dim = 128, .experts = 128, .topk = 1, .moe_ffn_hidden = 8192, .shared_ffn_hidden = 8192,
     .moe_every = 2},
    {MOE("gpt-oss-120b", "GPT-OSS-120B", 36, 2880, 64, 8, 2880, 4096, 201088,
         "openai/gpt-oss gpt_oss/torch/model.py ModelConfig (7b583341): 36 layers, 128 experts, 4 a token, "
         "vocabulary 201088, hidden 2880, intermediate 2880, head_dim 64, 64 heads, 8 KV heads, initial context "
         "4096, sliding window 128 on every other layer (AttentionBlock: layer_idx % 2 == 0); biases on QKV, "
         "output, router and experts (same file); Megatron-Core runs the window as window_size 128,0 and "
         "window_attn_skip_freq 2 (Megatron-Bridge gpt_oss provider)"),
     .head_dim = 64, .attn_bias = true, .expert_bias = true, .experts = 128, .topk = 4, .moe_ffn_hidden = 2880,
     .window = 128, .window_full_every = 2},
};

const int pf_moe_builtin_n = (int)(sizeof pf_moe_builtins / sizeof pf_moe_builtins[0]);
