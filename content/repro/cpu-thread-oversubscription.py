"""Show how many intra-op threads each rank gets with and without torchrun.

Two copies of the same small CPU workload (a loop of matrix multiplications)
run side by side, first under torchrun, then as two plain processes started
the way a home-made launcher (or mpirun/srun without thread settings) would.

Under torchrun with --nproc-per-node > 1 and no OMP_NUM_THREADS in the
environment, torchrun sets OMP_NUM_THREADS=1 for every worker and logs:

    Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed.

Started without torchrun, each process sizes its thread pool to the whole
machine, so N processes run N x cores threads on `cores` CPUs
(oversubscription). The script prints both layouts and their timings.
"""
import os
import subprocess
import sys
import tempfile

CHILD = r'''
import os, time, torch
rank = os.environ.get("LOCAL_RANK", os.environ.get("FAKE_RANK", "?"))
x = torch.randn(512, 512)
t0 = time.time()
for _ in range(20):
    x @ x
print(f"rank {rank}: OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')} "
      f"torch.get_num_threads()={torch.get_num_threads()} "
      f"20 matmuls in {time.time() - t0:.2f}s", flush=True)
'''


def main():
    nproc = 2
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    print(f"== {os.cpu_count()} CPUs visible, {nproc} processes", flush=True)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(CHILD)
        child = f.name
    try:
        print("== 1. torchrun --nproc-per-node=2, OMP_NUM_THREADS unset", flush=True)
        subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                        f"--nproc-per-node={nproc}", child],
                       env=env, stderr=subprocess.STDOUT, check=False)
        print("== 2. two plain processes, no launcher, OMP_NUM_THREADS unset", flush=True)
        procs = [subprocess.Popen([sys.executable, child], env={**env, "FAKE_RANK": str(r)})
                 for r in range(nproc)]
        for p in procs:
            p.wait()
    finally:
        os.unlink(child)


if __name__ == "__main__":
    main()
