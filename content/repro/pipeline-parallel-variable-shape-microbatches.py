"""DeepSpeed pipeline engine fed micro-batches whose sequence length changes.

Needs DeepSpeed next to PyTorch (checked with DeepSpeed 0.19.4 and torch 2.13.0); runs two
processes (two pipeline stages) on the CPU accelerator with gloo, each case in well under a minute.

The engine sends the tensor metadata (dtype, shape) of the activations only once and keeps the
receive buffers it allocated from it, unless PipelineModule(dynamic_shape=True) is given (0.15.0+).

Cases (stage 0 = Linear, stage 1 = Linear [+ mean over the sequence], MSELoss; 2 micro-batches
per train_batch, batch size 2, hidden size 8):
1. static  4 -> 6: the second batch is longer; stage 1 receives 2x6x8 floats into its 2x4x8 buffer
   and gloo aborts the process: "op.preamble.length <= op.nbytes. 384 vs 256. Received data size
   doesn't match expected size. ..." (SIGABRT).
2. static  6 -> 4, token-level loss: stage 1 receives into its old 2x6x8 buffer, so its output keeps
   length 6 while the labels have length 4: "The size of tensor a (6) must match the size of tensor
   b (4) at non-singleton dimension 1" inside the loss. With a token-level cross-entropy (logits and
   labels flattened over batch and sequence) the same mismatch reads "Expected input batch_size (12)
   to match target batch_size (8)." (case 2b).
3. static  6 -> 4, pooled loss: the loss on stage 1 is computed (on a buffer that mixes new and stale
   values), and stage 0's backward fails with "Mismatch in shape: grad_output[0] has a shape of
   torch.Size([2, 6, 8]) and output[0] has a shape of torch.Size([2, 4, 8])."
4. static, the two micro-batches of one batch differ (4 and 6): as case 1, within the first step.
5. the same runs with PipelineModule(dynamic_shape=True): every step trains.
6. static, engine.reset_activation_shape() before a batch whose length changed: trains.
"""
import os
import sys
import tempfile
import traceback
import warnings

os.environ.setdefault("DS_ACCELERATOR", "cpu")
os.environ.setdefault("TORCH_EXTENSIONS_DIR", os.path.join(tempfile.gettempdir(), "ds-ext-pp-variable-shape"))
warnings.simplefilter("ignore")
import torch  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import deepspeed  # noqa: E402
from deepspeed.pipe import PipelineModule  # noqa: E402

H = 8


class MeanOverSequence(torch.nn.Module):
    def forward(self, x):
        return x.mean(dim=1)


def token_cross_entropy(logits, labels):
    # language-model style: one class per token, batch and sequence flattened together
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1))


def worker(rank, port, lengths, pooled, dynamic, reset, tokens=False):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2",
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    deepspeed.init_distributed(dist_backend="gloo")
    torch.manual_seed(0)
    layers = [torch.nn.Linear(H, H), torch.nn.Linear(H, H)] + ([MeanOverSequence()] if pooled else [])
    extra = {"dynamic_shape": True} if dynamic else {}
    loss_fn = token_cross_entropy if tokens else torch.nn.MSELoss()
    net = PipelineModule(layers=layers, num_stages=2, loss_fn=loss_fn, **extra)
    config = {"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2, "steps_per_print": 1000,
              "optimizer": {"type": "Adam", "params": {"lr": 1e-3, "torch_adam": True}}}
    engine, *_ = deepspeed.initialize(model=net, model_parameters=net.parameters(), config=config)

    def batches():
        for length in lengths:
            if tokens:
                yield torch.randn(2, length, H), torch.randint(0, H, (2, length))
            else:
                yield torch.randn(2, length, H), (torch.randn(2, H) if pooled else torch.randn(2, length, H))

    data = batches()
    try:
        for step in range(len(lengths) // 2):
            if reset and step > 0 and lengths[2 * step] != lengths[2 * step - 1]:
                engine.reset_activation_shape()
            loss = engine.train_batch(data)
            print(f"rank {rank} step {step} (lengths {lengths[2 * step]},{lengths[2 * step + 1]}): "
                  f"loss {loss.item():.4f}", flush=True)
    except Exception:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)


def case(title, port, lengths, pooled=False, dynamic=False, reset=False, tokens=False):
    print(f"--- {title}", flush=True)
    try:
        # fork: the children inherit the imported torch and deepspeed, which keeps each case short
        mp.start_processes(worker, args=(port, lengths, pooled, dynamic, reset, tokens), nprocs=2, join=True,
                           start_method="fork")
        print("--- finished: every step trained", flush=True)
    except Exception as err:  # ProcessExitedException: a stage raised or was aborted
        print(f"--- failed: {type(err).__name__}: {err}", flush=True)
    sys.stdout.flush()
    sys.stderr.flush()


if __name__ == "__main__":
    print(f"torch {torch.__version__}, deepspeed {deepspeed.__version__}", flush=True)
    case("1. static shapes, batch lengths 4 then 6", 29741, [4, 4, 6, 6])
    case("2. static shapes, batch lengths 6 then 4, token-level loss", 29742, [6, 6, 4, 4])
    case("2b. static shapes, batch lengths 6 then 4, token-level cross-entropy", 29749, [6, 6, 4, 4], tokens=True)
    case("3. static shapes, batch lengths 6 then 4, pooled loss", 29743, [6, 6, 4, 4], pooled=True)
    case("4. static shapes, micro-batch lengths 4 and 6 in one batch", 29744, [4, 6])
    case("5a. dynamic_shape=True, batch lengths 4 then 6", 29745, [4, 4, 6, 6], dynamic=True)
    case("5b. dynamic_shape=True, batch lengths 6 then 4, pooled loss", 29746, [6, 6, 4, 4], pooled=True,
         dynamic=True)
    case("5c. dynamic_shape=True, micro-batch lengths 4 and 6 in one batch", 29747, [4, 6], dynamic=True)
    case("6. static shapes, reset_activation_shape() when the length changes", 29748, [4, 4, 6, 6, 4, 4],
         pooled=True, reset=True)
