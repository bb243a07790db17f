#!/usr/bin/env python3
"""One BERT-sized encoder training step (forward and backward), timed with PyTorch on the GPU:
the outside check of `kernel-lab advise --workload bert-base --precision fp16`.

The encoder is built from BERT's dimensions with random weights (no embeddings or heads: advise
prices the encoder's layers), runs under autocast fp16 with dropout 0.1, and is timed with CUDA
events over --steps steps after --warmup. Attention runs twice: with PyTorch's default
scaled_dot_product_attention (fused kernels, as advise prices it) and with its math backend (the
scores written and read by separate softmax and dropout passes). Prints one JSON line.
"""
import argparse
import json

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from torch_step import timed

DIMS = {"bert-base": (12, 768, 12, 3072), "bert-large": (24, 1024, 16, 4096)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=sorted(DIMS), default="bert-base")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    a = p.parse_args()
    layers, hidden, heads, ffn = DIMS[a.model]
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.1, activation="gelu", batch_first=True)
    model = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).cuda().train()
    x = torch.randn(a.batch, a.seq, hidden, device="cuda", requires_grad=True)

    def step():
        model.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).float().pow(2).mean()
        loss.backward()

    fused = timed(step, a.warmup, a.steps)
    with sdpa_kernel(SDPBackend.MATH):
        unfused = timed(step, a.warmup, a.steps)
    params = sum(t.numel() for t in model.parameters())
    print(json.dumps({"model": a.model, "batch": a.batch, "seq": a.seq, "parameters": params,
                      "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                      "fused_attention": fused, "math_attention": unfused}))


if __name__ == "__main__":
    main()
