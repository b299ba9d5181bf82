"""Reproduce the MoE aux-loss scale reading 'loss' on a pipeline stage that never set it.

megatron-core 0.5.0 (tag core_v0.5.0 of NVIDIA/Megatron-LM) ends
megatron/core/pipeline_parallel/schedules.py:forward_step with a block that runs
whenever config.num_moe_experts is set: it scales a one-element tensor with
config.grad_scale_func and puts it on `loss.device`. `loss` is only assigned inside
the `parallel_state.is_pipeline_last_stage()` branch (and only when
collect_non_loss_data is False), so on every other pipeline stage the read fails.
core_v0.6.0 takes the device from `output_tensor` instead.

The script runs on a CPU, with no process group:

1. If megatron.core is importable, it calls the installed forward_step with
   is_pipeline_last_stage patched to False (stage 0 of a two-stage pipeline), a tiny
   Linear as the model and a config with num_moe_experts=4 and a grad_scale_func, the
   way megatron/training.py sets config.grad_scale_func = optimizer.scale_loss.
   With the megatron_core 0.5.0 wheel on PYTHONPATH (Python 3.11.7, torch 2.13.0+cpu)
   it printed
     UnboundLocalError: cannot access local variable 'loss' where it is not associated with a value
   from schedules.py line 216; with the 0.6.0 wheel the same call returns normally.
2. Otherwise (the recorded run: megatron is not installed) it runs a stand-in with
   the same control flow, written here, not copied: the stage-dependent assignment,
   then the unconditional device lookup. Python prints the same UnboundLocalError
   (3.11 and later wording; 3.10 and older say "local variable 'loss' referenced
   before assignment").
3. The same stand-in on the last stage, and with the device taken from the stage's
   output, both succeed.

The script exits 0.
"""
import traceback
import types

import torch


def stand_in_forward_step(model, batch, is_last_stage, config, num_microbatches=4, device_from_output=False):
    """The shape of forward_step in megatron-core 0.5.0, reduced to what matters here."""
    output_tensor = model(batch)
    if is_last_stage:
        loss = output_tensor.float().pow(2).mean()
        output_tensor = loss / num_microbatches
    if config.num_moe_experts is not None:
        if config.grad_scale_func is None:
            scale = torch.tensor(1.0)
        else:
            # core_v0.5.0 takes the device from `loss`, which exists only on the last
            # stage; core_v0.6.0 takes it from `output_tensor`, which every stage has.
            where = output_tensor.device if device_from_output else loss.device
            scale = config.grad_scale_func(torch.ones((), device=where))
        config.aux_loss_scale = scale / num_microbatches
    return output_tensor


def run(name, fn):
    print(f"--- {name}", flush=True)
    try:
        fn()
        print("ok: forward_step returned", flush=True)
    except UnboundLocalError:
        traceback.print_exc()


def real_megatron_case():
    try:
        from megatron.core import parallel_state
        from megatron.core.pipeline_parallel import schedules
    except ImportError as err:
        print(f"megatron.core not importable ({err}); using the stand-in only", flush=True)
        return
    parallel_state.is_pipeline_last_stage = lambda *a, **k: False
    parallel_state.is_pipeline_stage_after_split = lambda *a, **k: False
    model = torch.nn.Linear(8, 8)
    model.set_input_tensor = lambda tensors: None
    model.model_type = None
    config = types.SimpleNamespace(timers=None, enable_autocast=False, num_moe_experts=4,
                                   grad_scale_func=lambda t: t * 4096.0)

    def step(data_iterator, m):
        return m(torch.randn(2, 8)), None

    run("installed megatron.core forward_step, stage 0 of 2",
        lambda: schedules.forward_step(step, None, model, 4, None, [], config))


def main():
    torch.manual_seed(0)
    print(f"torch {torch.__version__}", flush=True)
    real_megatron_case()
    model = torch.nn.Linear(8, 8)
    batch = torch.randn(2, 8)
    moe = types.SimpleNamespace(num_moe_experts=4, grad_scale_func=lambda t: t * 4096.0)
    run("stand-in, MoE, first stage of two (core_v0.5.0 behaviour)",
        lambda: stand_in_forward_step(model, batch, False, moe))
    run("stand-in, MoE, last stage",
        lambda: stand_in_forward_step(model, batch, True, moe))
    run("stand-in, MoE, first stage, device from output_tensor (core_v0.6.0 behaviour)",
        lambda: stand_in_forward_step(model, batch, False, moe, device_from_output=True))


if __name__ == "__main__":
    main()
