"""Reproduce a trainer refusing an accumulation-step count the world size does not divide.

nanoGPT's train.py takes `gradient_accumulation_steps` as the total for the
whole job (40 by default) and, under torchrun, divides it among the DDP
processes after checking, with a bare assert, that the division is exact.
modded-nanogpt's train_gpt.py fixes the total at 8 and checks the world size
with an assert that has a message. The worker below performs the same two
checks, written the same way as those two scripts and at the same point:
nanoGPT's after the gloo process group is up (nanoGPT calls
init_process_group before its assert, so its traceback lines carry the
`[rankN]: ` prefix that init_process_group's exception hook adds), and
modded-nanogpt's before it (train_gpt.py asserts before init_process_group,
so its lines have no prefix). The tracebacks and torchrun's summary are what
a GPU user sees, on the CPU.

Needs only torch (checked with 2.13.0+cpu). Cases, each a torchrun launch of
this file with 3 processes:

1. nanoGPT form: 40 accumulation steps on 3 processes -> bare AssertionError
   under the source line `assert gradient_accumulation_steps % ddp_world_size == 0`
2. modded-nanogpt form: 8 micro steps on 3 processes ->
   `AssertionError: world_size must be a divisor of 8`
3. the fix: `--gradient_accumulation_steps=48` style total (a multiple of 3)
   -> each process runs 16 micro steps, 48 per optimizer step
"""
import os
import subprocess
import sys

import torch
import torch.distributed as dist


def nanogpt_style(total_steps):
    # the two lines nanoGPT runs after init_process_group (train.py, 7339b90 and later)
    gradient_accumulation_steps = total_steps
    ddp_world_size = int(os.environ["WORLD_SIZE"])
    assert gradient_accumulation_steps % ddp_world_size == 0
    gradient_accumulation_steps //= ddp_world_size
    return gradient_accumulation_steps


def modded_nanogpt_style():
    world_size = int(os.environ["WORLD_SIZE"])
    assert 8 % world_size == 0, "world_size must be a divisor of 8"
    return 8 // world_size


def worker(case):
    if case == "modded":
        # modded-nanogpt checks the world size before it creates the process group
        modded_nanogpt_style()
    dist.init_process_group("gloo")
    try:
        if case == "nanogpt":
            nanogpt_style(40)
        else:
            per_rank = nanogpt_style(48)
            total = torch.tensor([per_rank])
            dist.all_reduce(total)
            if dist.get_rank() == 0:
                print(f"ok: {per_rank} micro steps per process, {int(total)} per optimizer step "
                      f"on {dist.get_world_size()} processes", flush=True)
    finally:
        dist.destroy_process_group()


def launch(case):
    print(f"=== torchrun --nproc-per-node 3 ({case})", flush=True)
    rc = subprocess.call([sys.executable, "-m", "torch.distributed.run", "--standalone",
                          "--nproc-per-node", "3", os.path.abspath(__file__), case],
                         env={**os.environ, "OMP_NUM_THREADS": "1"}, stderr=subprocess.STDOUT)
    print(f"=== exit code {rc}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        worker(sys.argv[1])
    else:
        print("torch", torch.__version__, flush=True)
        for case in ("nanogpt", "modded", "fixed"):
            launch(case)
