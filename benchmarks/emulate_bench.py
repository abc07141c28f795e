"""What the emulated CUDA GPU costs: plain-CPU vs emulated wall time.

    python benchmarks/emulate_bench.py [--steps 50] [--iters 2000] [--repeat 3] [--threads N]

Two workloads, each timed in its own fresh process, plain `python` for the CPU side and
`python -m flake8_torchdevice.emulate` for the emulated side (`device="cuda"` there):

- cnn:  a small CNN (conv-relu-pool x2, linear) trained with SGD on MNIST-sized synthetic
        data (1x28x28, 10 classes), batch 64, `--steps` steps;
- tiny: `--iters` iterations of small elementwise ops on 16-element tensors, where the
        emulator's per-operator Python dispatch is all there is to measure.

Each process builds its data, runs a warm-up (5 CNN steps / 200 tiny iterations), then
times the workload once (time.perf_counter, excluding interpreter start and torch
import); the table shows the best of `--repeat` processes per side and their ratio, and
checks that both sides computed the same final loss / checksum.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------- worker side


def _cnn(steps: int, warmup: int = 5) -> dict:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 7 * 7, 10),
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batches = [(torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))) for _ in range(8)]

    def step(i: int) -> "torch.Tensor":
        x, y = batches[i % len(batches)]
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    for i in range(warmup):
        step(i)
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(steps):
        loss = step(i)
    final = loss.item()  # the one host sync, as a training loop's logging would do
    elapsed = time.perf_counter() - start
    return {"device": device, "seconds": elapsed, "check": final}


def _tiny(iters: int, warmup: int = 200) -> dict:
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    a = torch.randn(16, device=device)
    b = torch.randn(16, device=device)

    def body(a, b):
        c = a * b + 1.0
        c = torch.relu(c) - b
        a = a.mul(0.5).add_(c, alpha=0.1)
        return a

    for _ in range(warmup):
        a = body(a, b)
    start = time.perf_counter()
    for _ in range(iters):
        a = body(a, b)
    check = a.sum().item()
    elapsed = time.perf_counter() - start
    return {"device": device, "seconds": elapsed, "check": check, "ops": iters * 5}


def worker(argv: list) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", choices=["cnn", "tiny"], required=True)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args(argv)
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    result = _cnn(args.steps) if args.worker == "cnn" else _tiny(args.iters)
    result["threads"] = torch.get_num_threads()
    print("RESULT " + json.dumps(result))


# ---------------------------------------------------------------- driver side


def run_once(workload: str, emulated: bool, args: argparse.Namespace) -> dict:
    command = [sys.executable]
    if emulated:
        command += ["-m", "flake8_torchdevice.emulate"]
    command += [os.path.abspath(__file__), "--worker", workload, "--steps", str(args.steps),
                "--iters", str(args.iters), "--threads", str(args.threads)]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - started
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    result = json.loads(lines[-1][len("RESULT "):])
    result["process"] = wall
    expected = "cuda" if emulated else "cpu"
    if result["device"] != expected:
        raise SystemExit(f"expected the {expected} side to run on {expected}, got {result['device']}")
    return result


def main(argv: list) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50, help="CNN training steps timed (default 50)")
    parser.add_argument("--iters", type=int, default=2000, help="tiny-op loop iterations timed (default 2000)")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per side; best is kept (default 3)")
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads in both sides (0: default)")
    parser.add_argument("--only", choices=["cnn", "tiny"], help="run one workload")
    args = parser.parse_args(argv)

    import platform

    import torch

    print(f"torch {torch.__version__}, python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"best of {args.repeat} fresh processes per side")
    rows = []
    for workload in ([args.only] if args.only else ["cnn", "tiny"]):
        best = {}
        for emulated in (False, True):
            runs = []
            for _ in range(args.repeat):  # alternate sides would be fairer on a noisy machine;
                runs.append(run_once(workload, emulated, args))  # keep it simple: best-of hides noise
            best[emulated] = min(runs, key=lambda r: r["seconds"])
            best[emulated]["all"] = [r["seconds"] for r in runs]
        plain, emu = best[False], best[True]
        same = abs(plain["check"] - emu["check"]) <= 1e-5 * max(1.0, abs(plain["check"]))
        label = f"cnn ({args.steps} steps, batch 64)" if workload == "cnn" else \
            f"tiny ({args.iters} iters x 5 ops, 16 elems)"
        rows.append((label, plain, emu, same))

    header = f"{'workload':<34} {'plain CPU':>10} {'emulated':>10} {'ratio':>7} {'per step/iter':>22}  same result"
    print(header)
    print("-" * len(header))
    for label, plain, emu, same in rows:
        n = args.steps if label.startswith("cnn") else args.iters
        per = f"{plain['seconds'] / n * 1e3:.3f} / {emu['seconds'] / n * 1e3:.3f} ms"
        ratio = emu["seconds"] / plain["seconds"]
        print(f"{label:<34} {plain['seconds']:>9.3f}s {emu['seconds']:>9.3f}s {ratio:>6.2f}x "
              f"{per:>22}  {'yes' if same else 'NO'} ({plain['check']:.6g} / {emu['check']:.6g})")
    print()
    for label, plain, emu, _ in rows:
        print(f"{label}: plain runs {', '.join(f'{s:.3f}' for s in plain['all'])}s; "
              f"emulated runs {', '.join(f'{s:.3f}' for s in emu['all'])}s; "
              f"process wall of best run {plain['process']:.2f}s / {emu['process']:.2f}s; threads {plain['threads']}")
    return 0 if all(same for *_, same in rows) else 1


if __name__ == "__main__":
    if "--worker" in sys.argv[1:]:
        worker(sys.argv[1:])
    else:
        sys.exit(main(sys.argv[1:]))
