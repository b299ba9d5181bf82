"""ds_to_universal on ZeRO checkpoints written with SGD(momentum): state key 'momentum_buffer', not 'exp_avg'.

Needs DeepSpeed (checked with 0.19.5 and 0.19.4) next to PyTorch; runs on CPU, one process, gloo.
"""
import os
import sys
import tempfile
import traceback

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="29531")
import torch
import deepspeed
from deepspeed.checkpoint import ds_to_universal

deepspeed.init_distributed(dist_backend="gloo")

for stage in (2, 3):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)  # keeps 'momentum_buffer' per tensor
    config = {"train_batch_size": 4, "zero_optimization": {"stage": stage}, "zero_allow_untested_optimizer": True}
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=config)
    for _ in range(2):
        loss = engine(torch.randn(4, 16)).pow(2).mean()
        engine.backward(loss)
        engine.step()
    work = tempfile.mkdtemp()
    engine.save_checkpoint(work, tag="global_step2")
    print(f"--- ZeRO stage {stage}: saved optimizer state keys:",
          sorted(engine.optimizer.optimizer.state[next(iter(engine.optimizer.optimizer.state))].keys()))
    sys.argv = ["ds_to_universal.py", "--input_folder", os.path.join(work, "global_step2"),
                "--output_folder", os.path.join(work, "universal"), "--num_extract_workers", "1",
                "--num_merge_workers", "1", "--inject_missing_state"]
    try:
        ds_to_universal.main(ds_to_universal.parse_arguments())
        print("conversion finished")
    except KeyError:
        traceback.print_exc()
        sys.stderr.flush()
