"""Reproduce an EMA (exponential moving average) weight update failing on a dtype mismatch, on CPU.

lerp_ is the usual way to write an EMA step (ema.lerp_(live, 1 - decay)), and it
refuses an `end` (the live weight) or a tensor `weight` whose dtype differs from
the EMA tensor it updates; it does not promote:

1. an fp32 EMA copy of a model that is then cast to bf16 (what DeepSpeed's bf16
   mode does to the module it wraps):
       RuntimeError: expected dtype float for `end` but got dtype c10::BFloat16
2. the same with the multi-tensor update of torch.optim.swa_utils.AveragedModel
   and get_ema_multi_avg_fn (torch._foreach_lerp_), the form timm's ModelEmaV3
   also uses: same message
3. an EMA kept in fp16 to save memory, fed fp32 master weights:
       RuntimeError: expected dtype c10::Half for `end` but got dtype float
4. a decay held in a float32 tensor of shape (1,) applied to a bf16 EMA:
       RuntimeError: expected dtype c10::BFloat16 for `weight` but got dtype float
   (a 0-dim weight tensor is accepted by this release)
5. the update of case 1 under torch.compile: the fake-tensor check words it
       expected dtype torch.float32 for `end`, but got dtype torch.bfloat16
6. a state_dict EMA that also touches the integer BatchNorm counter
   num_batches_tracked: lerp_ has no integer kernel, and mul_ cannot write a
   float result into it (result type Float can't be cast ... Long)
7. the mul_/add_ form with mixed float dtypes runs (it promotes), but an EMA
   stored in bf16 stops moving: the update is below bf16's resolution.

The fixed updates cast the live tensor to the EMA's dtype and skip integer
buffers; they run, and the fp32 EMA follows the bf16 model.
"""
import copy
import traceback

import torch
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

DECAY = 0.999


def attempt(label, fn):
    print(f"== {label}", flush=True)
    try:
        out = fn()
        print(f"ok{'' if out is None else ': ' + str(out)}", flush=True)
    except Exception as e:  # print the last traceback line as Python would
        print("".join(traceback.format_exception_only(type(e), e)).rstrip(), flush=True)


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.BatchNorm1d(16), torch.nn.Linear(16, 4))


@torch.no_grad()
def ema_lerp(ema, model, decay=DECAY):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.lerp_(p, 1 - decay)


def main():
    print("torch", torch.__version__, flush=True)

    # 1. fp32 EMA copy, then the live model is cast to bf16 (as DeepSpeed bf16 does).
    model = make_model()
    ema = copy.deepcopy(model)
    model.bfloat16()
    attempt("1 fp32 EMA, bf16 live model, per-tensor lerp_", lambda: ema_lerp(ema, model))

    # 2. torch.optim.swa_utils: AveragedModel with the EMA multi-tensor update.
    model = make_model()
    averaged = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(DECAY), use_buffers=True)
    model.bfloat16()
    averaged.update_parameters(model)          # the first call only copies
    attempt("2 AveragedModel + get_ema_multi_avg_fn, bf16 live model (_foreach_lerp_)",
            lambda: averaged.update_parameters(model))

    # 3. fp16 EMA to save memory, fp32 master weights.
    model = make_model()
    ema = copy.deepcopy(model).half()
    attempt("3 fp16 EMA, fp32 live model", lambda: ema_lerp(ema, model))

    # 4. A tensor-valued interpolation weight of another dtype.
    model = make_model().bfloat16()
    ema = copy.deepcopy(model)
    one_minus_decay = torch.tensor([1 - DECAY])              # float32, shape (1,)

    @torch.no_grad()
    def tensor_weight_update():
        for e, p in zip(ema.parameters(), model.parameters()):
            e.lerp_(p, one_minus_decay)
    attempt("4 bf16 EMA, float32 tensor weight", tensor_weight_update)
    one_minus_decay = torch.tensor(1 - DECAY)                # float32, 0-dim
    attempt("4b the same with a 0-dim float32 weight", tensor_weight_update)

    # 5. The update of case 1 compiled: the fake-tensor (meta) check has its own wording.
    model = make_model()
    ema = copy.deepcopy(model)
    model.bfloat16()
    e_params = [e.detach() for e in ema.parameters()]       # EMA code runs without autograd
    m_params = [p.detach() for p in model.parameters()]

    @torch.compile(backend="eager")
    def compiled_update(es, ms):
        for e, p in zip(es, ms):
            e.lerp_(p, 1 - DECAY)
    attempt("5 the same update under torch.compile", lambda: compiled_update(e_params, m_params))

    # 6. A state_dict EMA that includes the integer BatchNorm counter.
    model = make_model()
    ema = copy.deepcopy(model)
    model(torch.randn(8, 16))                                # num_batches_tracked becomes 1

    @torch.no_grad()
    def state_dict_lerp():
        msd = model.state_dict()
        for k, v in ema.state_dict().items():
            v.lerp_(msd[k], 1 - DECAY)

    @torch.no_grad()
    def state_dict_mul_add():
        msd = model.state_dict()
        for k, v in ema.state_dict().items():
            v.mul_(DECAY).add_(msd[k], alpha=1 - DECAY)
    attempt("6a state_dict EMA with lerp_, reaches num_batches_tracked (int64)", state_dict_lerp)
    attempt("6b state_dict EMA with mul_/add_, reaches num_batches_tracked (int64)", state_dict_mul_add)

    # 7. mul_/add_ promotes, so mixed float dtypes pass; a bf16 EMA then does not move.
    model = make_model()
    ema = copy.deepcopy(model).bfloat16()
    before = [e.clone() for e in ema.parameters()]
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1e-3)                                     # a typical small training change
        for e, p in zip(ema.parameters(), model.parameters()):
            e.mul_(DECAY).add_(p, alpha=1 - DECAY)           # fp32 into bf16: allowed, rounds
    moved = sum(int((e != b).sum()) for e, b in zip(ema.parameters(), before))
    total = sum(e.numel() for e in ema.parameters())
    print(f"== 7 bf16 EMA updated with mul_/add_ from an fp32 model: {moved} of {total} values changed", flush=True)

    # Fixes: keep the EMA in fp32, cast the live tensor to the EMA's dtype, skip integer buffers.
    model = make_model()
    ema = copy.deepcopy(model)
    model.bfloat16()

    @torch.no_grad()
    def fixed_update():
        msd = model.state_dict()
        for k, v in ema.state_dict().items():
            src = msd[k].to(device=v.device, dtype=v.dtype)
            if v.is_floating_point():
                v.lerp_(src, 1 - DECAY)
            else:
                v.copy_(src)
        return {str(v.dtype) for v in ema.state_dict().values()}
    attempt("fix 1: cast the live tensor to the EMA dtype, copy integer buffers", fixed_update)

    model = make_model()
    averaged = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(DECAY), use_buffers=True)
    model.bfloat16()
    averaged.update_parameters(model)

    @torch.no_grad()
    def fixed_foreach():
        es = [e for e in averaged.module.parameters()]
        ms = [p.to(e.dtype) for e, p in zip(es, model.parameters())]
        torch._foreach_lerp_(es, ms, 1 - DECAY)
        return f"EMA dtype {es[0].dtype}, live dtype {next(model.parameters()).dtype}"
    attempt("fix 2: foreach update with the live tensors cast first", fixed_foreach)


if __name__ == "__main__":
    main()
