#!/usr/bin/env python3
"""A training or inference step of BERT-base with its MLM head or of ResNet-50, timed with PyTorch
on the GPU: what `kernel-lab advise` predicts, measured the way a user would run it.

- bert-base-mlm: transformers' BertForMaskedLM from BertConfig() (random weights, nothing
  downloaded), 32 sequences of 512 tokens, 15% of them masked for the loss; training is AdamW
  under autocast fp16 with a GradScaler.
- resnet50: torchvision's resnet50(weights=None), channels-last, 256 images of 224 x 224, 1000
  classes, cross-entropy; training is SGD with momentum under autocast fp16 with a GradScaler.

Each step is timed with CUDA events over --steps after --warmup. The same steps' host side is
timed too, with the CPU's clock at each phase's end (forward with its loss, backward, the
optimizer's update): how long the host takes to issue the phase's kernels, which bounds the step
wherever the GPU runs them faster than eager PyTorch issues them. Where a step reads a value back
(transformers' attention-mask check may), the host waits for the GPU there and its time holds
that wait too. Then one more step runs under torch.profiler and its
GPU time is split by category (convolutions, GEMMs, attention, normalisation, element-wise,
optimizer) from the kernels' names; busy_ms is the time some kernel ran; the GPU's memsets and
copies, which are no kernels and fall in the gaps, are counted apart ("other"), and the idle
stretches between the GPU's activities are counted by their length ("gaps"). The profiler slows the
host, so the timed step's launch gaps are its median less busy_ms, not the profiled step's idle
time. dispatch_us is the host's time to issue one small op, measured apart from the steps. Peak
memory is torch.cuda.max_memory_allocated over the timed steps. Prints one JSON line.
"""
import argparse
import json
import re
import statistics
import time

import torch

CATEGORIES = (
    # (category, a pattern searched in a kernel's lower-cased name), first match wins. Batch norm
    # comes before convolution because cuDNN names its batch-norm kernels "cudnn::bn_..."; "conv"
    # must not match a cast kernel's "convert"; a log-softmax (the loss) is element-wise, since
    # attention runs fused and its softmax never leaves the attention kernel.
    ("optimizer", r"adam|sgd|multi_tensor_apply|foreach|_amp_update_scale"),
    ("attention", r"flash|fmha|attention|sdpa"),
    ("normalisation", r"norm|bn_|batchnorm|welford"),
    ("convolution", r"conv(?!ert)|cudnn|implicit_gemm|implicit_convolve|wgrad|dgrad|fprop|winograd"),
    ("gemm", r"gemm|cutlass|nvjet|xmma|cublas|sm90_|sm80_|ampere_|hopper_"),
)


def category(name):
    n = name.lower()
    for cat, pattern in CATEGORIES:
        if re.search(pattern, n):
            return cat
    return "element-wise"


def bert(args):
    from transformers import BertConfig, BertForMaskedLM

    cfg = BertConfig()
    model = BertForMaskedLM(cfg).cuda()
    tokens = torch.randint(0, cfg.vocab_size, (args.batch, args.seq), device="cuda")
    labels = torch.full_like(tokens, -100)
    masked = torch.rand(tokens.shape, device="cuda") < 0.15
    labels[masked] = tokens[masked]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

    def forward():
        with torch.autocast("cuda", dtype=torch.float16):
            return model(input_ids=tokens, labels=labels).loss

    return model, opt, forward


def resnet(args):
    import torchvision

    model = torchvision.models.resnet50(weights=None).cuda().to(memory_format=torch.channels_last)
    images = torch.randn(args.batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    classes = torch.randint(0, 1000, (args.batch,), device="cuda")
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, fused=True)
    loss_fn = torch.nn.CrossEntropyLoss()

    def forward():
        with torch.autocast("cuda", dtype=torch.float16):
            return loss_fn(model(images), classes)

    return model, opt, forward


WORKLOADS = {"bert-base-mlm": (bert, 32), "resnet50": (resnet, 256)}


def timed(step, phases, warmup, steps):
    """The step's GPU time (CUDA events) and, per phase, its host's time (the CPU's clock at each
    mark the step makes) and the GPU's (an event recorded there), medians over `steps`."""
    for _ in range(warmup):
        step(lambda: None)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    ms, host, gpu = [], [], []
    for _ in range(steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        marks, events = [time.perf_counter()], [start]

        def mark():
            marks.append(time.perf_counter())
            events.append(torch.cuda.Event(enable_timing=True))
            events[-1].record()

        start.record()
        step(mark)
        end.record()
        end.synchronize()
        ms.append(start.elapsed_time(end))
        host.append([(b - a) * 1e3 for a, b in zip(marks, marks[1:])])
        gpu.append([a.elapsed_time(b) for a, b in zip(events, events[1:])])
    ms.sort()
    return {
        "median_ms": statistics.median(ms),
        "min_ms": ms[0],
        "max_ms": ms[-1],
        "steps": steps,
        "max_memory_allocated_gb": torch.cuda.max_memory_allocated() / 1e9,
        "host_ms": {p: statistics.median(h[i] for h in host) for i, p in enumerate(phases)},
        # When the GPU finished each phase's kernels, from the one before: set beside the host's,
        # it says which of the two a phase waited for (advise does not read it).
        "gpu_ms": {p: statistics.median(g[i] for g in gpu) for i, p in enumerate(phases)},
    }


def dispatch_us(rounds=5, ops=500):
    """What eager PyTorch's host takes to issue one small element-wise op (an out-of-place add of
    two 1024-element tensors), us: the median over `rounds` of `ops` adds queued behind a GPU kept
    busy, so the host never waits. A property of the host and PyTorch, not of the GPU: the rate at
    which a step's short kernels can reach the GPU."""
    a = torch.ones(1024, device="cuda")
    b = torch.ones(1024, device="cuda")
    per = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        torch.cuda._sleep(50_000_000)  # clock cycles: some 25 ms, longer than the adds take to queue
        t = time.perf_counter()
        for _ in range(ops):
            a + b
        per.append((time.perf_counter() - t) * 1e6 / ops)
    torch.cuda.synchronize()
    return statistics.median(per)


def merged(activity):
    """The GPU's busy stretches: `activity`'s (start, end, name) intervals merged where they
    overlap, each as (start, end, the first activity's name, the name of the one that ends it)."""
    out = []
    for s, t, name in sorted(activity):
        if out and s <= out[-1][1]:
            if t > out[-1][1]:
                out[-1] = (out[-1][0], t, out[-1][2], name)
        else:
            out.append((s, t, name, name))
    return out


def idle_stretches(activity, total_ms):
    """Where a profiled step's idle time lies: each stretch between two of the GPU's activities
    (kernels, memsets, copies; `activity` holds (start, end, name), microseconds on the GPU's
    timeline) counted and summed by its length. A launch-bound gap is a few microseconds; longer
    ones are the GPU waiting for a host that fell behind or for the host's code between phases.
    `outside_ms` is the step's time (`total_ms`) before its first activity and after its last."""
    busy = merged(activity)
    # Each gap comes after one busy stretch's last activity and before the next's first.
    idle = [(b[0] - a[1], a[3], b[2]) for a, b in zip(busy, busy[1:])]
    longest = [{"us": round(g, 1), "after": after[:120], "before": before[:120]} for g, after, before in idle]
    idle = [g for g, _, _ in idle]
    span = (busy[-1][1] - busy[0][0]) / 1e3 if busy else 0.0
    edges = (3, 10, 50, 200, float("inf"))
    bins = list(zip((0,) + edges, edges))
    return {"up_to_us": [e if e != float("inf") else None for e in edges],
            "calls": [sum(1 for g in idle if lo < g <= hi) for lo, hi in bins],
            "ms": [round(sum(g for g in idle if lo < g <= hi) / 1e3, 4) for lo, hi in bins],
            "outside_ms": round(max(0.0, total_ms - span), 4),
            # The ten longest, with the activities on either side: where the step waits.
            "longest": sorted(longest, key=lambda g: -g["us"])[:10]}


def breakdown(step):
    """GPU time per category for one step, ms, from the profiler's kernel events."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        start.record()
        step(lambda: None)
        end.record()
        end.synchronize()
    total = start.elapsed_time(end)
    per = {cat: 0.0 for cat, _ in CATEGORIES}
    per["element-wise"] = 0.0
    kernels, activity = [], []
    by_name, calls = {}, {}
    # The GPU's memsets and copies are no kernels: they count as gaps, and are listed apart.
    other = {"memset": {"calls": 0, "ms": 0.0}, "memcpy": {"calls": 0, "ms": 0.0}}
    for e in prof.events():
        if e.device_type.name != "CUDA":
            continue
        activity.append((e.time_range.start, e.time_range.end, e.name))
        op = next((k for k in other if k in e.name.lower()), None)
        if op:
            other[op]["calls"] += 1
            other[op]["ms"] += (e.time_range.end - e.time_range.start) / 1e3
            continue
        # Kernel intervals in microseconds on the GPU's timeline.
        kernels.append((e.time_range.start, e.time_range.end, e.name))
        ms = (e.time_range.end - e.time_range.start) / 1e3
        per[category(e.name)] += ms
        by_name[e.name] = by_name.get(e.name, 0.0) + ms
        calls[e.name] = calls.get(e.name, 0) + 1
    busy = sum(t - s for s, t, _, _ in merged(kernels))
    per["launch gaps"] = max(0.0, total - busy / 1e3)
    gaps = idle_stretches(activity, total)
    # Every kernel, longest first, with the category it was put in (so the sorting can be read)
    # and its launches: what a model of the step's passes is checked against.
    top = sorted(by_name.items(), key=lambda kv: -kv[1])
    return {"step_ms": total, "busy_ms": busy / 1e3, "kernels": len(kernels), "ms": per, "other": other, "gaps": gaps,
            "top": [{"kernel": k[:240], "category": category(k), "calls": calls[k], "ms": round(v, 3)} for k, v in top]}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workload", choices=sorted(WORKLOADS), required=True)
    p.add_argument("--mode", choices=["train", "infer"], default="train")
    p.add_argument("--batch", type=int, help="sequences (BERT) or images (ResNet-50); default 32 or 256")
    p.add_argument("--seq", type=int, default=512, help="tokens a sequence (BERT)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args()
    build, batch = WORKLOADS[args.workload]
    args.batch = args.batch or batch
    if args.batch < 1 or args.seq < 1 or args.steps < 1 or args.warmup < 0:
        p.error("--batch, --seq and --steps must be at least 1, --warmup at least 0")
    if not torch.cuda.is_available():
        raise SystemExit("torch_step.py: no CUDA device")
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    model, opt, forward = build(args)
    scaler = torch.amp.GradScaler("cuda")

    if args.mode == "train":
        model.train()

        # The fused optimizers take the scaler's inf check as a tensor: no phase waits for the GPU.
        def step(mark):
            opt.zero_grad(set_to_none=True)
            loss = scaler.scale(forward())
            mark()
            loss.backward()
            mark()
            scaler.step(opt)
            scaler.update()
            mark()

        phases = ("forward", "backward", "update")
    else:
        model.eval()

        def step(mark):
            with torch.inference_mode():
                forward()
            mark()

        phases = ("forward",)

    timing = timed(step, phases, args.warmup, args.steps)
    print(json.dumps({
        "workload": args.workload,
        "mode": args.mode,
        "batch": args.batch,
        "seq": args.seq if args.workload.startswith("bert") else None,
        "precision": "fp16 autocast",
        "parameters": sum(t.numel() for t in model.parameters()),
        "gpu": torch.cuda.get_device_name(),
        "sms": torch.cuda.get_device_properties(0).multi_processor_count,
        "torch": torch.__version__,
        "time": timing,
        "dispatch_us": dispatch_us(),
        "profile": breakdown(step),
    }))


if __name__ == "__main__":
    main()
