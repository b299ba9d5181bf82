"""Reading Accelerate's AcceleratorState before an Accelerator exists, or after it was reset.

Needs accelerate next to PyTorch (checked with accelerate 1.16.0, torch 2.13.0); transformers is
used when importable (checked with 5.25.0). One process on the CPU, no process group, a few
seconds. DeepSpeed is left out (its CPU communication op is compiled on first use); the
message comes from AcceleratorState's constructor whatever the plugin.

Cases:
1. AcceleratorState().deepspeed_plugin in a fresh process: the constructor raises the ValueError
   "Please make sure to properly initialize your accelerator ...".
2. The half-written state a caught failure leaves behind: a later Accelerator() fails with an
   AttributeError on `mixed_precision`.
3. The fix: create the Accelerator first, then read the state.
4. A transformers TrainingArguments built after the Accelerator resets the shared state when it
   sets up its devices, so AcceleratorState() raises the same ValueError again; a handle kept from
   before the reset raises "... This happens if `AcceleratorState._reset_state()` was called ...".
5. The same order with accelerator_config={"use_configured_state": True} keeps the state.
"""
import os
import sys
import tempfile
import traceback
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
warnings.simplefilter("ignore")
import torch  # noqa: E402
import accelerate  # noqa: E402
from accelerate import Accelerator  # noqa: E402
from accelerate.state import AcceleratorState  # noqa: E402

print(f"torch {torch.__version__}, accelerate {accelerate.__version__}", flush=True)


def attempt(title, call):
    sys.stdout.flush()
    try:
        print(f"--- {title}: ok, {call()}", flush=True)
    except (ValueError, AttributeError):
        print(f"--- {title}: raised", flush=True)
        traceback.print_exc()
        sys.stderr.flush()


def clean():
    AcceleratorState._reset_state(reset_partial_state=True)


def new_accelerator():
    return Accelerator(cpu=True)


def describe_state():
    plugin = AcceleratorState().deepspeed_plugin
    return f"distributed_type={AcceleratorState().distributed_type}, zero_stage={getattr(plugin, 'zero_stage', None)}"


# 1. no Accelerator yet
attempt("AcceleratorState().deepspeed_plugin before any Accelerator", describe_state)
# 2. after the caught ValueError the shared dict is no longer empty
attempt("Accelerator() after a caught failure", lambda: type(new_accelerator()).__name__)
clean()
# 3. the fix
attempt("Accelerator first, then AcceleratorState()", lambda: (new_accelerator(), describe_state())[1])

try:
    import transformers
    from transformers import TrainingArguments
    transformers.logging.set_verbosity_error()
except ImportError:
    transformers = None
    print("transformers not importable: skipping its cases", flush=True)

if transformers is not None:
    print(f"transformers {transformers.__version__}", flush=True)
    held = AcceleratorState()
    args = TrainingArguments(output_dir=tempfile.mkdtemp(), report_to=[], use_cpu=True)
    attempt("TrainingArguments(...).device after the Accelerator", lambda: str(args.device))
    attempt("handle kept from before the reset", lambda: held.deepspeed_plugin)
    attempt("AcceleratorState() after TrainingArguments set up its devices", describe_state)
    clean()
    new_accelerator()
    args = TrainingArguments(output_dir=tempfile.mkdtemp(), report_to=[], use_cpu=True,
                             accelerator_config={"use_configured_state": True})
    attempt("same order with use_configured_state=True", lambda: (str(args.device), describe_state()))
