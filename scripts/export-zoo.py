#!/usr/bin/python3
"""Exports the model zoo that scripts/bench-zoo.py benchmarks: ONNX models with random weights,
their inputs at two sizes each, PyTorch's outputs for those inputs, and the matmul/conv FLOPs
of each call.

Usage: /usr/bin/python3 scripts/export-zoo.py [OUTDIR] [--only NAME,...]   (default build/zoo)
Needs Debian's python3-torch (1.13) and python3-torchvision; nothing in the build or the tests
needs them. Deterministic (fixed seeds). Takes about a minute, most of it the seed encoder.

Models (every one exported with a dynamic batch dim, the transformers with a dynamic sequence,
the CNNs with dynamic height and width):
  seed     the seed's text encoder at full size: vocab 30000, d 512, 4 post-norm layers, 8 heads,
           FFN 2048, causal mask built from S in forward, head 512->30000; opset 14
  gpt2     one GPT-2 style decoder block: pre-norm, fused qkv projection, causal attention
           written out (12 heads of 64), tanh-GELU MLP 768->3072->768, residuals; opset 14
  resnet18 torchvision's resnet18, random weights, eval mode (batch norm folded by the export)
  mobilenet_v3, shufflenet, squeezenet
           torchvision's mobilenet_v3_small, shufflenet_v2_x1_0 and squeezenet1_1, random weights
           calibrated as for the model tests (scores that depend on the input), eval mode
  mlp      784->2048->2048->10 with ReLU and a softmax

Writes OUTDIR/manifest.json and per model OUTDIR/NAME/model.onnx and, per size,
OUTDIR/NAME/SIZE/<input>.npy and OUTDIR/NAME/SIZE/expected_<output>.npy.
"""
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

torch.set_num_threads(2)


class SeedEncoder(nn.Module):
    """/work/shared/seed/export_seed_encoder.py's DynamicTextEncoder."""

    def __init__(self, vocab=30000, d=512, heads=8, ffn=2048, layers=4):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d_model=d, nhead=heads, dim_feedforward=ffn,
                                           batch_first=True)
        self.transformer = nn.TransformerEncoder(layer, num_layers=layers)
        self.proj = nn.Linear(d, vocab)

    def forward(self, input_ids):
        x = self.embedding(input_ids)
        s = input_ids.size(1)
        causal = torch.triu(torch.ones(s, s, device=input_ids.device), diagonal=1).bool()
        causal = causal.float().masked_fill(causal, float("-inf"))
        x = self.transformer(x, mask=causal)
        return self.proj(x)


def seed_flops(b, s, d=512, ffn=2048, vocab=30000, layers=4):
    """As tools/demo.cpp's forward_flops: projections, full S x S attention, FFN, head."""
    return layers * (8 * b * s * d * d + 4 * b * s * s * d + 4 * b * s * d * ffn) + \
        2 * b * s * d * vocab


class GPT2Block(nn.Module):
    """x [B, S, 768] -> [B, S, 768], as in GPT-2: x + attn(ln_1(x)), then + mlp(ln_2(x))."""

    def __init__(self, d=768, heads=12, ffn=3072):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, ffn)
        self.mlp_proj = nn.Linear(ffn, d)

    def forward(self, x):
        b, s, d = x.shape
        h = self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q = q.view(b, s, h, d // h).transpose(1, 2)
        k = k.view(b, s, h, d // h).transpose(1, 2)
        v = v.view(b, s, h, d // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // h))
        causal = torch.tril(torch.ones(s, s, dtype=torch.bool, device=x.device))
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


def gpt2_flops(b, s, d=768, ffn=3072):
    return 2 * b * s * (3 * d * d + d * d + 2 * d * ffn) + 4 * b * s * s * d


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(784, 2048), nn.ReLU(), nn.Linear(2048, 2048),
                                 nn.ReLU(), nn.Linear(2048, 10))

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)


def hooked_flops(model, args):
    """Matmul and convolution FLOPs (a multiply-add counts 2) of nn.Linear and nn.Conv2d."""
    total = [0]

    def linear(m, inp, out):
        total[0] += 2 * out.numel() * m.in_features

    def conv(m, inp, out):
        kh, kw = m.kernel_size
        total[0] += 2 * out.numel() * (m.in_channels // m.groups) * kh * kw

    hooks = [m.register_forward_hook(linear) for m in model.modules()
             if isinstance(m, nn.Linear)]
    hooks += [m.register_forward_hook(conv) for m in model.modules()
              if isinstance(m, nn.Conv2d)]
    with torch.no_grad():
        model(*args)
    for h in hooks:
        h.remove()
    return total[0]


def torchvision_model(name, calibrate=False):
    """A torchvision classifier by its constructor's name, random weights (1000 classes); with
    `calibrate`, weights made input-dependent as for Kiln's model tests (calibrate() in
    export-onnx-models.py: with torchvision's initialisation these models' scores are nearly
    constant, so a comparison with PyTorch would check little)."""
    def make():
        import importlib.util
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        if not calibrate:
            return model
        spec = importlib.util.spec_from_file_location(
            "export_onnx_models", os.path.join(os.path.dirname(__file__), "export-onnx-models.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.calibrate(model, [(2, 64, 64), (2, 128, 128)])
    return make


def zoo():
    """(name, description, constructor, input names, output names, dynamic axes, opset,
    [(size name, inputs builder(rng), flops or None for hooks)])."""
    ids = lambda b, s: lambda rng: [rng.integers(0, 30000, size=(b, s), dtype=np.int64)]
    normal = lambda *shape: lambda rng: [rng.standard_normal(shape, dtype=np.float32)]
    image_axes = {"image": {0: "batch", 2: "height", 3: "width"}, "logits": {0: "batch"}}
    image_sizes = [("b1_64", normal(1, 3, 64, 64), None), ("b2_128", normal(2, 3, 128, 128), None)]
    return [
        ("seed", "seed text encoder, full size (vocab 30000, d 512, 4 layers, 8 heads, "
         "FFN 2048, causal)", SeedEncoder, ["input_ids"], ["logits"],
         {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}, 14,
         [("b1_s64", ids(1, 64), seed_flops(1, 64)),
          ("b4_s128", ids(4, 128), seed_flops(4, 128))]),
        ("gpt2", "GPT-2 style decoder block (d 768, 12 heads, MLP 3072, causal)", GPT2Block,
         ["x"], ["y"], {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}, 14,
         [("b1_s128", normal(1, 128, 768), gpt2_flops(1, 128)),
          ("b4_s256", normal(4, 256, 768), gpt2_flops(4, 256))]),
        ("resnet18", "torchvision resnet18 (random weights)", torchvision_model("resnet18"),
         ["image"], ["logits"], image_axes, 14, image_sizes),
        ("mobilenet_v3", "torchvision mobilenet_v3_small (random, calibrated weights)",
         torchvision_model("mobilenet_v3_small", True), ["image"], ["logits"], image_axes, 14,
         image_sizes),
        ("shufflenet", "torchvision shufflenet_v2_x1_0 (random, calibrated weights)",
         torchvision_model("shufflenet_v2_x1_0", True), ["image"], ["logits"], image_axes, 14,
         image_sizes),
        ("squeezenet", "torchvision squeezenet1_1 (random, calibrated weights)",
         torchvision_model("squeezenet1_1", True), ["image"], ["logits"], image_axes, 14,
         image_sizes),
        ("mlp", "MLP 784-2048-2048-10, ReLU, softmax", MLP, ["x"], ["probs"],
         {"x": {0: "batch"}, "probs": {0: "batch"}}, 14,
         [("b8", normal(8, 784), None), ("b256", normal(256, 784), None)]),
    ]


def export(out, entry):
    name, description, make, in_names, out_names, axes, opset, sizes = entry
    torch.manual_seed(0)
    model = make().eval()
    rng = np.random.default_rng(1)
    cases = [(size, build(rng), flops) for size, build, flops in sizes]
    mdir = os.path.join(out, name)
    os.makedirs(mdir, exist_ok=True)
    path = os.path.join(mdir, "model.onnx")
    t0 = time.perf_counter()
    # Traced at the second size's inputs: dims are dynamic, so the first size differs from it.
    example = tuple(torch.from_numpy(a) for a in cases[-1][1])
    torch.onnx.export(model, example, path, opset_version=opset, input_names=in_names,
                      output_names=out_names, dynamic_axes=axes, do_constant_folding=True)
    print(f"{name}: exported in {time.perf_counter() - t0:.1f} s "
          f"({os.path.getsize(path) / 1e6:.1f} MB)", flush=True)
    entry = {"name": name, "description": description, "model": os.path.relpath(path, out),
             "opset": opset, "sizes": []}
    for size, arrays, flops in cases:
        sdir = os.path.join(mdir, size)
        os.makedirs(sdir, exist_ok=True)
        args = tuple(torch.from_numpy(a) for a in arrays)
        if flops is None:
            flops = hooked_flops(model, args)
        t0 = time.perf_counter()
        with torch.no_grad():
            outs = model(*args)
        torch_ms = (time.perf_counter() - t0) * 1e3
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        rec = {"name": size, "inputs": {}, "expected": {}, "flops": flops,
               "torch_ms": torch_ms}
        for n, a in zip(in_names, arrays):
            np.save(os.path.join(sdir, f"{n}.npy"), a)
            rec["inputs"][n] = os.path.relpath(os.path.join(sdir, f"{n}.npy"), out)
            rec.setdefault("shapes", {})[n] = list(a.shape)
        for n, t in zip(out_names, outs):
            np.save(os.path.join(sdir, f"expected_{n}.npy"), t.numpy())
            rec["expected"][n] = os.path.relpath(os.path.join(sdir, f"expected_{n}.npy"), out)
        print(f"  {size}: {flops / 1e9:.2f} GFLOP, PyTorch eager {torch_ms:.0f} ms", flush=True)
        entry["sizes"].append(rec)
    return entry


def main():
    args = sys.argv[1:]
    only = None
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1].split(",")
        del args[i:i + 2]
    out = args[0] if args else "build/zoo"
    os.makedirs(out, exist_ok=True)
    manifest_path = os.path.join(out, "manifest.json")
    models = {}
    if only and os.path.exists(manifest_path):  # keep the models not re-exported
        with open(manifest_path) as f:
            models = {m["name"]: m for m in json.load(f)["models"]}
    names = [e[0] for e in zoo()]
    for entry in zoo():
        if only is None or entry[0] in only:
            models[entry[0]] = export(out, entry)
    doc = {"torch": torch.__version__,
           "models": [models[n] for n in names if n in models]}
    with open(manifest_path, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {manifest_path}")


if __name__ == "__main__":
    main()
