/* test_workload.c - parameter and FLOP counts against hand-worked numbers. */
#include "check.h"

#include <math.h>
#include <string.h>
#include "core/core.h"
#include "workload/workload.h"

int main(void) {
  pf_workload w;
  CHECK_INT(pf_workload_builtin("gpt3-175b", &w), 0);
  /* Megatron pads the vocabulary to a multiple of 128 x TP: 50257 -> 50304 (tp 1), 50688 (tp 8) */
  CHECK_INT(pf_workload_padded_vocab(&w, 1), 50304);
  CHECK_INT(pf_workload_padded_vocab(&w, 8), 51200);
  /* by hand: 96 layers x (12 h^2 + 13 h) + (50304 + 2048) h + final LayerNorm 2 h, h = 12288
   *        = 96 x (1811939328 + 159744) + 52352 x 12288 + 24576
   *        = 173961510912 + 643301376 + 24576 = 174604836864 */
  CHECK_NEAR(pf_workload_params(&w, 1), 174604836864.0, 1e-12);
  CHECK_NEAR(pf_workload_params(&w, 1), 175e9, 0.01); /* within 1 % of the nominal 175 B */
  /* model FLOPs per sample: 72 s l h^2 (1 + s/(6h) + V/(12 l h)), s 2048, l 96, h 12288, V 50304:
   * 72 x 2048 x 96 x 150994944 = 2.137417e15; x (1 + 0.0277778 + 0.0035536) = 2.2044196e15 */
  double F = 72.0 * 2048 * 96 * 12288.0 * 12288.0 * (1 + 2048.0 / (6 * 12288) + 50304.0 / (12.0 * 96 * 12288));
  CHECK_NEAR(pf_workload_model_flops_per_sample(&w, 1), F, 1e-12);
  CHECK_NEAR(pf_workload_model_flops_per_sample(&w, 1), 2.2044196e15, 1e-6);

  /* Llama 2 70B: GQA (8 KV heads) and SwiGLU; known total 68.98 B parameters */
  CHECK_INT(pf_workload_builtin("llama2-70b", &w), 0);
  CHECK_NEAR(pf_workload_params(&w, 1), 68.98e9, 0.005);
  /* per layer: h(h + 2 h/8) + h^2 + 3 h f + 2 h, h 8192, f 28672 */
  double h = 8192, f = 28672;
  CHECK_NEAR(pf_workload_layer_params(&w), h * (h + 2 * h / 8) + h * h + 3 * h * f + 2 * h, 1e-12);
  /* FLOPs: 12 s l h^2 [(1 + 1/8 + s/h) + 1.5 f/h + V/(2 l h)], V = 32000 (already a multiple of 128) */
  double s = 4096, l = 80, V = 32000;
  CHECK_NEAR(pf_workload_model_flops_per_sample(&w, 1),
             12 * s * l * h * h * ((1 + 0.125 + s / h) + 1.5 * f / h + V / (2 * l * h)), 1e-12);

  CHECK_INT(pf_workload_builtin("llama2-7b", &w), 0);
  CHECK_NEAR(pf_workload_params(&w, 1), 6.738e9, 0.005);
  CHECK_INT(pf_workload_builtin("llama3-8b", &w), 0);
  CHECK_NEAR(pf_workload_params(&w, 1), 8.03e9, 0.005);
  /* Llama 3.1 405B: 405 B (Meta); Nemotron-4: embedding and non-embedding parameters as their reports give
   * them, 3.2 B + 12.5 B (15B, arXiv 2402.16819) and 9.4 B + 331.6 B (340B, arXiv 2406.11704) */
  CHECK_INT(pf_workload_builtin("llama3.1-405b", &w), 0);
  CHECK(pf_workload_params(&w, 1) >= 405e9 && pf_workload_params(&w, 1) < 406e9);
  CHECK_INT(pf_workload_builtin("llama3-405b", &w), 0); /* aliases name the same shape */
  CHECK(strcmp(w.id, "llama3.1-405b") == 0);
  CHECK_INT(pf_workload_builtin("llama3.1-70b", &w), 0);
  CHECK(strcmp(w.id, "llama3-70b") == 0 && w.layers == 80);
  CHECK_INT(pf_workload_builtin("nemotron4-15b", &w), 0);
  double emb = pf_workload_embedding_params(&w, 1) + pf_workload_output_params(&w, 1);
  CHECK(fabs(emb - 3.2e9) < 0.06e9); /* 2 x 256000 x 6144 = 3.146 B, which the report writes 3.2 */
  CHECK(fabs(pf_workload_params(&w, 1) - emb - 12.5e9) < 0.05e9);
  CHECK_INT(pf_workload_builtin("nemotron4-340b", &w), 0);
  emb = pf_workload_embedding_params(&w, 1) + pf_workload_output_params(&w, 1);
  CHECK(fabs(emb - 9.4e9) < 0.05e9);
  CHECK(fabs(pf_workload_params(&w, 1) - emb - 331.6e9) < 0.05e9);
  CHECK_INT(pf_workload_builtin("gpt-857m", &w), 0);
  CHECK_NEAR(pf_workload_params(&w, 1), 857e6, 0.01);
  CHECK_INT(pf_workload_builtin("resnet50", &w), 0);
  CHECK_NEAR(pf_workload_params(&w, 1), 25557032.0, 1e-12); /* a layer list: test_layers.c */
  CHECK_NEAR(pf_workload_model_flops_per_sample(&w, 1), 3 * 2 * 4.089e9, 1e-4);

  /* unknown ids name the nearest ones and where the list is (issue 24) */
  CHECK_INT(pf_workload_builtin("gpt5", &w), PF_ENOENT);
  CHECK(strstr(pf_error_detail(), "preflight models") != NULL);
  CHECK(strstr(pf_error_detail(), "llama3-70b") == NULL);
  CHECK_INT(pf_workload_builtin("llama3", &w), PF_ENOENT);
  CHECK(strstr(pf_error_detail(), "did you mean llama3-8b, llama3-70b or llama3.1-405b?") != NULL);
  CHECK_INT(pf_workload_builtin("lama2-13b", &w), PF_ENOENT);
  CHECK(strstr(pf_error_detail(), "did you mean llama2-13b?") != NULL);
  /* custom shapes are checked */
  pf_workload c = {.id = "c", .kind = PF_WL_TRANSFORMER, .layers = 2, .hidden = 100, .heads = 3, .seq = 8, .vocab = 10};
  CHECK_INT(pf_workload_check(&c), PF_EINVAL);
  c.heads = 4;
  CHECK_INT(pf_workload_check(&c), 0);
  CHECK_INT(c.ffn_hidden, 400);
  CHECK_INT(c.kv_heads, 4);
  return pf_check_done();
}
