"""Reproduce the image/video placeholder-token count checks of transformers VLMs.

CPU only, tiny randomly initialised models built from configs (no download).
Run with transformers 5.x (5.25.0 here), which prints the comma form
"..., tokens: N, features: M"; 4.46 to 4.57 print "...: tokens: N, features M".

1. Qwen2-VL: one 56x56 image becomes a 1x4x4 patch grid, i.e. 4 visual
   features after the 2x2 merge, so the prompt must hold exactly 4
   <|image_pad|> ids. With 3 (a prompt cut short) or 5 (a stray placeholder)
   the forward stops with
       ValueError: Image features and image tokens do not match, tokens: 3, features: 4
   and the same for a video with too few <|video_pad|> ids.
2. LLaVA processor asked to truncate: the expanded <image> run is cut and
   the processor (transformers 4.52 and later) refuses the batch with
       ValueError: Mismatch in `image` token count between text and `input_ids`. ...
3. The same cut made after processing (the way a trainer that truncates
   input_ids itself does it): the model sees 8 image ids for 16 features.
4. Processor and model disagree: a LlavaProcessor without
   num_additional_image_tokens=1 for a CLS-token vision tower with the
   "default" feature strategy inserts 15 ids where the model produces 16.
In 3 and 4 LLaVA prints "features: 512": its features figure is the number of
feature vectors times the hidden size (16 x 32 here), not the vector count.
"""
import numpy as np
import torch
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import (CLIPImageProcessor, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor,
                          PreTrainedTokenizerFast, Qwen2VLConfig, Qwen2VLForConditionalGeneration)

torch.manual_seed(0)


def report(fn):
    try:
        fn()
        print("no error")
    except ValueError as e:
        print(f"ValueError: {e}", flush=True)


def qwen2_vl():
    cfg = Qwen2VLConfig(
        text_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                         num_key_value_heads=1, vocab_size=256,
                         rope_scaling={"type": "mrope", "mrope_section": [2, 2, 4]}),
        vision_config=dict(depth=1, embed_dim=32, hidden_size=32, num_heads=2, patch_size=14,
                           spatial_merge_size=2, temporal_patch_size=2, in_channels=3),
        image_token_id=250, video_token_id=251, vision_start_token_id=252, vision_end_token_id=253,
    )
    model = Qwen2VLForConditionalGeneration(cfg).eval()
    grid = torch.tensor([[1, 4, 4]])            # 16 patches -> 4 features after the 2x2 merge
    pix = torch.randn(16, 3 * 2 * 14 * 14)

    def ids(n, tok=250):
        return torch.tensor([[1, 252] + [tok] * n + [253, 5, 6]])

    with torch.no_grad():
        ok = ids(4)
        model(input_ids=ok, pixel_values=pix, image_grid_thw=grid, mm_token_type_ids=(ok == 250).int())
        print("Qwen2-VL with 4 image ids for 4 features: ok")
        report(lambda: model(input_ids=ids(3), pixel_values=pix, image_grid_thw=grid))
        report(lambda: model(input_ids=ids(5), pixel_values=pix, image_grid_thw=grid))
        report(lambda: model(input_ids=ids(2, 251), pixel_values_videos=pix, video_grid_thw=grid))


def llava_parts():
    words = ["<image>", "<pad>", "<unk>", "USER:", "describe", "the", "picture", "ASSISTANT:"]
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", unk_token="<unk>",
                                  extra_special_tokens={"image_token": "<image>"})
    tok.add_special_tokens({"additional_special_tokens": ["<image>"]})
    ip = CLIPImageProcessor(size={"shortest_edge": 56}, crop_size={"height": 56, "width": 56})
    cfg = LlavaConfig(
        vision_config=dict(model_type="clip_vision_model", hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                           num_attention_heads=2, image_size=56, patch_size=14),
        text_config=dict(model_type="llama", hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, vocab_size=len(words)),
        image_token_id=0, vision_feature_select_strategy="default", vision_feature_layer=-1,
    )
    model = LlavaForConditionalGeneration(cfg).eval()
    img = (np.random.rand(64, 64, 3) * 255).astype("uint8")
    text = "USER: <image> describe the picture ASSISTANT:"
    return tok, ip, model, img, text


def llava():
    tok, ip, model, img, text = llava_parts()
    proc = LlavaProcessor(image_processor=ip, tokenizer=tok, patch_size=14,
                          vision_feature_select_strategy="default", num_additional_image_tokens=1)
    full = proc(text=[text], images=[img], return_tensors="pt")
    with torch.no_grad():
        model(**full)
        print(f"LLaVA with {(full['input_ids'] == 0).sum().item()} image ids: ok")
        report(lambda: proc(text=[text], images=[img], truncation=True, max_length=10, return_tensors="pt"))
        cut = full["input_ids"][:, :10]
        report(lambda: model(input_ids=cut, attention_mask=torch.ones_like(cut), pixel_values=full["pixel_values"]))
        bad = LlavaProcessor(image_processor=ip, tokenizer=tok, patch_size=14, vision_feature_select_strategy="default")
        b = bad(text=[text], images=[img], return_tensors="pt")
        report(lambda: model(**b))


if __name__ == "__main__":
    qwen2_vl()
    llava()
