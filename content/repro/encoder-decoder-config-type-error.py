"""Reproduce the ways Transformers' composite encoder-decoder configs refuse (or,
from 5.20.0, silently replace) sub-configurations that are missing or of the
wrong type.

Runs on the CPU in a few seconds with the transformers that is importable
(5.25.0 in the project's torch environment). Nothing is downloaded: every
config and model is a tiny BERT built in memory or saved to a scratch folder.
To see the wordings of older releases, run the same script from a scratch
virtual environment that holds only `transformers==X` and a .pth line pointing
at the torch environment's site-packages (checked with 4.44.0, 4.57.6, 5.19.0
and 5.25.0).

Cases (what each release range does is printed as it happens):
1. EncoderDecoderConfig() and VisionEncoderDecoderConfig() with no `encoder` /
   `decoder`: an AssertionError (EncoderDecoderConfig up to 4.44.x) or the
   "cannot be instantiated because ... sub-configurations" ValueError (up to
   5.19.x); from 5.20.0 default sub-configs are filled in instead.
2. EncoderDecoderConfig(encoder=BertConfig(...), decoder=BertConfig(...)):
   config objects where the constructor pops keys from dicts, so up to 5.19.x
   AttributeError: 'BertConfig' object has no attribute 'pop'.
3. EncoderDecoderConfig(encoder="bert", decoder="bert"): a string where a
   config is expected ('str' object has no attribute 'pop' up to 5.19.x,
   huggingface_hub's strict-dataclass TypeError from 5.20.0).
4. from_encoder_decoder_configs() given two dicts: AttributeError on
   'is_decoder' in every release.
5. EncoderDecoderConfig.from_pretrained() of a folder whose config.json is a
   plain BERT config (no encoder/decoder keys): the same refusal as case 1 up
   to 5.19.x; from 5.20.0 a default-sized BERT pair replaces what was saved.
6. EncoderDecoderModel(config=BertConfig(...)) and the same for
   VisionEncoderDecoderModel: "has to be of type".
7. EncoderDecoderModel() with neither a config nor both sub-models.
8-10. The fixes: from_encoder_decoder_configs() with config objects, a
   save_pretrained / from_pretrained round trip, and
   from_encoder_decoder_pretrained() from two saved BERT checkpoints.
"""
import os
import shutil
import sys
import tempfile
import traceback
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "warning")
warnings.simplefilter("ignore")

import torch  # noqa: E402,F401
import transformers  # noqa: E402
from transformers import (  # noqa: E402
    BertConfig,
    BertModel,
    EncoderDecoderConfig,
    EncoderDecoderModel,
    VisionEncoderDecoderConfig,
    VisionEncoderDecoderModel,
)

print(f"transformers {transformers.__version__}, torch {torch.__version__}", flush=True)
SMALL = dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37, vocab_size=99)
scratch = tempfile.mkdtemp(prefix="edc-")


def case(title, fn):
    print(f"\n--- {title}", flush=True)
    try:
        result = fn()
    except Exception as exc:  # print what the library raised, as a traceback's last line does
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        print(f"raised in {os.path.basename(frame.filename)}:{frame.lineno} ({frame.name})")
        lines = "".join(traceback.format_exception_only(type(exc), exc)).rstrip().splitlines()
        if len(lines) > 4:  # a message that embeds a config's JSON: its first and last lines tell the story
            lines = lines[:1] + ["  ... (config JSON cut) ..."] + lines[-2:]
        print("\n".join(line[:500] for line in lines), flush=True)
        return None
    if isinstance(result, transformers.PretrainedConfig) and hasattr(result, "encoder"):
        print(
            f"no error: {type(result).__name__} with encoder {result.encoder.model_type} "
            f"(hidden_size {result.encoder.hidden_size}) and decoder {result.decoder.model_type} "
            f"(hidden_size {result.decoder.hidden_size}, is_decoder={result.decoder.is_decoder})",
            flush=True,
        )
    else:
        print(f"no error: {type(result).__name__}", flush=True)
    return result


try:
    case("1a. EncoderDecoderConfig() without encoder/decoder", lambda: EncoderDecoderConfig())
    case("1b. VisionEncoderDecoderConfig() without encoder/decoder", lambda: VisionEncoderDecoderConfig())
    case(
        "2. EncoderDecoderConfig(encoder=<BertConfig>, decoder=<BertConfig>)",
        lambda: EncoderDecoderConfig(encoder=BertConfig(**SMALL), decoder=BertConfig(**SMALL)),
    )
    case('3. EncoderDecoderConfig(encoder="bert", decoder="bert")', lambda: EncoderDecoderConfig(encoder="bert", decoder="bert"))
    case(
        "4. from_encoder_decoder_configs(<dict>, <dict>)",
        lambda: EncoderDecoderConfig.from_encoder_decoder_configs(BertConfig(**SMALL).to_dict(), BertConfig(**SMALL).to_dict()),
    )
    plain = os.path.join(scratch, "plain-bert")
    BertConfig(**SMALL).save_pretrained(plain)  # a config.json with model_type "bert" and no encoder/decoder keys
    case("5. EncoderDecoderConfig.from_pretrained(<folder with a plain BERT config.json>)", lambda: EncoderDecoderConfig.from_pretrained(plain))
    case("6. EncoderDecoderModel(config=<BertConfig>)", lambda: EncoderDecoderModel(config=BertConfig(**SMALL)))
    case("6b. VisionEncoderDecoderModel(config=<BertConfig>)", lambda: VisionEncoderDecoderModel(config=BertConfig(**SMALL)))
    case("7. EncoderDecoderModel() without config, encoder or decoder", lambda: EncoderDecoderModel())

    fixed = case(
        "8. fix: EncoderDecoderConfig.from_encoder_decoder_configs(<BertConfig>, <BertConfig>)",
        lambda: EncoderDecoderConfig.from_encoder_decoder_configs(BertConfig(**SMALL), BertConfig(**SMALL)),
    )
    saved = os.path.join(scratch, "bert2bert")

    def round_trip():
        model = EncoderDecoderModel(config=fixed)
        model.save_pretrained(saved)
        return EncoderDecoderConfig.from_pretrained(saved)

    case("9. fix: EncoderDecoderModel(config=...).save_pretrained() then EncoderDecoderConfig.from_pretrained()", round_trip)
    enc_dir = os.path.join(scratch, "enc")
    dec_dir = os.path.join(scratch, "dec")
    BertModel(BertConfig(**SMALL)).save_pretrained(enc_dir)
    BertModel(BertConfig(**SMALL)).save_pretrained(dec_dir)
    model = case(
        "10. fix: EncoderDecoderModel.from_encoder_decoder_pretrained(<bert dir>, <bert dir>)",
        lambda: EncoderDecoderModel.from_encoder_decoder_pretrained(enc_dir, dec_dir),
    )
    if model is not None:
        cfg = model.config
        print(f"model.config: {type(cfg).__name__}, decoder.is_decoder={cfg.decoder.is_decoder}, "
              f"decoder.add_cross_attention={cfg.decoder.add_cross_attention}", flush=True)
finally:
    shutil.rmtree(scratch, ignore_errors=True)
sys.exit(0)
