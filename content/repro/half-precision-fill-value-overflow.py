"""Reproduce "value cannot be converted to type ... without overflow".

Attention code written for fp32 masks padded positions by writing a large
negative constant into the score tensor. Once the model runs in float16
(model.half(), or scores computed under autocast) the constant no longer
fits: float16 holds at most 65504 in magnitude, and masked_fill / fill_ /
index assignment refuse the Python scalar instead of rounding it to -inf:

    RuntimeError: value cannot be converted to type c10::Half without overflow

(older releases name the type at::Half). The same happens in bfloat16 with
torch.finfo(torch.float32).min, which is slightly below bfloat16's lowest
value. torch.finfo(scores.dtype).min is the value that always fits.
"""
import torch


def masked_scores(scores, pad_mask, fill):
    return scores.masked_fill(pad_mask, fill)


def main():
    torch.manual_seed(0)
    q = torch.randn(2, 4, 8)
    k = torch.randn(2, 4, 8)
    pad_mask = torch.zeros(2, 1, 4, dtype=torch.bool)
    pad_mask[1, :, 3] = True                       # last token of sample 1 is padding

    # fp32: works with the usual -1e9
    s32 = q @ k.transpose(-1, -2)
    print("fp32 row:", masked_scores(s32, pad_mask, -1e9)[1, 0].tolist(), flush=True)

    # the fix: the minimum of the tensor's own dtype
    s16 = (q @ k.transpose(-1, -2)).half()
    ok = masked_scores(s16, pad_mask, torch.finfo(s16.dtype).min)
    print("fp16 row with finfo(fp16).min:", ok[1, 0].tolist(), flush=True)

    # bf16 with the fp32 minimum
    sbf = s32.to(torch.bfloat16)
    try:
        masked_scores(sbf, pad_mask, torch.finfo(torch.float32).min)
    except RuntimeError as e:
        print("bf16 with finfo(fp32).min: RuntimeError:", e, flush=True)

    # fp16 with the fp32-era constant
    masked_scores(s16, pad_mask, -1e9)


if __name__ == "__main__":
    main()
