"""Reproduce Inductor's "No working C++ compiler found" on CPU, and its "Compiler: ... is not found." sibling.

Inductor turns CPU parts of a compiled graph into C++ and builds them with the
compiler named by torch._inductor.config.cpp.cxx, whose default is
(None, os.environ.get("CXX", "g++")) on Linux: the None slot is used only when
TORCH_INDUCTOR_INSTALL_GXX is set, so in practice it runs `<CXX or g++> --version`
and raises InvalidCxxCompiler when that cannot be run.

Child 1, a "slim container" (PATH points at an empty folder, CXX unset):
  a. the first compiled call fails with (None, 'g++') in the message;
  b. the search list set to a compiler path that does not exist (what a bad
     CXX does) fails the same way and echoes the path.
Child 2, the normal environment of this machine:
  c. Inductor's search finds g++ when it is installed (what the fix restores);
  d. Inductor's Windows check for MSVC's cl (check_compiler_exist_windows),
     called directly because this machine is not Windows: with no cl on PATH
     2.13 raises InvalidCxxCompiler("Compiler: cl is not found.");
  e. an AOTInductor cross-compile for Windows without the MinGW C++ compiler
     prints the same wording for x86_64-w64-mingw32-g++.

PyTorch 2.13 prints, for (a):
    torch._inductor.exc.InductorError: InvalidCxxCompiler: No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, 'g++')
"""
import os
import subprocess
import sys
import tempfile

SLIM = r"""
import torch, torch._dynamo
import torch._inductor.config as config

def f(x):
    return torch.sin(x) * 2 + 1

x = torch.randn(16)
print("== a. no g++ on PATH, CXX unset; search list:", config.cpp.cxx, flush=True)
try:
    torch.compile(f)(x)
except Exception as e:
    print(f"{type(e).__module__}.{type(e).__name__}: {str(e).splitlines()[0]}", flush=True)

config.cpp.cxx = (None, "/opt/no-such-toolchain/bin/g++")  # what CXX=/opt/no-such-toolchain/bin/g++ gives
torch._dynamo.reset()
print("== b. search list:", config.cpp.cxx, flush=True)
try:
    torch.compile(f)(x)
except Exception as e:
    print(f"{type(e).__module__}.{type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
"""

NORMAL = r"""
import shutil, traceback
import torch
from torch._inductor.cpp_builder import check_compiler_exist_windows, get_cpp_compiler

print("== c. normal environment, g++ on PATH:", shutil.which("g++"), flush=True)
try:
    print("Inductor would compile with:", get_cpp_compiler(), flush=True)
except Exception as e:
    print(f"{type(e).__name__}: {e}", flush=True)

print("== d. Windows check for cl (no cl on this machine)", flush=True)
try:
    check_compiler_exist_windows("cl")  # what get_cpp_compiler() runs first on Windows
except Exception as e:
    print("".join(traceback.format_exception_only(e)).strip(), flush=True)

print("== e. AOTInductor cross-compile for Windows without MinGW", flush=True)
class M(torch.nn.Module):
    def forward(self, x):
        return torch.sin(x) + 1
ep = torch.export.export(M(), (torch.randn(4),))
try:
    torch._inductor.aoti_compile_and_package(ep, inductor_configs={
        "aot_inductor.cross_target_platform": "windows",
        "aot_inductor.package_constants_in_so": False,
        "aot_inductor.package_constants_on_disk_format": "binary_blob",
    })
except Exception as e:
    print(f"{type(e).__module__}.{type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
"""


def run(code, env):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(env, TORCHINDUCTOR_CACHE_DIR=cache)  # no warm cache can hide the search
        out = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=240, check=False).stdout
    print(out, end="", flush=True)


def main():
    base = {k: v for k, v in os.environ.items() if k != "CXX"}
    with tempfile.TemporaryDirectory() as empty:
        run(SLIM, dict(base, PATH=empty))
    run(NORMAL, base)


if __name__ == "__main__":
    main()
