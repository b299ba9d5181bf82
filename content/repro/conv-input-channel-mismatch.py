"""Reproduce a convolution whose input has another channel count than its weight expects.

Every convolution checks, before any kernel runs, that dimension 1 of its
(batched) input equals in_channels of the layer, i.e. weight.size(1) * groups
(for a transposed convolution: weight.size(0)). When it does not, PyTorch
raises, in the same words on every backend:

    RuntimeError: Given groups=G, weight of size [...], expected input[...] to have C channels, but got C' channels instead
    RuntimeError: Given transposed=1, weight of size [...], expected input[...] to have C channels, but got C' channels instead

Cases, CPU only, in the order they show up in training code:
1. Data: grayscale and RGBA images into an RGB stem; channels-last (NHWC)
   arrays that were never permuted; a grayscale batch without its channel dim
   (read as one unbatched sample); Conv1d on (batch, time, features).
2. Architecture: a layer whose in_channels no longer matches the previous
   layer's out_channels; a U-Net decoder after a skip concatenation; groups;
   a transposed convolution; a 3-D convolution.
3. A model built for another input variant (a 4-channel stem, a model that
   expects concatenated conditioning channels).
4. What is NOT this failure: the channels_last memory format, a missing batch
   dimension (rank message), mixed grayscale/RGB samples stopping in the
   DataLoader's collate before any convolution runs, and a checkpoint of
   another variant stopping in load_state_dict.
5. torch.compile sees the same check while tracing (with dynamic=True the
   input shape in the message has symbolic sizes such as s0).
6. Confirm: forward pre-hooks name the convolution and compare dim 1 with
   in_channels before the kernel runs.
7. Fixes, all of which run.
"""
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

torch.manual_seed(0)


def run(title, fn):
    print(f"== {title}", flush=True)
    try:
        out = fn()
        print(f"OK: output shape {tuple(out.shape)}", flush=True)
    except Exception as exc:  # print the exception line as PyTorch raises it
        text = "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
        if "torch._dynamo" in type(exc).__module__:  # keep the line that quotes the eager error
            text = "\n".join(line for line in text.splitlines() if "Error" in line)
        print(text, flush=True)


def stem():
    """An RGB stem like a torchvision/timm backbone's first layer."""
    return nn.Conv2d(3, 16, kernel_size=3, padding=1)


def check_conv_inputs(model):
    """Forward pre-hooks: print each convolution's input channels next to what it expects."""
    def make(name):
        def hook(module, args):
            x = args[0]
            batched = x.dim() == len(module.kernel_size) + 2
            got = x.shape[1] if batched else x.shape[0]
            want = module.weight.shape[0] if module.transposed else module.in_channels
            status = "OK" if got == want else "MISMATCH"
            print(f"check {name}: input {tuple(x.shape)} channels={got} vs in_channels={want}: {status}", flush=True)
        return hook
    convs = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    return [m.register_forward_pre_hook(make(n)) for n, m in model.named_modules() if isinstance(m, convs)]


class TinyUNet(nn.Module):
    """One down step and one up step; the decoder conv must take skip + upsampled channels."""

    def __init__(self, dec_in):
        super().__init__()
        self.enc = nn.Conv2d(3, 16, 3, padding=1)
        self.down = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.dec = nn.Conv2d(dec_in, 16, 3, padding=1)

    def forward(self, x):
        e = self.enc(x)
        u = self.up(self.down(e))
        return self.dec(torch.cat([e, u], dim=1))  # 16 + 16 = 32 channels


def main():
    rgb = torch.randn(8, 3, 32, 32)
    gray = torch.randn(8, 1, 32, 32)
    rgba = torch.randn(8, 4, 32, 32)
    nhwc = torch.randn(8, 32, 32, 3)       # numpy/PIL layout stacked without a permute
    gray_no_c = torch.randn(16, 28, 28)    # a batch of 16 grayscale images, channel dim missing
    mel = torch.randn(4, 100, 80)          # (batch, time, n_mels) from a feature extractor

    s = stem()
    run("0. RGB stem on RGB images", lambda: s(rgb))
    run("1a. RGB stem on a grayscale batch", lambda: s(gray))
    run("1b. RGB stem on RGBA images (PNG alpha channel kept)", lambda: s(rgba))
    run("1c. RGB stem on channels-last (N, H, W, C) data", lambda: s(nhwc))
    run("1d. Conv2d(1, 16) on a grayscale batch without its channel dim (read as unbatched)",
        lambda: nn.Conv2d(1, 16, 3)(gray_no_c))
    run("1e. Conv1d(80, 256) on (batch, time, n_mels)", lambda: nn.Conv1d(80, 256, 3)(mel))

    stale = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 64, 3, padding=1))
    run("2a. second conv still says in_channels=32 after the first was narrowed to 16", lambda: stale(rgb))
    run("2b. U-Net decoder conv sized for the upsampled path only (16) instead of skip + up (32)",
        lambda: TinyUNet(dec_in=16)(rgb))
    run("2c. groups=2 conv built for 4 input channels, given 3", lambda: nn.Conv2d(4, 8, 3, groups=2)(rgb))
    run("2d. ConvTranspose2d(16, 8) given 3 channels", lambda: nn.ConvTranspose2d(16, 8, 3)(rgb))
    run("2e. Conv3d(3, 8) on a (batch, frames, C, H, W) video clip",
        lambda: nn.Conv3d(3, 8, 3)(torch.randn(2, 8, 3, 16, 16)))

    four = nn.Conv2d(4, 16, 3, padding=1)  # a stem built from a 4-channel (RGB + depth/NIR) variant's config
    run("3a. stem of a 4-channel model variant given RGB images", lambda: four(rgb))
    cond = nn.Conv2d(8, 32, 3, padding=1)  # expects latent (4) + concatenated conditioning latent (4)
    run("3b. model that expects concatenated conditioning (8) given the plain latent (4)",
        lambda: cond(torch.randn(2, 4, 16, 16)))

    run("4a. not this failure: RGB tensor in channels_last memory format",
        lambda: s(rgb.contiguous(memory_format=torch.channels_last)))
    run("4b. not this failure: a 2-D image without batch and channel dims", lambda: s(torch.randn(32, 32)))
    mixed = [torch.randn(3, 8, 8), torch.randn(1, 8, 8)]
    run("4c. not this failure: grayscale and RGB samples in one batch stop in collate",
        lambda: next(iter(DataLoader(mixed, batch_size=2))))

    four_ckpt = nn.Conv2d(4, 16, 3, padding=1).state_dict()  # checkpoint of a 4-channel variant
    run("4d. not this failure: that checkpoint loaded into an RGB stem stops in load_state_dict",
        lambda: stem().load_state_dict(four_ckpt))
    compiled = torch.compile(nn.Sequential(stem(), nn.ReLU()), backend="eager")
    run("5. torch.compile(backend='eager') on a grayscale batch", lambda: compiled(gray))
    dyn = torch.compile(nn.Sequential(stem(), nn.ReLU()), backend="eager", dynamic=True)
    run("5b. the same with dynamic=True: the input shape is printed with symbolic sizes", lambda: dyn(gray))

    handles = check_conv_inputs(stale)
    run("6. confirm: forward pre-hooks on every conv", lambda: stale(rgb))
    for h in handles:
        h.remove()

    run("7a. fix: grayscale repeated to 3 channels", lambda: s(gray.expand(-1, 3, -1, -1)))
    run("7b. fix: RGBA alpha dropped", lambda: s(rgba[:, :3]))
    run("7c. fix: NHWC permuted to NCHW", lambda: s(nhwc.permute(0, 3, 1, 2)))
    run("7d. fix: channel dim added to the grayscale batch", lambda: nn.Conv2d(1, 16, 3)(gray_no_c.unsqueeze(1)))
    run("7e. fix: (batch, time, n_mels) transposed for Conv1d", lambda: nn.Conv1d(80, 256, 3)(mel.transpose(1, 2)))

    one = nn.Conv2d(1, 16, 3, padding=1)
    with torch.no_grad():  # keep a pretrained RGB stem for 1-channel input: sum its weights over the channel dim
        one.weight.copy_(s.weight.sum(dim=1, keepdim=True))
        one.bias.copy_(s.bias)
    print(f"    1-channel stem from the RGB stem: max difference on gray replicated to RGB = "
          f"{(one(gray) - s(gray.expand(-1, 3, -1, -1))).abs().max().item():.2e}", flush=True)
    run("7f. fix: stem adapted to 1 channel from pretrained RGB weights", lambda: one(gray))

    fixed = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.LazyConv2d(64, 3, padding=1))
    run("7g. fix: LazyConv2d takes in_channels from its first input", lambda: fixed(rgb))
    print(f"    after the first forward: {fixed[2]}", flush=True)
    run("7h. fix: U-Net decoder sized for skip + up channels", lambda: TinyUNet(dec_in=32)(rgb))


if __name__ == "__main__":
    main()
