"""Reproduce axolotl's pre-pydantic batch-size derivation on a config without batch keys.

axolotl up to v0.4.0 derived the batch hyper-parameters in plain Python before
anything checked that they were set. The first statements of
`normalize_config` in src/axolotl/utils/config.py at v0.3.0 and v0.4.0 (the
same two statements sit in `train()` of scripts/finetune.py at v0.2.1) are:

    cfg.gradient_accumulation_steps = cfg.gradient_accumulation_steps or (
        cfg.batch_size // cfg.micro_batch_size
    )
    cfg.batch_size = (
        cfg.batch_size or cfg.micro_batch_size * cfg.gradient_accumulation_steps
    )

`cfg` is axolotl's `DictDefault` (an addict `Dict` whose `__missing__`
returns None), so a key that the YAML does not set reads as None.

axolotl v0.4.0 itself cannot be imported here (it needs addict, peft,
bitsandbytes, optimum ...), so this script writes those statements, copied
verbatim from the v0.4.0 tag, into a module with the same indentation, feeds
them configs that lack the batch keys, and prints the tracebacks Python
raises. Expected, one case each:

    TypeError: unsupported operand type(s) for //: 'NoneType' and 'NoneType'
    TypeError: unsupported operand type(s) for //: 'NoneType' and 'int'
    TypeError: unsupported operand type(s) for *: 'NoneType' and 'int'
    TypeError: unsupported operand type(s) for //: 'int' and 'NoneType'

and, with micro_batch_size and gradient_accumulation_steps set, the derived
batch_size.

v0.1.0 and v0.2.0 had no gradient_accumulation_steps option yet: `train()` in
scripts/finetune.py (v0.2.0 lines 152-153) always computed

    # setup some derived config / hyperparams
    cfg.gradient_accumulation_steps = cfg.batch_size // cfg.micro_batch_size

so a config with gradient_accumulation_steps and micro_batch_size but no
batch_size fails there too; the last case runs that statement (again copied
verbatim, inside a function of the same name). No GPU and no torch are needed.
"""
import importlib.util
import os
import sys
import traceback

# Verbatim from axolotl v0.4.0 src/axolotl/utils/config.py, lines 46-53.
NORMALIZE = '''\
def normalize_config(cfg):
    # setup some derived config / hyperparams
    cfg.gradient_accumulation_steps = cfg.gradient_accumulation_steps or (
        cfg.batch_size // cfg.micro_batch_size
    )
    cfg.batch_size = (
        cfg.batch_size or cfg.micro_batch_size * cfg.gradient_accumulation_steps
    )
'''


# Verbatim from axolotl v0.2.0 scripts/finetune.py, lines 152-153 (the rest of train() omitted).
TRAIN_V020 = '''\
def train(cfg):
    # setup some derived config / hyperparams
    cfg.gradient_accumulation_steps = cfg.batch_size // cfg.micro_batch_size
'''


class DictDefault(dict):
    """Stand-in for axolotl.utils.dict.DictDefault: attribute access, None for missing keys."""

    def __missing__(self, key):
        return None

    def __getattr__(self, key):
        return self[key]

    def __setattr__(self, key, value):
        self[key] = value


def load(filename, source, name):
    path = os.path.join(os.getcwd(), filename)
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(filename[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


CASES = [
    ("no batch keys at all", {}),
    ("only micro_batch_size", {"micro_batch_size": 2}),
    ("only gradient_accumulation_steps", {"gradient_accumulation_steps": 4}),
    ("only batch_size", {"batch_size": 16}),
    ("fixed: micro_batch_size + gradient_accumulation_steps", {"micro_batch_size": 2, "gradient_accumulation_steps": 4}),
]


def main():
    normalize_config = load("config.py", NORMALIZE, "normalize_config")
    train_v020 = load("finetune.py", TRAIN_V020, "train")
    base = {"base_model": "openlm-research/open_llama_3b", "num_epochs": 1}
    cases = [(t, k, normalize_config) for t, k in CASES]
    cases.append(("v0.2.0 train(): gradient_accumulation_steps + micro_batch_size, no batch_size",
                  {"micro_batch_size": 2, "gradient_accumulation_steps": 4}, train_v020))
    for title, keys, func in cases:
        cfg = DictDefault({**base, **keys})
        print(f"== {title}: {keys}", flush=True)
        try:
            func(cfg)
        except TypeError:
            traceback.print_exc(file=sys.stdout)
        else:
            print(f"gradient_accumulation_steps={cfg.gradient_accumulation_steps} "
                  f"batch_size={cfg.batch_size} (before the world-size multiply)")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
