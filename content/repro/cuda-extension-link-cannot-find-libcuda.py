"""A PyTorch extension that links the CUDA driver library (-lcuda) on a machine where the linker
finds no unversioned libcuda.so.

Needs only a CPU build of PyTorch, ninja and a C++ compiler with GNU ld (checked with torch
2.13.0, binutils 2.40); a few seconds. The extension source is a trivial C++ file, so nothing is
compiled with nvcc: the failure is entirely in the link step, exactly as for tiny-cuda-nn's
`libraries=["cuda", ...]` or an `extra_ldflags=["-lcuda"]` in a JIT build.

Cases:
1. torch.utils.cpp_extension.load(..., extra_ldflags=["-lcuda"]) with no libcuda.so on any
   linker path: ninja's link step fails, ld prints "cannot find -lcuda", and cpp_extension
   raises RuntimeError("Error building extension ...") with the build output.
2. The fix: a directory that holds a file named libcuda.so (here a stand-in for the CUDA
   toolkit's lib64/stubs/libcuda.so) is added with -L, and the same link succeeds.
"""
import os
import subprocess
import sys
import tempfile

import torch
from torch.utils import cpp_extension

print(f"torch {torch.__version__}", flush=True)
work = tempfile.mkdtemp(prefix="lcuda-", dir=os.getcwd())
src = os.path.join(work, "probe.cpp")
with open(src, "w") as f:
    f.write('extern "C" int probe_answer() { return 42; }\n')

# 1. The extension asks for the driver library by its unversioned name.
build1 = os.path.join(work, "build1")
os.makedirs(build1)
try:
    cpp_extension.load(name="lcuda_probe", sources=[src], extra_ldflags=["-lcuda"],
                       build_directory=build1, is_python_module=False, verbose=False)
    print("--- case 1: unexpectedly linked (this machine has a libcuda.so on the linker path)", flush=True)
except RuntimeError as exc:
    print("--- case 1: the link step failed", flush=True)
    print(f"RuntimeError: {exc}", flush=True)

# 2. Give the linker a directory with a file called libcuda.so (the toolkit's stubs play this role).
stubs = os.path.join(work, "stubs")
os.makedirs(stubs)
stub_src = os.path.join(stubs, "stub.c")
with open(stub_src, "w") as f:
    f.write("int cuInit(unsigned int flags) { return 0; }\n")
subprocess.run(["cc", "-shared", "-fPIC", stub_src, "-o", os.path.join(stubs, "libcuda.so")], check=True)
obj = os.path.join(build1, "probe.o")
out = os.path.join(work, "lcuda_probe_fixed.so")
run = subprocess.run(["c++", obj, "-shared", f"-L{stubs}", "-lcuda", "-o", out],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
print(f"--- case 2: link with -L{stubs} -lcuda: exit status {run.returncode}{run.stdout and ': ' + run.stdout}", flush=True)
sys.exit(0)
