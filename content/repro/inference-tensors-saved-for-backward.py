"""Reproduce autograd's refusal of tensors created under torch.inference_mode().

Every tensor created inside `torch.inference_mode()` is marked as an inference
tensor: it has no version counter and no autograd metadata. Outside the
block it can still be read, but autograd will not save it for a backward
formula, and nothing may write to it in place:

    RuntimeError: Inference tensors cannot be saved for backward. ...
    RuntimeError: Inplace update to inference tensor outside InferenceMode is
    not allowed. ...

Cases, CPU only, one process:
1. An RL-style rollout: token ids are sampled under inference_mode, then fed
   to the policy's embedding in the training step (the embedding saves its
   indices for backward).
2. Features cached under inference_mode are fed to a trainable Linear layer
   (the matrix multiply saves its input to compute the weight gradient).
3. A one-layer model built under inference_mode: its parameters are inference
   tensors; forward and backward run (only the bias gets a .grad), and the
   first optimizer step fails on the in-place update. (A deeper model fails
   earlier, in the forward, because a layer with a grad-requiring input saves
   its weight.)
4. requires_grad_() on an inference tensor outside the block.
5. The fixes: the same rollout under torch.no_grad(), and a .clone() of the
   inference tensor made outside inference_mode, both train normally;
   is_inference() tells the tensors apart.
"""
import traceback

import torch
import torch.nn as nn

torch.manual_seed(0)


def report(title, fn):
    print(f"--- {title}", flush=True)
    try:
        fn()
        print("no error", flush=True)
    except RuntimeError as e:
        print("".join(traceback.format_exception_only(type(e), e)).strip(), flush=True)


policy = nn.Sequential(nn.Embedding(32, 8), nn.Flatten(), nn.Linear(8 * 6, 32))


def rollout(ctx):
    with ctx():
        ids = torch.randint(0, 32, (4, 6))
        logits = policy(ids)
        actions = torch.distributions.Categorical(logits=logits).sample()
    return ids, actions


def train_on(ids, actions):
    logp = torch.log_softmax(policy(ids), dim=-1)
    loss = -logp.gather(1, actions[:, None]).mean()
    loss.backward()


def rl_rollout_inference_mode():
    ids, actions = rollout(torch.inference_mode)
    print(f"ids.is_inference()={ids.is_inference()}", flush=True)
    train_on(ids, actions)


def cached_features():
    encoder = nn.Linear(16, 8)
    head = nn.Linear(8, 2)
    with torch.inference_mode():
        feats = encoder(torch.randn(5, 16))   # frozen encoder, features cached
    head(feats).sum().backward()              # head's matmul saves feats


def model_built_in_inference_mode():
    with torch.inference_mode():
        model = nn.Linear(4, 2)               # parameters are inference tensors
    print(f"weight.is_inference()={model.weight.is_inference()}", flush=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randn(3, 4)).sum().backward()  # input needs no grad, weight not saved: works
    print(f"weight.grad is None: {model.weight.grad is None}, "
          f"bias.grad is None: {model.bias.grad is None}", flush=True)
    opt.step()                                  # in-place update of the weights


def requires_grad_on_inference_tensor():
    with torch.inference_mode():
        t = torch.zeros(3)
    t.requires_grad_()


def fixed_no_grad():
    ids, actions = rollout(torch.no_grad)
    print(f"ids.is_inference()={ids.is_inference()}", flush=True)
    train_on(ids, actions)


def fixed_clone():
    ids, actions = rollout(torch.inference_mode)
    ids, actions = ids.clone(), actions.clone()   # clone outside inference_mode
    print(f"ids.is_inference()={ids.is_inference()}", flush=True)
    train_on(ids, actions)


if __name__ == "__main__":
    report("rollout under inference_mode, then a training step", rl_rollout_inference_mode)
    report("features cached under inference_mode feed a trainable layer", cached_features)
    report("model built under inference_mode, optimizer step", model_built_in_inference_mode)
    report("requires_grad_() on an inference tensor", requires_grad_on_inference_tensor)
    report("fix: rollout under torch.no_grad()", fixed_no_grad)
    report("fix: clone outside inference_mode", fixed_clone)
