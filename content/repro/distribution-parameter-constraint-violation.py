"""Reproduce a NaN policy output rejected by torch.distributions validation.

A small Gaussian policy is updated with a policy-gradient loss whose
advantages are normalised per batch, (A - mean) / std. The last rollout
batch holds a single transition, so std() of one value is NaN, the loss is
NaN, Adam writes NaN into every weight, and the next rollout's
Normal(mean, std) refuses the parameters (validation is on by default):

    ValueError: Expected parameter loc (Tensor of shape (64, 2)) of distribution
    Normal(loc: torch.Size([64, 2]), scale: torch.Size([64, 2])) to satisfy the
    constraint Real(), but found invalid values:

It first shows two related checks: a standard deviation that has collapsed
to exactly 0, and NaN logits given to a discrete (Categorical) policy.
"""
import warnings

import torch
from torch.distributions import Normal

warnings.filterwarnings("ignore", message=".*degrees of freedom.*")


class Policy(torch.nn.Module):
    def __init__(self, obs_dim=4, act_dim=2):
        super().__init__()
        self.mu = torch.nn.Sequential(torch.nn.Linear(obs_dim, 32), torch.nn.Tanh(), torch.nn.Linear(32, act_dim))
        self.log_std = torch.nn.Parameter(torch.zeros(act_dim))

    def dist(self, obs):
        return Normal(self.mu(obs), self.log_std.exp().expand(obs.shape[0], -1))


def main():
    torch.manual_seed(0)
    pi = Policy()
    opt = torch.optim.Adam(pi.parameters(), lr=3e-4)

    try:
        Normal(torch.zeros(1, 2), torch.zeros(1, 2))      # std collapsed to 0
    except ValueError as e:
        print("scale check:", str(e).splitlines()[0], flush=True)
    try:
        torch.distributions.Categorical(logits=torch.tensor([[0.5, float("nan"), -1.0]]))
    except ValueError as e:
        print("discrete policy:", str(e).splitlines()[0], flush=True)

    for it, batch in enumerate([64, 64, 1, 64]):           # iteration 2 collects one step only
        obs = torch.randn(batch, 4)
        d = pi.dist(obs)                                   # raises once the weights are NaN
        act = d.sample()
        adv = torch.randn(batch)
        adv = (adv - adv.mean()) / adv.std()               # std of one value is NaN
        loss = -(d.log_prob(act).sum(-1) * adv).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"iter {it}: batch {batch} loss {loss.item():.4f} "
              f"finite weights {all(torch.isfinite(p).all().item() for p in pi.parameters())}", flush=True)


if __name__ == "__main__":
    main()
