#!/usr/bin/python3
"""Exports the small PyTorch models Kiln's ONNX tests run (tests/data/onnx/) and their reference
outputs at several input sizes.

Usage: /usr/bin/python3 scripts/export-onnx-models.py [OUTDIR]   (default tests/data/onnx)
Needs Debian's python3-torch (1.13) and python3-onnx; the tests need neither: they use the
committed files. Deterministic (fixed seeds).

Per model NAME: NAME/model.onnx, and per size case K: NAME/K/<input>.npy, NAME/K/<output>.npy.

The torchvision CNNs (mobilenet_v3, shufflenet, squeezenet) need python3-torchvision (0.14): built
by torchvision's own constructors at small widths with 10 classes (random weights do not compress:
each model.onnx stays under 3 MB, 5.3 MB together), calibrated on random images (calibrate()),
exported with dynamic batch, height and width. New models go at the end of main(), so that the
random streams of the ones before them, and so their files, stay unchanged.
"""
import os
import sys
from collections import OrderedDict

import numpy as np
import torch
import torchvision
from torch import nn
from torch.nn.utils.fusion import fuse_conv_bn_eval

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


class Seq2Seq(nn.Module):
    """nn.Transformer (encoder-decoder) with a causal mask built from the target length and a
    bool padding mask over the source: src [B, S, 32], tgt [B, T, 32], src_pad [B, S]."""

    def __init__(self, d=32):
        super().__init__()
        self.t = nn.Transformer(d, 4, 2, 2, 64, dropout=0.0, batch_first=True)
        self.t.encoder.enable_nested_tensor = False  # the exported graph's semantics in eager too

    def forward(self, src, tgt, src_pad):
        mask = self.t.generate_square_subsequent_mask(tgt.shape[1])
        return self.t(src, tgt, tgt_mask=mask, src_key_padding_mask=src_pad)


class DetectorFeatures(nn.Module):
    """A small conv backbone for the detectors: one map at stride 8 (`maps=1`, Faster R-CNN
    reads its `out_channels`) or maps at strides 8 and 16 (SSD)."""

    def __init__(self, maps):
        super().__init__()
        self.maps = maps
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 16, 3, 2, 1),
                                  nn.ReLU(), nn.Conv2d(16, 16, 3, 2, 1), nn.ReLU())
        self.down = nn.Sequential(nn.Conv2d(16, 16, 3, 2, 1), nn.ReLU())
        self.out_channels = 16

    def forward(self, x):
        a = self.stem(x)
        if self.maps == 1:
            return a
        return OrderedDict([("0", a), ("1", self.down(a))])


class Detector(nn.Module):
    """A torchvision detector on one image [3, H, W] -> boxes [N, 4], scores [N], labels [N]."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, image):
        d = self.model([image])[0]
        return d["boxes"], d["scores"], d["labels"]


def ssd_detector():
    """torchvision's SSD (its transform, default boxes, SSDHead, per-class NMS, top-k) on the
    small backbone, 4 classes, 96x96."""
    from torchvision.models.detection.anchor_utils import DefaultBoxGenerator
    from torchvision.models.detection.ssd import SSD, SSDHead
    anchors = DefaultBoxGenerator([[2], [2, 3]])
    model = SSD(DetectorFeatures(2), anchors, (96, 96), num_classes=4,
                head=SSDHead([16, 16], anchors.num_anchors_per_location(), 4),
                score_thresh=0.05, detections_per_img=10, topk_candidates=40, nms_thresh=0.45)
    for p in model.head.classification_head.parameters():
        nn.init.normal_(p, std=0.8)  # scores that spread out (random init gives near-uniform ones)
    return Detector(model)


def faster_rcnn_detector():
    """torchvision's two-stage Faster R-CNN (RPN with TopK and NMS, RoiAlign through
    MultiScaleRoIAlign, a box head, per-class NMS) on the small backbone, 4 classes, 96x96."""
    from torchvision.models.detection.anchor_utils import AnchorGenerator
    from torchvision.models.detection.faster_rcnn import (FasterRCNN, FastRCNNPredictor,
                                                          TwoMLPHead)
    from torchvision.ops import MultiScaleRoIAlign
    model = FasterRCNN(DetectorFeatures(1), num_classes=None, min_size=96, max_size=96,
                       rpn_anchor_generator=AnchorGenerator(sizes=((16, 32),),
                                                            aspect_ratios=((0.5, 1.0, 2.0),)),
                       box_roi_pool=MultiScaleRoIAlign(["0"], 7, 2),
                       box_head=TwoMLPHead(16 * 49, 64), box_predictor=FastRCNNPredictor(64, 4),
                       rpn_pre_nms_top_n_test=40, rpn_post_nms_top_n_test=20,
                       box_detections_per_img=10, box_score_thresh=0.05)
    for p in list(model.roi_heads.box_predictor.parameters()) + list(model.rpn.head.parameters()):
        nn.init.normal_(p, std=0.8 if p.dim() > 1 or p.shape[0] < 64 else 0.3)
    return Detector(model)


def detector_images(model, rng, count):
    """Images (a few boxes of colour on dark noise) whose detections agree between float32 and
    float64: no score or overlap sits near a tie or a threshold, where the order of NMS and
    top-k is discontinuous and any other rounding could change it."""
    images = []
    while len(images) < count:
        image = 0.1 * rng.random((3, 96, 96)).astype(np.float32)
        for _ in range(3):
            y, x = rng.integers(0, 70, 2)
            h, w = rng.integers(12, 26, 2)
            image[:, y:y + h, x:x + w] += rng.random((3, 1, 1)).astype(np.float32)
        with torch.no_grad():
            a = model(torch.from_numpy(image))
            b = model.double()(torch.from_numpy(image).double())
            model.float()
        if (a[0].shape == b[0].shape and torch.equal(a[2], b[2]) and
                torch.allclose(a[0].double(), b[0], atol=1e-3) and
                torch.allclose(a[1].double(), b[1], atol=1e-4)):
            images.append((image,))
    return images


def unit_scores(model, head, inputs):
    """Scales the last layer so that scores have unit deviation on `inputs` (a randomly
    initialised transformer's scores are a few hundredths: too close to the tests' 1e-4)."""
    model.eval()
    with torch.no_grad():
        std = float(torch.cat([model(x) for x in inputs]).std())
        head.weight.mul_(1.0 / std)
        head.bias.mul_(1.0 / std)
    return model


def calibrate(model, sizes):
    """Data-dependent weights, so that a random deep CNN's scores depend on its input (with
    torchvision's initialisation they collapse to a constant within a few layers), measured on
    random images of the given (batch, height, width) sizes: batch norms get random affine
    parameters and running statistics averaged over train-mode passes; a model without batch
    norms gets each conv scaled, in order, to unit output deviation. Then the batch norms are
    folded into their convs (the exported file and the reference outputs use the same weights,
    where the export would fold them itself in other rounding), and the last layer is scaled
    for scores of unit deviation: larger scores would leave float rounding, which differs
    between any two ways of summing, too close to the tests' 1e-4."""
    images = [torch.randn(b, 3, h, w) for b, h, w in sizes]
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for m in bns:
            c = m.num_features
            m.reset_running_stats()
            m.momentum = None
            m.weight.copy_(1 + 0.2 * torch.randn(c))
            m.bias.copy_(0.2 * torch.randn(c))
        model.train()
        for x in images if bns else []:
            model(x)
        for conv in ([] if bns else [m for m in model.modules() if isinstance(m, nn.Conv2d)]):
            seen = []
            hook = conv.register_forward_hook(lambda m, i, o: seen.append(o.flatten()))
            for x in images:
                model(x)
            hook.remove()
            std = torch.cat(seen).std()
            conv.weight /= std
            if conv.bias is not None:
                conv.bias /= std
        model.eval()
        for seq in [m for m in model.modules() if isinstance(m, nn.Sequential)]:
            names = list(seq._modules)
            for a, b in zip(names, names[1:]):
                if isinstance(seq._modules[a], nn.Conv2d) and isinstance(seq._modules[b],
                                                                          nn.BatchNorm2d):
                    seq._modules[a] = fuse_conv_bn_eval(seq._modules[a], seq._modules[b])
                    seq._modules[b] = nn.Identity()
        assert not any(isinstance(m, nn.BatchNorm2d) for m in model.modules())
        head = [m for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))][-1]
        scale = torch.cat([model(x).flatten() for x in images]).std()
        head.weight /= scale
        head.bias /= scale
    return model


def export(model, name, inputs, cases, dynamic_axes, out, output_names, opset=OPSET):
    model.eval()
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    args = tuple(torch.from_numpy(a) for a in cases[0])
    torch.onnx.export(model, args, os.path.join(d, "model.onnx"), opset_version=opset,
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

    # torchvision CNNs: dynamic batch, height and width; odd sizes so that stride-2 convs and
    # pools round both ways, and a width of 20 that leaves 1 column at the end and, in
    # squeezenet, a last ceil-mode pool (3 wide, stride 2) over 2 columns.
    image_axes = {"image": {0: "batch", 2: "height", 3: "width"}, "scores": {0: "batch"}}
    image_sizes = ((2, 64, 64), (3, 72, 88), (2, 97, 20))
    # Inverted residuals with squeeze-excite (global average pool, HardSigmoid gate), HardSwish,
    # depthwise convs.
    calibration = [(4, h, w) for _, h, w in image_sizes]
    export(calibrate(torchvision.models.mobilenet_v3_small(width_mult=0.35, num_classes=10),
                     calibration),
           "mobilenet_v3", ["image"], [(randn(b, 3, h, w),) for b, h, w in image_sizes],
           image_axes, out, ["scores"])
    # Channel split / concat and channel shuffle (reshape, transpose, reshape over sizes read
    # from the input), depthwise convs, a mean over H and W.
    export(calibrate(torchvision.models.shufflenet_v2_x0_5(num_classes=10), calibration),
           "shufflenet", ["image"], [(randn(b, 3, h, w),) for b, h, w in image_sizes],
           image_axes, out, ["scores"])
    # Fire modules (squeeze 1x1, expand 1x1 and 3x3 concatenated), ceil-mode max pools, a conv
    # classifier and a global average pool.
    export(calibrate(torchvision.models.squeezenet1_1(num_classes=10), calibration),
           "squeezenet", ["image"], [(randn(b, 3, h, w),) for b, h, w in image_sizes],
           image_axes, out, ["scores"])

    # Models whose exports compute their shapes (Shape -> arithmetic, Where, ScatterND, Expand,
    # Pad): each must run as one graph per size class, with no graph break.
    # A windowed-attention vision transformer: pads to the window, shifted windows with a mask
    # built by ScatterND, patch merging that pads odd sizes.
    from torchvision.models.swin_transformer import SwinTransformer
    swin_sizes = ((2, 56, 56), (3, 40, 72), (2, 44, 52))
    swin = SwinTransformer(patch_size=[4, 4], embed_dim=24, depths=[2, 2], num_heads=[2, 4],
                           window_size=[4, 4], num_classes=10)
    unit_scores(swin, swin.head, [torch.randn(b, 3, h, w) for b, h, w in swin_sizes])
    export(swin, "swin", ["image"], [(randn(b, 3, h, w),) for b, h, w in swin_sizes],
           image_axes, out, ["scores"])
    # An encoder-decoder transformer with a causal target mask and a source padding mask.
    def seq2seq_case(b, s, t):
        pad = np.zeros((b, s), dtype=bool)
        pad[1:, s - 2:] = True
        return (randn(b, s, 32), randn(b, t, 32), pad)
    export(Seq2Seq(), "seq2seq", ["src", "tgt", "src_pad"],
           [seq2seq_case(b, s, t) for b, s, t in ((2, 10, 7), (3, 6, 9), (2, 13, 4))],
           {"src": {0: "batch", 1: "src_len"}, "tgt": {0: "batch", 1: "tgt_len"},
            "src_pad": {0: "batch", 1: "src_len"}, "y": {0: "batch", 1: "tgt_len"}}, out, ["y"])
    # A ViT classifier: a class token expanded to the batch.
    from torchvision.models.vision_transformer import VisionTransformer
    vit = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=32,
                            mlp_dim=64, num_classes=10)
    nn.init.normal_(vit.heads.head.weight, std=0.02)  # torchvision starts the head at zero
    unit_scores(vit, vit.heads.head, [torch.randn(4, 3, 32, 32)])
    export(vit, "vit", ["image"], [(randn(b, 3, 32, 32),) for b in (2, 3, 5)],
           {"image": {0: "batch"}, "scores": {0: "batch"}}, out, ["scores"])

    # Detectors: NonMaxSuppression, TopK, RoiAlign and data-dependent sizes (the number of boxes
    # above a threshold, after NMS) in one model; three images, whose numbers of candidates
    # differ.
    # Faster R-CNN at opset 15: torchvision 0.14 writes RoiAlign without its
    # coordinate_transformation_mode, whose default became half_pixel in opset 16, while
    # torchvision's roi_align (aligned=False) computes output_half_pixel, RoiAlign-10's only
    # mode. At opset 16 and later the file means something else than the PyTorch model (ONNX
    # Runtime and Kiln agree on the file: boxes differ from PyTorch's by up to 74 pixels).
    for name, make, seed, opset in (("ssd", ssd_detector, 1, OPSET),
                                    ("faster_rcnn", faster_rcnn_detector, 2, 15)):
        torch.manual_seed(seed)
        model = make().eval()
        export(model, name, ["image"], detector_images(model, rng, 3), None, out,
               ["boxes", "scores", "labels"], opset)

if __name__ == "__main__":
    main()
