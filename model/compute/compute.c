/* compute.c - time of the work on one GPU: the kernels of each layer kind,
 * priced and laid on the host/GPU timeline by kernel.c.
 *
 * A transformer layer is the list of GEMMs of Megatron-LM's layer with shapes
 * divided by TP (Narayanan et al. SC21, section 3.2), plus the memory-bound
 * element-wise kernels between them (norms, bias-dropout-add, activation,
 * softmax) whose bytes follow the activation sizes of Korthikanti et al. 2023.
 * Backward costs two GEMMs (data and weight gradient) per forward GEMM and
 * twice the element-wise traffic.  Recomputation re-runs the attention core
 * (selective) or the whole forward (full) inside backward.
 *
 * Defaults for efficiencies live in the device files, each with its source:
 * gemm_eff from measured BF16 GEMM shares (MAMF; research notes 2.5), hbm_eff
 * from stream benchmarks.
 */
#include "compute.h"

#include "kernel.h"
#include "moelayer.h"
#include "workload/workload.h"

#include <math.h>
#include <string.h>

/* ---- kernel lists of one layer ---- */

int pf_layer_gemm(pf_kernel_list *l, const pf_scenario *sc, const char *name, double m, double n, double k,
                  double batch) {
  pf_kernel x = {.kind = PF_KERNEL_GEMM, .name = name, .prec = sc->precision, .layout = PF_GEMM_NN,
                 .m = m, .n = n, .k = k, .batch = batch, .host_ops = 1};
  return pf_kernel_list_add(l, &x);
}

int pf_layer_mem(pf_kernel_list *l, const char *name, double bytes) {
  pf_kernel x = {.kind = PF_KERNEL_MEMORY, .name = name, .bytes = bytes, .host_ops = 1};
  return pf_kernel_list_add(l, &x);
}

#define gemm pf_layer_gemm
#define mem pf_layer_mem

/* The attention core over a/t heads: scores, softmax, dropout, weighted sum (queries and keys qk wide,
 * values v wide: MLA's differ).  With a sliding window the fused kernel is two entries, the windowed layers'
 * and the others', each counted as its share of the model's layers (a layer list stands for every layer). */
static int attention_core(const pf_scenario *sc, pf_kernel_list *core) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  double b = p->mbs, s = w->seq, sl = s / p->cp, heads = w->heads / (double)p->tp;
  double qk = pf_workload_qk_dim(w), v = pf_workload_v_dim(w), el = pf_precision_bytes(sc->precision);
  int rc = 0;
  if (p->flash_attn) {
    /* causal: the built-in and custom transformers are decoders (GPT, Llama, the MoE models); Megatron's unfused
     * path below computes the whole score matrix and masks it */
    pf_kernel fa = {.kind = PF_KERNEL_ATTENTION, .name = "flash-attention", .prec = sc->precision,
                    .m = sl, .n = s, .k = qk, .dv = v, .batch = b * heads, .host_ops = 1, .causal = true};
    double windowed = (double)pf_workload_windowed_layers(w) / w->layers;
    if (windowed < 1) {
      fa.count = 1 - windowed;
      rc |= pf_kernel_list_add(core, &fa);
    }
    if (windowed > 0) {
      fa.name = "flash-attention-swa";
      fa.window = w->window;
      fa.count = windowed;
      rc |= pf_kernel_list_add(core, &fa);
    }
  } else {
    double z = b * heads * sl * s;
    rc |= gemm(core, sc, "scores", sl, s, qk, b * heads);
    rc |= gemm(core, sc, "context", sl, v, s, b * heads);
    rc |= mem(core, "scale-mask-softmax", z * (4 * el + 1));
    rc |= mem(core, "attention-dropout", z * 2 * el);
  }
  return rc;
}

/* Forward kernels of one transformer layer (one microbatch) into *f, the attention core into *core (so
 * selective recomputation can repeat it); a MoE layer's FFN is moelayer.c's, MLA's projections too. */
static int layer_forward(const pf_scenario *sc, bool moe, pf_kernel_list *f, pf_kernel_list *core) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  double b = p->mbs, t = p->tp, c = p->cp;
  double s = w->seq, sl = s / c, h = w->hidden, ff = w->ffn_hidden;
  double kv = h * w->kv_heads / w->heads, q = h; /* GPT/Llama: heads x head width = h */
  if (w->head_dim > 0) q = (double)w->heads * w->head_dim, kv = (double)w->kv_heads * w->head_dim;
  double M = b * sl;
  double el = pf_precision_bytes(sc->precision);
  double x = b * sl * h / (p->sp ? t : 1.0);        /* elements of the replicated-or-split hidden state */
  double y = b * sl * ff / t;                       /* elements of the MLP intermediate */
  int rc = 0;
  /* the framework's own Python for the layer, on the host before its first kernel (hostqueue.c) */
  pf_kernel py = {.kind = PF_KERNEL_FIXED, .name = "layer-python", .host_s = pf_host_layer_python_s(sc, moe, false)};
  if (py.host_s > 0) rc |= pf_kernel_list_add(f, &py);
  if (pf_workload_is_mla(w)) {
    rc |= pf_mla_forward(sc, f);
  } else {
    rc |= gemm(f, sc, "qkv", M, (q + 2 * kv) / t, h, 1);
    rc |= gemm(f, sc, "proj", M, h, q / t, 1);
  }
  if (moe) {
    rc |= pf_moe_ffn_forward(sc, f);
  } else {
    rc |= gemm(f, sc, "fc1", M, (w->swiglu ? 2 : 1) * ff / t, h, 1); /* gate + up for SwiGLU */
    rc |= gemm(f, sc, "fc2", M, h, ff / t, 1);
  }
  /* norms (read + write), two bias-dropout-add (read 2, write 1 + mask), rotary on q and k (MLA: the queries'
   * rope parts in place; the keys' one rope head is moelayer.c's mla-kv-rope) */
  rc |= mem(f, "norm1", 2 * el * x);
  rc |= mem(f, "norm2", 2 * el * x);
  rc |= mem(f, "bias-dropout-add1", (3 * el + 1) * x);
  rc |= mem(f, "bias-dropout-add2", (3 * el + 1) * x);
  if (!moe) rc |= mem(f, "activation", (w->swiglu ? 3.0 : 2.0) * el * y);
  double roped = pf_workload_is_mla(w) ? w->heads * w->qk_rope_dim : q + kv;
  if (!w->learned_pos) rc |= mem(f, "rotary", 2 * el * (b * sl * roped / t)); /* learned positions: none */
  rc |= mem(f, "bias", 0.0);
  return rc | attention_core(sc, core);
}

/* The same kernels, each run `times` as often (backward: 2 x forward; a host synchronisation is the
 * forward's alone: the backward reuses the sizes it read, so it is not repeated more than once). */
static int repeat_into(pf_kernel_list *dst, const pf_kernel_list *src, double times) {
  int rc = 0;
  for (int i = 0; i < src->n; i++) {
    pf_kernel k = src->k[i];
    if (k.sync && times != 1) continue;
    k.count = (k.count > 0 ? k.count : 1.0) * times;
    rc |= pf_kernel_list_add(dst, &k);
  }
  return rc;
}

/* The backward of the forward kernels in src: each kernel twice (a product's data and weight gradients, an
 * elementwise kernel's gradient and its reduction), except a fused attention kernel, whose backward is one
 * kernel of its own: 2.5x the forward's FLOPs (five products, the scores recomputed) at the backward rate
 * (FlashAttention-2, Dao 2023; kernel.c), not two forwards.  Measured on an H200 with PyTorch's flash
 * back-end (calibrate/results/vm-h200-141-2026-11-26-torch-kernels.json): backward 2.2-2.9x the forward's
 * time at 4k-8k tokens, head dim 128 (median 2.6x), where two forwards would be 2x.  A product whose weight
 * gradient runs at its own rate (wgrad_scale: the blockwise FP8 recipe, compute/fp8.c) is two entries. */
static int backward_into(pf_kernel_list *dst, const pf_kernel_list *src, double python_s) {
  int rc = 0;
  for (int i = 0; i < src->n; i++) {
    pf_kernel k = src->k[i];
    if (pf_kernel_is_layer_python(&k)) { /* once, the backward's own */
      k.host_s = python_s;
      rc |= pf_kernel_list_add(dst, &k);
    } else if (pf_kernel_is_moe_python(&k)) { /* the forward's; the backward's Python is the entry above */
      continue;
    } else if (k.kind == PF_KERNEL_ATTENTION) {
      k.pass = PF_PASS_BWD;
      rc |= pf_kernel_list_add(dst, &k);
    } else if (k.kind == PF_KERNEL_GEMM && k.wgrad_scale > 0) { /* the data gradient, then the weight gradient */
      rc |= pf_kernel_list_add(dst, &k);
      k.rate_scale = k.wgrad_scale;
      rc |= pf_kernel_list_add(dst, &k);
    } else if (!k.sync) {
      k.count = (k.count > 0 ? k.count : 1.0) * 2;
      rc |= pf_kernel_list_add(dst, &k);
    }
  }
  return rc;
}

/* Which --recompute-modules modules rerun forward kernel `name` before the backward (0: none): layernorm the
 * layer's two norms, mla_up_proj MLA's latent norms, up projections and rotary embedding, moe_act the experts'
 * activation, mlp a dense layer's MLP, moe a MoE layer's MLP from the router to unpermute, its
 * tokens-per-expert synchronisation and shared experts included (its all-to-alls: comm/epa2a.c) (kernel names:
 * layer_forward, moelayer.c). */
static unsigned module_of(const char *name) {
  enum { LN = PF_RECOMPUTE_MOD_LAYERNORM, UP = PF_RECOMPUTE_MOD_MLA_UP_PROJ, MOE = PF_RECOMPUTE_MOD_MOE };
  static const struct { const char *name; unsigned bits; } m[] = {
      {"norm1", LN}, {"norm2", LN}, {"mla-q-norm", UP}, {"mla-q-up", UP}, {"mla-kv-norm", UP}, {"mla-kv-up", UP},
      {"rotary", UP}, {"mla-kv-rope", UP}, {"experts-activation", PF_RECOMPUTE_MOD_MOE_ACT | MOE},
      {"fc1", PF_RECOMPUTE_MOD_MLP}, {"activation", PF_RECOMPUTE_MOD_MLP}, {"fc2", PF_RECOMPUTE_MOD_MLP},
      {"router", MOE}, {"router-topk", MOE}, {"tokens-per-expert-sync", MOE}, {"permute", MOE},
      {"experts-fc1", MOE}, {"experts-fc2", MOE}, {"unpermute", MOE}, {"shared-fc1", MOE},
      {"shared-activation", MOE}, {"shared-fc2", MOE}};
  for (size_t i = 0; name && i < sizeof m / sizeof m[0]; i++)
    if (strcmp(name, m[i].name) == 0) return m[i].bits;
  return 0;
}

/* The forward kernels of f that the modules rerun, once more in the backward. */
static int recompute_modules(pf_kernel_list *bwd, const pf_kernel_list *f, unsigned mods) {
  int rc = 0;
  for (int i = 0; i < f->n; i++)
    if (module_of(f->k[i].name) & mods) rc |= pf_kernel_list_add(bwd, &f->k[i]);
  return rc;
}

/* Time of a kernel list run `repeat` times, with the step's totals added to *acc. */
static double run_list(const pf_kernel_env *env, const pf_kernel_list *l, int repeat, pf_step *acc) {
  if (repeat <= 0 || l->n == 0) return 0.0; /* no layer of that kind on the stage: the timeline as it was */
  pf_step st;
  memset(&st, 0, sizeof st);
  pf_step_run(&st, env, l, repeat);
  pf_step_append(acc, &st);
  return pf_step_time(&st);
}

/* gemm_s, mem_s, launch_s of a step (energy.c's states). */
static void add_states(pf_stage_work *out, const pf_step *st) {
  out->gemm_s += st->limit_s[PF_LIMIT_COMPUTE];
  out->mem_s += st->limit_s[PF_LIMIT_MEMORY];
  out->launch_s += st->limit_s[PF_LIMIT_FLOOR];
}

/* Generic (--params/--flops-per-sample, no layers): FLOPs at the GEMM ceiling
 * as for large convolutions; memory-bound traffic of about 6 passes over the
 * kept activations (norms, activations, residual adds forward and backward)
 * when the activation size is known; ~160 kernels per forward, three passes
 * (a ResNet-50-sized CNN: 53 conv + BN + ReLU).  The built-in ResNet-50 is a
 * layer list (resnet.c) priced kernel by kernel. */
static int generic_work(const pf_scenario *sc, const pf_kernel_env *env, pf_stage_work *out) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  const pf_device *d = &sc->machine.dev;
  double el = pf_precision_bytes(sc->precision);
  pf_precision prec = sc->precision;
  if (prec == PF_FP32 && d->peak_flops[PF_TF32] > 0) prec = PF_TF32; /* cuDNN allows TF32 by default */
  double flops = w->flops_per_sample * p->mbs;
  double act = w->act_bytes_per_sample * p->mbs * (el < 4 ? 0.5 : 1.0);
  pf_kernel_list l = {0};
  /* one large product at the top of the curve (shape far above gemm_half_dim) */
  pf_kernel conv = {.kind = PF_KERNEL_GEMM, .name = "convolutions", .prec = prec, .m = 1e12, .n = 1e12, .k = 1e12,
                    .flops = flops, .host_ops = 1};
  pf_kernel ew = {.kind = PF_KERNEL_MEMORY, .name = "elementwise", .bytes = 6.0 * act, .host_ops = 1};
  pf_kernel rest = {.kind = PF_KERNEL_MEMORY, .name = "other kernels", .count = 3 * 160 - 2, .host_ops = 1};
  int rc = pf_kernel_list_add(&l, &conv);
  if (rc == 0) rc = pf_kernel_list_add(&l, &ew);
  if (rc == 0) rc = pf_kernel_list_add(&l, &rest);
  pf_step st;
  memset(&st, 0, sizeof st);
  if (rc == 0) rc = pf_step_run(&st, env, &l, 1);
  pf_kernel_list_free(&l);
  if (rc < 0) return rc;
  double tot = pf_step_time(&st);
  out->work = st; /* fwd and bwd stay zero: comm.c reads the transformer's GEMM rate from them */
  out->fwd_s = tot / 3.0;
  out->bwd_s = tot * 2.0 / 3.0;
  add_states(out, &st);
  out->fwd_flops = flops / 3.0;
  out->bwd_flops = flops * 2.0 / 3.0;
  out->params = w->params;
  return 0;
}

/* The kernel lists of stage `stage` of a transformer for one microbatch: the
 * layer's forward and backward (run lps times) and the ends (embedding, logits
 * and loss) forward and backward (run once). */
/* The forward and backward lists of one layer kind (dense or MoE) with FP8's casts (fp8.c, which also sets
 * the precision of the ends' products) and recomputation; nothing for a kind the stage has none of. */
static int kind_lists(const pf_scenario *sc, bool moe, int layers, double rf, pf_kernel_list *ends,
                      pf_kernel_list *fwd, pf_kernel_list *bwd) {
  const pf_plan *p = &sc->plan;
  if (layers <= 0) return 0;
  pf_kernel_list lf = {0}, core = {0}, fq = {0}, bq = {0};
  int rc = layer_forward(sc, moe, &lf, &core);
  double keep = rc == 0 ? pf_graph_mark(sc, moe, &lf, &core) : 1.0; /* partial CUDA graphs (graphs.c) */
  if (rc == 0) rc = pf_moe_python_after_sync(sc, moe, &lf, &core);  /* where the experts' Python runs (graphs.c) */
  if (rc == 0) rc = pf_fp8_layer(sc, layers, &lf, &core, ends, &fq, &bq); /* FP8 as it runs (fp8.c) */
  rc |= repeat_into(fwd, &lf, 1);
  rc |= repeat_into(fwd, &core, 1);
  rc |= backward_into(bwd, fwd, keep * pf_host_layer_python_s(sc, moe, true));
  /* full: the layer's forward again, for the share rf of the stage's layers that recompute (block method) */
  if (p->recompute == PF_RECOMPUTE_FULL) rc |= repeat_into(bwd, fwd, rf) | repeat_into(bwd, &fq, rf);
  /* selective: Megatron-Core checkpoints core attention whatever its backend (attention.py, core_v0.12.0-0.14.0:
   * `if self.checkpoint_core_attention and self.training: self._checkpointed_attention_forward(...)`), so the
   * fused kernel's forward runs again before its backward; only legacy Megatron's --use-flash-attn path skipped it */
  else if (p->recompute == PF_RECOMPUTE_SELECTIVE) {
    unsigned mods = pf_plan_recompute_modules(p);
    if (mods & PF_RECOMPUTE_MOD_CORE_ATTN) rc |= repeat_into(bwd, &core, 1);
    rc |= recompute_modules(bwd, &lf, mods);
  }
  rc |= repeat_into(fwd, &fq, 1) | repeat_into(bwd, &bq, 1);
  pf_graph_launches(fwd);
  pf_graph_launches(bwd);
  pf_kernel_list_free(&lf);
  pf_kernel_list_free(&core);
  pf_kernel_list_free(&fq);
  pf_kernel_list_free(&bq);
  return rc;
}

/* The last stage's ends: final norm, logits and loss over the vocabulary shard in fp32, and each MTP
 * module's norms, projection 2h -> h and its own logits and loss (moe.c; its layer is counted with the
 * stage's layers). */
static int output_ends(const pf_scenario *sc, pf_kernel_list *e) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  double el = pf_precision_bytes(sc->precision), b = p->mbs, sl = (double)w->seq / p->cp, h = w->hidden, t = p->tp;
  double V = pf_workload_padded_vocab(w, p->tp);
  double logits = b * sl * V / t; /* vocabulary-parallel: each TP rank holds V/t of every token's logits */
  int rc = mem(e, "final-norm", 4 * el * b * sl * h / (p->sp ? t : 1));
  rc |= gemm(e, sc, "logits", b * sl, V / t, h, 1);
  /* cross-entropy in fp32 (Megatron's vocab-parallel one, PyTorch's under autocast): the logits cast and
   * their max-shifted exponentials read and written (8 B a logit), the sum and the target's logit read
   * (4 B); backward twice that (the softmax rebuilt, the one-hot subtracted, the gradient cast back) */
  rc |= mem(e, "loss-softmax", 8.0 * logits) | mem(e, "loss-nll", 4.0 * logits);
  for (int i = 0; i < w->mtp_layers; i++) {
    rc |= mem(e, "mtp-norms", 2 * 2 * el * b * sl * h / (p->sp ? t : 1));
    rc |= gemm(e, sc, "mtp-proj", b * sl, h / t, 2 * h, 1);
    rc |= mem(e, "final-norm", 4 * el * b * sl * h / (p->sp ? t : 1));
    rc |= gemm(e, sc, "logits", b * sl, V / t, h, 1);
    rc |= mem(e, "loss-softmax", 8.0 * logits) | mem(e, "loss-nll", 4.0 * logits);
  }
  return rc;
}

/* The kernel lists of stage `stage` of a transformer for one microbatch: the dense and the MoE layers'
 * forward and backward (run dense and moe times) and the ends (embedding, logits and loss) forward and
 * backward (run once). */
int pf_transformer_lists(const pf_scenario *sc, int stage, pf_stage_lists *L) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  double el = pf_precision_bytes(sc->precision);
  memset(L, 0, sizeof *L);
  L->lps = pf_plan_stage_layers(sc, stage); /* each stage its own layers (job/pplayout.c) */
  L->moe = pf_workload_moe_layers_in(w, pf_plan_stage_first_layer(sc, stage), L->lps);
  L->dense = L->lps - L->moe;
  if (stage == p->pp - 1) *(pf_workload_is_moe(w) ? &L->moe : &L->dense) += w->mtp_layers; /* MTP's layers */
  double b = p->mbs, sl = (double)w->seq / p->cp, h = w->hidden, t = p->tp;
  double V = pf_workload_padded_vocab(w, p->tp);
  int rc = 0;
  if (stage == 0) /* embedding lookup (+ position), dropout */
    rc |= mem(&L->ends_f, "embedding", 3 * el * b * sl * h / (p->sp ? t : 1) / 2) |
          mem(&L->ends_f, "embedding-dropout", 3 * el * b * sl * h / (p->sp ? t : 1) / 2);
  if (stage == p->pp - 1) rc |= output_ends(sc, &L->ends_f);
  pf_kernel_list none = {0};
  double rf = pf_plan_recompute_share(sc, L->lps);
  if (rc == 0) rc = kind_lists(sc, false, L->dense, rf, &L->ends_f, &L->fwd, &L->bwd);
  if (rc == 0) rc = kind_lists(sc, true, L->moe, rf, L->dense > 0 ? &none : &L->ends_f, &L->moe_fwd, &L->moe_bwd);
  pf_kernel_list_free(&none);
  rc |= repeat_into(&L->ends_b, &L->ends_f, 2);
  if (stage == 0) { /* the batch from the host, before the first forward kernel (forward only) */
    pf_kernel_list in = {0};
    rc |= pf_step_input_kernels(sc, &in);
    rc |= repeat_into(&in, &L->ends_f, 1);
    pf_kernel_list_free(&L->ends_f);
    L->ends_f = in;
  }
  /* the word embedding's weight gradient is dense (torch.nn.functional.embedding's default): the V/t x h table
   * written whole (embedding_dense_backward), then, in Megatron, added into the fp32 main-grad buffer (read it
   * and the gradient, write the buffer); eager PyTorch under AMP writes the fp32 gradient once */
  if (stage == 0)
    rc |= mem(&L->ends_b, "embedding-wgrad",
              V / t * h * (pf_scenario_framework(sc) == PF_FW_MEGATRON ? 2 * el + 8 : 4.0));
  if (rc < 0) pf_stage_lists_free(L);
  return rc < 0 ? rc : 0;
}

void pf_stage_lists_free(pf_stage_lists *L) {
  pf_kernel_list_free(&L->fwd);
  pf_kernel_list_free(&L->bwd);
  pf_kernel_list_free(&L->moe_fwd);
  pf_kernel_list_free(&L->moe_bwd);
  pf_kernel_list_free(&L->ends_f);
  pf_kernel_list_free(&L->ends_b);
}

/* --cpu-offloading-num-layers N (plan.h): each offloaded layer's saved activations (pf_memory_act_per_layer) cross
 * the host link one way in the forward and back in the backward, each transfer under the compute of the next
 * layer (Transformer Engine's double-buffered offload handler), so a layer's transfer costs what it outlasts
 * that layer's compute; the copies' engine is the GPU's DMA, which takes no SMs. */
static void offload(const pf_scenario *sc, int lps, pf_stage_work *w) {
  int n = sc->plan.cpu_offload_layers;
  double bw = sc->machine.host_link_bw_Bps;
  if (n <= 0 || lps <= 0 || bw <= 0) return;
  double t = pf_memory_act_per_layer(sc) / bw;
  w->fwd_s += n * fmax(0.0, t - (w->fwd_s - w->ends_fwd_s) / lps);
  w->bwd_s += n * fmax(0.0, t - (w->bwd_s - w->ends_bwd_s) / lps);
}

static int transformer_work(const pf_scenario *sc, const pf_kernel_env *env, int stage, pf_stage_work *out) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  pf_stage_lists L;
  int rc = pf_transformer_lists(sc, stage, &L);
  if (rc < 0) return rc;
  int lps = L.lps;
  out->layers = lps;
  pf_step fs, bs;
  memset(&fs, 0, sizeof fs);
  memset(&bs, 0, sizeof bs);
  out->fwd_s = run_list(env, &L.fwd, L.dense, &fs) + run_list(env, &L.moe_fwd, L.moe, &fs);
  out->ends_fwd_s = run_list(env, &L.ends_f, 1, &fs);
  out->fwd_s += out->ends_fwd_s;
  pf_kernel_env benv = *env; /* backward nodes cost the host the autograd engine's time */
  benv.host_op_s = env->host_bwd_op_s;
  out->bwd_s = run_list(&benv, &L.moe_bwd, L.moe, &bs) + run_list(&benv, &L.bwd, L.dense, &bs);
  out->ends_bwd_s = run_list(&benv, &L.ends_b, 1, &bs);
  out->bwd_s += out->ends_bwd_s;
  offload(sc, lps, out);
  rc = pf_moe_split_add(env, &L.moe_fwd, L.moe, &out->moe);
  if (rc == 0) rc = pf_moe_split_add(env, &L.moe_bwd, L.moe, &out->moe);
  pf_stage_lists_free(&L);
  if (rc < 0) return rc;
  add_states(out, &fs);
  add_states(out, &bs);
  out->fwd_flops = fs.flops;
  out->bwd_flops = bs.flops;
  out->fwd = fs;
  out->bwd = bs;
  /* the routed experts over EP x ETP (MoE parallel folding, plan.h), the rest over TP */
  double Pe = (pf_workload_moe_layers_in(w, pf_plan_stage_first_layer(sc, stage), lps) + (stage == p->pp - 1 ? w->mtp_layers : 0)) *
              pf_workload_routed_expert_params(w);
  out->params = (pf_workload_layers_params(w, pf_plan_stage_first_layer(sc, stage), lps) - Pe +
                 (stage == 0 ? pf_workload_embedding_params(w, p->tp) : 0) +
                 (stage == p->pp - 1 ? pf_workload_output_params(w, p->tp) + pf_workload_mtp_params(w) : 0)) / p->tp +
                Pe / ((double)pf_plan_ep(p) * pf_plan_etp(p));
  out->expert_params = Pe / ((double)pf_plan_ep(p) * pf_plan_etp(p));
  return 0;
}

int pf_stage_work_compute(const pf_scenario *sc, int stage, pf_stage_work *out) {
  return pf_stage_work_at(sc, 1.0, stage, out);
}

int pf_stage_work_at(const pf_scenario *sc, double clock_ratio, int stage, pf_stage_work *out) {
  const pf_machine *m = &sc->machine;
  memset(out, 0, sizeof *out);
  double clk = clock_ratio > 0 ? clock_ratio : 1.0;
  pf_host_costs hc;
  pf_host_costs_get(sc, &hc);
  pf_kernel_env env = {.dev = &m->dev, .host_op_s = hc.fwd_op_s, .host_bwd_op_s = hc.bwd_op_s,
                       .eff_scale = sc->compute_eff_scale, .clock_ratio = clk};
  int rc = sc->workload.kind == PF_WL_TRANSFORMER ? transformer_work(sc, &env, stage, out)
           : sc->workload.kind == PF_WL_LAYERS    ? pf_layers_work(sc, &env, out)
                                                  : generic_work(sc, &env, out);
  if (rc < 0) return rc;
  if (out->work.busy_s <= 0) { /* any kind that lays out fwd and bwd (transformers, layer lists) */
    out->work = out->fwd;
    pf_step_append(&out->work, &out->bwd);
  }
  if (out->eval.end_s <= 0) { /* evaluation: the forward kernels, or the forward third of a FLOP count */
    if (out->fwd.end_s > 0) {
      out->eval = out->fwd;
    } else {
      out->eval = out->work;
      pf_step_scale(&out->eval, 1.0 / 3.0);
    }
  }
  /* the step's kernels after the last backward (stepkernels.c), issued by one host thread */
  pf_kernel_env oenv = {.dev = &m->dev, .host_op_s = hc.opt_op_s, .eff_scale = 1, .clock_ratio = clk};
  pf_kernel_list tail = {0};
  pf_step st;
  memset(&st, 0, sizeof st);
  rc = pf_step_eval_kernels(sc, out, &tail); /* what evaluation adds to the forward (DataParallel's replicate) */
  if (rc == 0 && tail.n > 0 && (rc = pf_step_run(&st, &oenv, &tail, 1)) == 0) pf_step_append(&out->eval, &st);
  pf_kernel_list_free(&tail);
  memset(&st, 0, sizeof st);
  if (rc < 0) return rc;
  /* the host starts the step caught up with the GPU: Megatron reads the gradient norm back (.item()), the
   * Hugging Face Trainer checks the step's loss for NaN/inf on the host after backward (logging_nan_inf_filter,
   * default on), and TensorFlow's step is one graph */
  rc = pf_step_tail_kernels(sc, out, &tail);
  if (rc == 0) rc = pf_step_run(&st, &oenv, &tail, 1);
  pf_kernel_list_free(&tail);
  if (rc < 0) return rc;
  out->optimizer_s = pf_step_time(&st);
  out->opt = st;
  return 0;
}
