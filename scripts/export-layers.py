#!/usr/bin/env python3
"""Write a preflight layer list (docs/scenario-format.md, "Layer lists") from a PyTorch module.

  python3 scripts/export-layers.py MODULE:FACTORY --input 1,17,256,256 [--id ID] [-o model.cfg]
      MODULE:FACTORY  an importable callable returning the nn.Module (e.g. torchvision.models:resnet18)
      --input         the shape of one example batch, NCHW for images or N,T[,F] for sequences (batch 1 is enough)

  As a library (torch optional for everything but record()):
      from export_layers import record, to_libconfig
      text = to_libconfig(record(model, torch.zeros(1, 17, 256, 256)), model_id="my-unet")

record() runs one forward pass with forward hooks on every leaf module and keeps, per call, the module's kind
and its input shape; to_libconfig() turns those records (plain dicts, so they can also be written by hand or by
another tool) into the libconfig text.  Every layer carries its observed input shape (h, w, c), so skip
connections and reshapes need no inference; torch.cat and other functional calls are not modules and are not
seen (their bytes are left out).  Modules preflight has no kind for (e.g. a custom attention) are reported on
stderr and left out.
"""
import argparse
import importlib
import sys

# nn.Module class name -> (preflight type, how to read its keys)
ACTIVATIONS = {"ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "Softmax", "Dropout", "Dropout2d",
               "Identity", "ELU", "Mish", "Hardswish"}


def _first(v):
    return v[0] if isinstance(v, (tuple, list)) else v


def _shape_hwc(shape):
    """(N, C, H, W) -> (H, W, C); (N, T, F) -> (T, 1, F); (N, F) -> (1, 1, F); (N, T) token ids -> (T, 1, 1)."""
    s = list(shape)[1:]
    if len(s) == 3:
        return s[1], s[2], s[0]
    if len(s) == 2:
        return s[0], 1, s[1]
    if len(s) == 1:
        return 1, 1, s[0]
    return 1, 1, 1


def describe(mod, in_shape, token_ids=False):
    """One record for a leaf module called on an input of in_shape, or None when preflight has no kind for it."""
    name = type(mod).__name__
    h, w, c = _shape_hwc(in_shape)
    if token_ids:  # an embedding's input holds token ids: (N, T)
        h, w, c = (list(in_shape)[1] if len(in_shape) > 1 else 1), 1, 1
    r = {"h": int(h), "w": int(w), "c": int(c)}
    if name in ("Conv2d", "ConvTranspose2d"):
        r.update(type="conv2d" if name == "Conv2d" else "conv_transpose2d", out=mod.out_channels,
                 kernel=_first(mod.kernel_size), stride=_first(mod.stride), bias=mod.bias is not None)
    elif name == "Linear":
        r.update(type="linear", out=mod.out_features, bias=mod.bias is not None)
    elif name in ("BatchNorm1d", "BatchNorm2d"):
        r.update(type="norm", kind="batch")
    elif name in ("LayerNorm", "GroupNorm", "RMSNorm"):
        r.update(type="norm", kind={"LayerNorm": "layer", "GroupNorm": "group", "RMSNorm": "rms"}[name])
    elif name in ("MaxPool2d", "AvgPool2d"):
        r.update(type="pool", kernel=_first(mod.kernel_size))
    elif name == "Upsample":
        f = mod.scale_factor if mod.scale_factor is not None else 2
        r.update(type="upsample", factor=int(_first(f)), mode="bilinear" if "linear" in mod.mode else "nearest")
    elif name == "PixelShuffle":
        r.update(type="upsample", factor=int(mod.upscale_factor), mode="subpixel")
    elif name == "Embedding":
        r.update(type="embedding", vocab=mod.num_embeddings, out=mod.embedding_dim)
    elif name == "MultiheadAttention":
        r.update(type="attention", heads=mod.num_heads)
    elif name in ACTIVATIONS:
        r.update(type="activation", fn=name.lower())
        if getattr(mod, "inplace", False):  # keeps its output, which the next layer keeps as its input
            r["saved_input"] = False
    else:
        return None
    return r


def record(model, example):
    """Run model(example) once with hooks; the records of its leaf modules in call order (needs torch)."""
    import torch  # noqa: F401 (only here: the rest of the module works without torch)
    recs, skipped, hooks = [], set(), []

    def hook(mod, args, _out):
        x = args[0] if args else None
        if x is None or not hasattr(x, "shape"):
            return
        r = describe(mod, tuple(x.shape), token_ids=type(mod).__name__ == "Embedding")
        if r is None:
            skipped.add(type(mod).__name__)
        else:
            recs.append(r)

    for m in model.modules():
        if not list(m.children()) or type(m).__name__ == "MultiheadAttention":
            hooks.append(m.register_forward_hook(hook))
    try:
        with torch.no_grad():
            model.eval()(example)
    finally:
        for hk in hooks:
            hk.remove()
    if skipped:
        print("export-layers: left out (no preflight kind): " + ", ".join(sorted(skipped)), file=sys.stderr)
    return recs


def _value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace('"', "'") + '"'
    return str(int(v))


KEY_ORDER = ["type", "h", "w", "c", "out", "kernel", "stride", "factor", "mode", "heads", "vocab", "kind", "bias", "fn"]


def to_libconfig(records, model_id="exported", name=None, framework="pytorch", source="scripts/export-layers.py"):
    """The libconfig text of a model file from layer records (dicts with a type and its keys)."""
    if not records:
        raise ValueError("no layers recorded")
    lines = ["# written by scripts/export-layers.py; format: docs/scenario-format.md, \"Layer lists\"",
             "model = {",
             f"  id = {_value(model_id)};",
             f"  name = {_value(name or model_id)};",
             f"  source = {_value(source)};",
             f"  framework = {_value(framework)};",
             "  layers = ("]
    body = []
    for r in records:
        keys = [k for k in KEY_ORDER if k in r] + sorted(k for k in r if k not in KEY_ORDER)
        body.append("    { " + " ".join(f"{k} = {_value(r[k])};" for k in keys) + " }")
    lines.append(",\n".join(body))
    lines += ["  );", "};", ""]
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("factory", help="MODULE:CALLABLE returning the nn.Module")
    ap.add_argument("--input", required=True, help="example batch shape, e.g. 1,3,224,224")
    ap.add_argument("--id", default=None)
    ap.add_argument("--dtype", default="float32", help="example input dtype (int64 for token ids)")
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("export-layers: needs PyTorch (pip install torch) to trace a module", file=sys.stderr)
        return 3
    modname, _, fn = a.factory.partition(":")
    model = getattr(importlib.import_module(modname), fn or "model")()
    shape = [int(x) for x in a.input.split(",")]
    dtype = getattr(torch, a.dtype)
    example = torch.zeros(shape, dtype=dtype) if dtype.is_floating_point else torch.zeros(shape, dtype=dtype)
    text = to_libconfig(record(model, example), model_id=a.id or fn or modname)
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
