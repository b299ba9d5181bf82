"""Apex amp imported inside try/except, set to None, then used because the AMP opt level is not O0.

Runs on the CPU in a few seconds with any PyTorch and NO Apex installed (the point of the
failure). The training-script lines copy the pattern of Swin Transformer's main.py before
commit 2519a3a (try: from apex import amp / except ImportError: amp = None; --amp-opt-level
defaulting to O1; amp.initialize when the level is not O0).

Cases:
1. Swin's own guard in __main__: `assert amp is not None, "amp not installed!"` stops first.
2. The same script without that guard (or run with python -O, which drops asserts):
   amp.initialize is looked up on None and the AttributeError names 'initialize'.
3. The fix: opt level O0, or PyTorch's own autocast/GradScaler, needs no Apex.
"""
import sys
import traceback
from types import SimpleNamespace

import torch

try:
    # noinspection PyUnresolvedReferences
    from apex import amp
except ImportError:
    amp = None

print(f"torch {torch.__version__}, apex amp importable: {amp is not None}", flush=True)

config = SimpleNamespace(AMP_OPT_LEVEL="O1")  # Swin's --amp-opt-level default before 2519a3a


def build():
    model = torch.nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, optimizer


def main_with_guard():
    if config.AMP_OPT_LEVEL != "O0":
        assert amp is not None, "amp not installed!"


def main(config):
    model, optimizer = build()
    if config.AMP_OPT_LEVEL != "O0":
        model, optimizer = amp.initialize(model, optimizer, opt_level=config.AMP_OPT_LEVEL)
    return model, optimizer


def run(title, fn, *args):
    sys.stdout.flush()
    try:
        fn(*args)
        print(f"--- {title}: ok", flush=True)
    except (AssertionError, AttributeError):
        traceback.print_exc()
        sys.stderr.flush()
        print(f"--- {title}: raised", flush=True)


run("1. Swin's __main__ guard", main_with_guard)
run("2. no guard, opt level O1", main, config)
run("3. opt level O0", main, SimpleNamespace(AMP_OPT_LEVEL="O0"))

# 3b. the replacement: PyTorch AMP (bfloat16 on the CPU here; float16 + GradScaler on a GPU)
model, optimizer = build()
with torch.autocast("cpu", dtype=torch.bfloat16):
    loss = model(torch.randn(4, 8)).float().pow(2).mean()
loss.backward()
optimizer.step()
print(f"--- 3b. torch.autocast instead of apex.amp: ok, loss {loss.item():.4f}", flush=True)
