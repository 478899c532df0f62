#!/usr/bin/python3
"""Exports the small PyTorch models Kiln's ONNX tests run (tests/data/onnx/) and their reference
outputs at several input sizes.

Usage: /usr/bin/python3 scripts/export-onnx-models.py [OUTDIR]   (default tests/data/onnx)
Needs Debian's python3-torch (1.13) and python3-onnx; the tests need neither: they use the
committed files. Deterministic (fixed seeds).

Per model NAME: NAME/model.onnx, and per size case K: NAME/K/<input>.npy, NAME/K/<output>.npy.
"""
import os
import sys

import numpy as np
import torch
from torch import nn

OPSET = 17


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 32), nn.Tanh(),
                                 nn.Linear(32, 8))

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)


class Encoder(nn.Module):
    """Token ids [B, S] -> logits [B, S, V]: embedding + learned positions, two post-norm encoder
    layers with a causal mask built from S inside forward, a head."""

    def __init__(self, vocab=50, d=32, heads=4, ff=64, layers=2, max_len=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(max_len, d) * 0.1)
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        s = ids.shape[1]
        x = self.embed(ids) + self.pos[:s]
        mask = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
        return self.head(self.encoder(x, mask=mask))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, stride=1), nn.ReLU(), nn.AvgPool2d(2),
            nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


class Select(nn.Module):
    """Ops without a device lowering: the top 3 scores of an MLP and the positions of the
    positive inputs (TopK, NonZero)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 6)

    def forward(self, x):
        scores = self.lin(x)
        values, indices = torch.topk(scores, 3, dim=-1)
        return values * 2.0, indices, torch.nonzero(x > 0.5)


def export(model, name, inputs, cases, dynamic_axes, out, output_names):
    model.eval()
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    args = tuple(torch.from_numpy(a) for a in cases[0])
    torch.onnx.export(model, args, os.path.join(d, "model.onnx"), opset_version=OPSET,
                      input_names=inputs, output_names=output_names, dynamic_axes=dynamic_axes,
                      do_constant_folding=True)
    for k, arrays in enumerate(cases):
        cd = os.path.join(d, str(k))
        os.makedirs(cd, exist_ok=True)
        with torch.no_grad():
            outs = model(*[torch.from_numpy(a) for a in arrays])
        if isinstance(outs, torch.Tensor):
            outs = (outs,)
        for n, a in zip(inputs, arrays):
            np.save(os.path.join(cd, n + ".npy"), a)
        for n, o in zip(output_names, outs):
            np.save(os.path.join(cd, n + ".npy"), o.numpy())
    print("exported", name, os.path.getsize(os.path.join(d, "model.onnx")), "bytes")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "onnx")
    torch.manual_seed(0)
    rng = np.random.default_rng(0)

    def randn(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    export(MLP(), "mlp", ["x"], [(randn(b, 16),) for b in (3, 5, 9)],
           {"x": {0: "batch"}, "y": {0: "batch"}}, out, ["y"])
    export(Encoder(), "encoder", ["ids"],
           [(rng.integers(0, 50, (b, s)).astype(np.int64),) for b, s in ((2, 7), (3, 12), (2, 20))],
           {"ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}, out, ["logits"])
    cnn = CNN()
    with torch.no_grad():  # non-trivial batch-norm statistics
        bn = cnn.features[1]
        bn.running_mean.copy_(torch.randn(8) * 0.1)
        bn.running_var.copy_(torch.rand(8) + 0.5)
    export(cnn, "cnn", ["image"], [(randn(b, 3, h, h),) for b, h in ((2, 8), (3, 12), (2, 16))],
           {"image": {0: "batch", 2: "height", 3: "width"}, "scores": {0: "batch"}}, out,
           ["scores"])
    export(Select(), "select", ["x"], [(randn(4, 8),), (randn(6, 8),)],
           {"x": {0: "rows"}}, out, ["top_values", "top_indices", "positive"])


if __name__ == "__main__":
    main()
