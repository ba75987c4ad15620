#!/usr/bin/env python3
"""megatron-host-time.py - the host (CPU) time of one Megatron-Core transformer layer pass on a real GPU.

Runs only on a machine with an NVIDIA GPU, PyTorch and a Megatron-Core source tree on PYTHONPATH (the
`megatron/core` package of NVIDIA/Megatron-LM; pure Python, no build); no test calls it.  It measures what
docs/validation.md ("Decomposition of the worst row") asks for: how much CPU time Megatron-Core spends issuing
one layer's forward and backward, dense and mixture-of-experts, so that the host queue of docs/model.md ("Host
dispatch as a queue") can be checked against a measurement instead of a per-operator default.

Method.  One TransformerLayer built from Megatron-Core's own local spec (`get_gpt_layer_local_spec`: its
ColumnParallelLinear / RowParallelLinear, local core attention, WrappedTorchNorm RMSNorm, the MoE layer's
TopKRouter, the alltoall token dispatcher and SequentialMLP experts; Transformer Engine is not installed on the
measuring machine), bf16 weights, one rank (TP = PP = EP = 1: no collective is issued), rotary embeddings, QK
RMSNorm (its weights cast to bf16 so that torch's fused RMSNorm kernel runs), SwiGLU, no bias.  The shapes are
tiny (hidden 256, sequence 128, micro-batch 1), so each kernel takes a few microseconds and the wall time of a
pass between two synchronisations is the host's.  For each layer kind, in three interleaved rounds: 3 warm-up
passes, then 40 timed passes (forward; backward), the median reported; then one pass under torch.profiler counts
the GPU kernels (and memcpy/memset) it launched, so host time per launch follows.

Layer kinds: dense (FFN 512), and MoE with 2 and 8 local experts at top 2 and 16 at top 8 (expert FFN 128,
aux-loss load balancing at 1e-3 as the Megatron-MoE model zoo's Qwen3 configs): the slope over 2 -> 8 experts is
SequentialMLP's per-expert Python cost, the intercept the layer's fixed cost (attention, router, dispatcher,
norms).  Then the same layers at shapes where the GPU works, and a cProfile of the dense pass.

With `deepseek` after OUT.json the MoE cases take DeepSeek-V3's MoE block instead (the sigmoid router with expert bias
and group-limited routing, the sequence auxiliary loss and a shared expert), beside the dense layer and the plain
top-2 MoE layer on the same instance; no large shapes.  Its attention stays GQA: Multi-head Latent Attention needs
Transformer Engine's attention module (the local DotProductAttention takes no separate key width).

Usage: megatron-host-time.py OUT.json [deepseek]
"""
import json
import os
import statistics
import sys
import time
import traceback

import torch
import torch.nn.functional as F


def init():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    torch.cuda.set_device(0)
    torch.distributed.init_process_group(backend="nccl", world_size=1, rank=0,
                                         init_method="tcp://127.0.0.1:29517")
    from megatron.core import parallel_state
    parallel_state.initialize_model_parallel(1, 1)
    from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
    model_parallel_cuda_manual_seed(123)


def build(experts, hidden=256, heads=4, groups=2, ffn=512, moe_ffn=128, topk=8, deepseek=False):
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.transformer.transformer_config import TransformerConfig
    from megatron.core.transformer.transformer_layer import TransformerLayer
    kw = dict(num_layers=1, hidden_size=hidden, num_attention_heads=heads, num_query_groups=groups,
              ffn_hidden_size=ffn, kv_channels=hidden // heads, add_bias_linear=False,
              gated_linear_unit=True, activation_func=F.silu, normalization="RMSNorm", qk_layernorm=True,
              bf16=True, params_dtype=torch.bfloat16, hidden_dropout=0.0, attention_dropout=0.0)
    if experts:
        kw.update(num_moe_experts=experts, moe_router_topk=min(topk, experts), moe_ffn_hidden_size=moe_ffn,
                  moe_router_pre_softmax=min(topk, experts) == 1,
                  moe_token_dispatcher_type="alltoall", moe_router_load_balancing_type="aux_loss",
                  moe_aux_loss_coeff=1e-3, moe_grouped_gemm=False)
    if deepseek and experts:  # DeepSeek-V3's MoE block, scaled down: the sigmoid router with expert bias, group-limited
        # routing, the sequence aux loss and a shared expert (its config.json); its attention stays GQA, as MLA needs
        # Transformer Engine's attention (the local DotProductAttention has no separate key width)
        kw.update(moe_router_score_function="sigmoid", moe_router_enable_expert_bias=True,
                  moe_router_num_groups=2, moe_router_group_topk=2, moe_router_topk_scaling_factor=2.5,
                  moe_router_load_balancing_type="seq_aux_loss", moe_aux_loss_coeff=1e-4,
                  moe_shared_expert_intermediate_size=moe_ffn)
    cfg = TransformerConfig(**kw)
    spec = get_gpt_layer_local_spec(num_experts=experts or None, moe_grouped_gemm=False, qk_layernorm=True,
                                    normalization="RMSNorm")
    layer = TransformerLayer(cfg, spec.submodules).cuda()
    for m in layer.modules():  # torch's RMSNorm keeps fp32 weights: bf16 ones take its fused kernel, as TE's norm
        if isinstance(m, torch.nn.RMSNorm):
            m.to(torch.bfloat16)
    return cfg, layer


def rotary(cfg, seq):
    try:
        from megatron.core.models.common.embeddings.rotary_pos_embedding import RotaryEmbedding
        return RotaryEmbedding(kv_channels=cfg.kv_channels, rotary_percent=1.0)(seq).cuda()
    except Exception:  # noqa: BLE001 - measured without rotary then, and said so
        traceback.print_exc()
        return None


def measure(experts, seq=128, mbs=1, n=20, topk=8, deepseek=False, **shape):
    cfg, layer = build(experts, topk=topk, deepseek=deepseek, **shape)
    emb = rotary(cfg, seq)
    x = torch.randn(seq, mbs, cfg.hidden_size, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    g = torch.randn(seq, mbs, cfg.hidden_size, device="cuda", dtype=torch.bfloat16)

    def one():
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out, _ = layer(hidden_states=x, attention_mask=None, rotary_pos_emb=emb)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        out.backward(g)
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        return t1 - t0, t2 - t1

    for _ in range(3):
        one()
    runs = [one() for _ in range(n)]
    fwd = statistics.median(r[0] for r in runs)
    bwd = statistics.median(r[1] for r in runs)
    kernels = {"fwd": None, "bwd": None}
    try:
        from torch.profiler import ProfilerActivity, profile
        for phase in ("fwd", "bwd"):
            torch.cuda.synchronize()
            if phase == "bwd":
                out, _ = layer(hidden_states=x, attention_mask=None, rotary_pos_emb=emb)
                torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                if phase == "fwd":
                    out, _ = layer(hidden_states=x, attention_mask=None, rotary_pos_emb=emb)
                else:
                    out.backward(g)
                torch.cuda.synchronize()
            dev = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
            names = [e.name for e in dev]
            kernels[phase] = {"launches": len(names),
                              "memcpy_memset": sum(1 for s in names if "emcpy" in s or "emset" in s),
                              "gpu_busy_s": sum(e.time_range.elapsed_us() for e in dev) * 1e-6}
            if phase == "bwd":
                out = None
    except Exception:  # noqa: BLE001
        traceback.print_exc()
    return {"experts": experts, "topk": min(topk, experts) if experts else 0, "deepseek": deepseek, "seq": seq, "mbs": mbs,
            "hidden": cfg.hidden_size, "ffn": cfg.ffn_hidden_size, "moe_ffn": cfg.moe_ffn_hidden_size,
            "heads": cfg.num_attention_heads, "query_groups": cfg.num_query_groups, "rotary": emb is not None, "passes": n,
            "fwd_s": fwd, "bwd_s": bwd, "fwd_runs_s": [r[0] for r in runs], "bwd_runs_s": [r[1] for r in runs],
            "kernels": kernels}


def profile_dense(doc):
    """Where the dense pass's host time goes, by function: cProfile over 10 passes."""
    try:
        import cProfile
        import io
        import pstats
        cfg, layer = build(0)
        x = torch.randn(128, 1, cfg.hidden_size, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        emb = rotary(cfg, 128)
        for _ in range(3):
            layer(hidden_states=x, attention_mask=None, rotary_pos_emb=emb)[0].sum().backward()
        torch.cuda.synchronize()
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(10):
            layer(hidden_states=x, attention_mask=None, rotary_pos_emb=emb)[0].sum().backward()
        torch.cuda.synchronize()
        pr.disable()
        buf = io.StringIO()
        pstats.Stats(pr, stream=buf).sort_stats("tottime").print_stats(40)
        doc["cprofile_dense_10_passes"] = buf.getvalue()
        print(buf.getvalue()[:6000])
    except Exception:  # noqa: BLE001
        doc["errors"].append("cprofile: " + traceback.format_exc())


def main():
    out = sys.argv[1]
    deepseek = "deepseek" in sys.argv[2:]
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "layers": [], "errors": []}
    try:
        import megatron.core
        doc["megatron_core"] = getattr(megatron.core, "__version__", "?")
        init()
    except Exception:  # noqa: BLE001
        doc["errors"].append(traceback.format_exc())
        print(doc["errors"][-1], file=sys.stderr)
    else:
        # tiny shapes (host-bound), three interleaved rounds: dense, and MoE with the top-k held at 2 while the
        # local experts go 2 -> 8 (SequentialMLP's per-expert cost), then Qwen3's top 8 of 16
        tiny = [dict(experts=0), dict(experts=2, topk=2), dict(experts=8, topk=2), dict(experts=16, topk=8)]
        if deepseek:  # DeepSeek-V3's MoE block beside the dense and the plain MoE layer
            tiny = [dict(experts=0), dict(experts=2, topk=2), dict(experts=2, topk=2, deepseek=True),
                    dict(experts=8, topk=2, deepseek=True)]
        cases = [dict(c, n=40, round=r) for r in range(3) for c in tiny]
        # shapes where the GPU's work is of the order of the host's: is the pass host-bound?
        if not deepseek:
            cases += [dict(experts=0, seq=4096, hidden=4096, heads=32, groups=8, ffn=14336, n=10),
                      dict(experts=16, seq=1024, hidden=4096, heads=16, groups=4, moe_ffn=1536, n=10),
                      dict(experts=16, seq=4096, hidden=4096, heads=16, groups=4, moe_ffn=1536, n=10)]
        for c in cases:
            try:
                r = measure(**{k: v for k, v in c.items() if k != "round"})
                r["round"] = c.get("round")
                doc["layers"].append(r)
                print(f"{c}: fwd {r['fwd_s'] * 1e3:.3f} ms, bwd {r['bwd_s'] * 1e3:.3f} ms, "
                      f"kernels {r['kernels']}", flush=True)
            except Exception:  # noqa: BLE001
                doc["errors"].append(f"{c}: " + traceback.format_exc())
                print(doc["errors"][-1], file=sys.stderr, flush=True)
        if not deepseek:
            profile_dense(doc)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
