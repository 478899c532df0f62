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


class Tagger(nn.Module):
    """A recurrent text model: token ids [B, S] -> tag scores [B, S, T]: an embedding, a
    two-layer bidirectional LSTM, a GRU over its outputs and a linear head."""

    def __init__(self, vocab=40, d=16, hidden=12, tags=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, tags)

    def forward(self, ids):
        x, _ = self.lstm(self.embed(ids))
        y, _ = self.gru(x)
        return self.head(y)


class RotaryBlock(nn.Module):
    """A decoder block with rotary position embeddings: RMSNorm, causal self-attention on
    rotated queries and keys (positions and angles built from S inside forward), a SwiGLU MLP."""

    def __init__(self, d=32, heads=4, ff=64):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d, bias=False)
        self.gate = nn.Linear(d, ff, bias=False)
        self.up = nn.Linear(d, ff, bias=False)
        self.down = nn.Linear(ff, d, bias=False)
        self.n1 = nn.Parameter(1 + 0.1 * torch.randn(d))
        self.n2 = nn.Parameter(1 + 0.1 * torch.randn(d))
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, self.hd, 2) / self.hd)))

    def norm(self, x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    def rotate(self, x, cos, sin):
        x1, x2 = x[..., : self.hd // 2], x[..., self.hd // 2:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    def forward(self, x):
        b, s, d = x.shape
        angles = torch.arange(s, dtype=torch.float32)[:, None] * self.inv_freq[None, :]
        angles = torch.cat((angles, angles), dim=-1)
        cos, sin = angles.cos(), angles.sin()
        q, k, v = self.qkv(self.norm(x, self.n1)).split(d, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, self.hd).transpose(1, 2) for t in (q, k, v))
        q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
        scores = q @ k.transpose(-1, -2) / self.hd ** 0.5
        mask = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
        att = torch.softmax(scores + mask, dim=-1) @ v
        x = x + self.out(att.transpose(1, 2).reshape(b, s, d))
        h = self.norm(x, self.n2)
        return x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))


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

    export(Tagger(), "tagger", ["ids"],
           [(rng.integers(0, 40, (b, s)).astype(np.int64),) for b, s in ((2, 7), (3, 7), (2, 11))],
           {"ids": {0: "batch", 1: "seq"}, "tags": {0: "batch", 1: "seq"}}, out, ["tags"])
    export(RotaryBlock(), "rotary", ["x"], [(randn(b, s, 32),) for b, s in ((2, 5), (3, 9), (2, 16))],
           {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}, out, ["y"])

if __name__ == "__main__":
    main()
