"""Reproduce TrainingArguments failing in __post_init__ when `fsdp` is None.

Needs `transformers` (and, for the TRL case, `trl`) next to torch. To see the
TypeError, run it with an affected transformers: a scratch virtual environment
with `pip install transformers==4.56.2` whose site-packages has a .pth line
pointing at the torch environment works (TRL 1.16.0 accepts 4.56.2). With a
current transformers (5.x) the None cases are accepted and only the string
"None" is refused. Nothing is downloaded and no model is built: every case only constructs the argument
dataclass, on the CPU, in a second or two. The outcome depends on the
transformers release:

- 4.19.0 to 4.57.0: `fsdp=None` (a keyword, or `fsdp:` left empty in a YAML file
  read by HfArgumentParser) reaches `FSDPOption.FULL_SHARD in self.fsdp` and
  stops with "TypeError: argument of type 'NoneType' is not iterable"; TRL's
  configs fail the same way through `super().__post_init__()`.
- 4.57.1 to 4.57.6: None is accepted, but `fsdp=False` now reaches the same line
  and stops with "argument of type 'bool' is not iterable".
- 5.0.0 and later: None and False both mean "FSDP off".
- Every release refuses the *string* "None" (`--fsdp None` on the command line):
  "None is not a valid FSDPOption, ..." up to 5.9.0, "Unknown `fsdp` option:
  None" from 5.10.1; 4.57.0 alone turns the value into FSDPOption inside argparse,
  which prints "error: argument --fsdp: invalid FSDPOption value: 'None'".

Checked with transformers 4.56.2, 4.57.0, 4.57.1, 4.57.6, 5.0.0 and 5.25.0
(TRL 1.16.0, torch 2.13.0, Python 3.11).
"""
import os
import sys
import tempfile
import traceback
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
warnings.simplefilter("ignore")

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import HfArgumentParser, TrainingArguments  # noqa: E402

scratch = tempfile.mkdtemp(prefix="fsdp-none-")
OUT = os.path.join(scratch, "out")
print(f"transformers {transformers.__version__}, torch {torch.__version__}, python {sys.version.split()[0]}", flush=True)


def show(label, build, frames=1):
    print(f"--- {label}", flush=True)
    try:
        args = build()
    except SystemExit as exc:  # argparse already printed its usage and error line
        print(f"argparse exited with status {exc.code}", flush=True)
        return
    except Exception as exc:  # print the innermost frame and the error, as a log shows them
        traceback.print_exception(type(exc), exc, exc.__traceback__, limit=-frames, file=sys.stdout)
        sys.stdout.flush()
        return
    print(f"accepted: fsdp={args.fsdp!r}", flush=True)


# 1. A wrapper forwards fsdp=None instead of leaving the default.
show("TrainingArguments(fsdp=None)", lambda: TrainingArguments(output_dir=OUT, report_to="none", fsdp=None))

# 2. A YAML file with `fsdp:` and no value (YAML null) read by HfArgumentParser.
yaml_path = os.path.join(scratch, "train.yaml")
with open(yaml_path, "w") as f:
    f.write(f"output_dir: {OUT}\nreport_to: none\nfsdp:\n")
show("HfArgumentParser.parse_yaml_file with 'fsdp:' empty",
     lambda: HfArgumentParser(TrainingArguments).parse_yaml_file(yaml_path)[0])

# 3. A TRL config, which runs TrainingArguments.__post_init__ through super().
try:
    from trl import SFTConfig
except Exception as exc:  # TRL absent or not importable with this transformers
    print(f"--- SFTConfig(fsdp=None) skipped: {type(exc).__name__}: {exc}", flush=True)
else:
    show("trl SFTConfig(fsdp=None)", lambda: SFTConfig(output_dir=OUT, report_to="none", bf16=False, fsdp=None), frames=3)

# 4. fsdp=False (a bool from a config): refused only by 4.57.1 to 4.57.6.
show("TrainingArguments(fsdp=False)", lambda: TrainingArguments(output_dir=OUT, report_to="none", fsdp=False))

# 5. The string "None" from the command line: never means "off".
show("--fsdp None on the command line",
     lambda: HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(
         args=["--output_dir", OUT, "--report_to", "none", "--fsdp", "None"])[0])

# 6. The fix: leave fsdp out, or pass "" (FSDP off in every release).
show("fix: fsdp omitted", lambda: TrainingArguments(output_dir=OUT, report_to="none"))
show("fix: fsdp=\"\"", lambda: TrainingArguments(output_dir=OUT, report_to="none", fsdp=""))
