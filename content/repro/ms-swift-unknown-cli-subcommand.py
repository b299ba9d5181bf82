"""Reproduce ms-swift's `swift` command stopping on a subcommand its release does not route.

ms-swift's console script `swift` (and, from 3.4.0, `megatron`) calls
swift.cli.main:cli_main, which takes argv[0] as the subcommand and looks it up in a
plain dict (ROUTE_MAPPING) with no check and no help text. An unknown name raises a
bare KeyError from the lookup line; no subcommand at all raises IndexError on argv[0].

This script lays out a minimal stand-in for the dispatcher in a scratch folder (the
lookup and argv lines are the same source text as in the tags, the route modules are
stubs, not ms-swift's code) and runs it through a pip-style console-script wrapper:

    v3.0.0 layout: ROUTE_MAPPING plus '_' aliases, method_name = argv[0]
    v4.5.2 layout: route_mapping argument, method_name = argv[0].replace('_', '-')

The same last lines came from the real ms_swift 2.6.1, 3.0.0, 3.12.6 and 4.5.2 wheels
(unpacked on PYTHONPATH with their import-time dependencies, CPython 3.11.7): e.g.
`swift dpo` on 3.x/4.x, `swift app` on 2.6.1, `swift app_ui` (KeyError: 'app-ui' from
3.2.2), and a bare `swift`.
"""
import os
import subprocess
import sys
import tempfile
import textwrap

V3_0 = '''
import importlib.util
import subprocess
import sys
from typing import Dict

ROUTE_MAPPING: Dict[str, str] = {
    'pt': 'swift.cli.pt',
    'sft': 'swift.cli.sft',
    'rlhf': 'swift.cli.rlhf',
}

ROUTE_MAPPING.update({k.replace('-', '_'): v for k, v in ROUTE_MAPPING.items()})


def cli_main() -> None:
    argv = sys.argv[1:]
    method_name = argv[0]
    argv = argv[1:]
    file_path = importlib.util.find_spec(ROUTE_MAPPING[method_name]).origin
    args = [sys.executable, file_path, *argv]
    print(f"run sh: `{' '.join(args)}`", flush=True)
    result = subprocess.run(args)
    if result.returncode != 0:
        sys.exit(result.returncode)
'''

V4_5 = '''
import importlib.util
import subprocess
import sys
from typing import Dict, Optional

ROUTE_MAPPING: Dict[str, str] = {
    'pt': 'swift.cli.pt',
    'sft': 'swift.cli.sft',
    'rlhf': 'swift.cli.rlhf',
    'app': 'swift.cli.app',
}


def cli_main(route_mapping: Optional[Dict[str, str]] = None, is_megatron: bool = False) -> None:
    route_mapping = route_mapping or ROUTE_MAPPING
    argv = sys.argv[1:]
    method_name = argv[0].replace('_', '-')
    argv = argv[1:]
    file_path = importlib.util.find_spec(route_mapping[method_name]).origin
    args = [sys.executable, file_path, *argv]
    print(f"run sh: `{' '.join(args)}`", flush=True)
    result = subprocess.run(args)
    if result.returncode != 0:
        sys.exit(result.returncode)
'''

WRAPPER = '''import re
import sys
from swift.cli.main import cli_main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(cli_main())
'''


def write(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))


def layout(root, main_text):
    pkg = os.path.join(root, "swift")
    write(os.path.join(pkg, "__init__.py"))
    write(os.path.join(pkg, "cli", "__init__.py"))
    write(os.path.join(pkg, "cli", "main.py"), main_text)
    for name in ("pt", "sft", "rlhf", "app"):
        write(os.path.join(pkg, "cli", name + ".py"), f"import sys\nprint('stub {name} got', sys.argv[1:])\n")
    write(os.path.join(root, "bin", "swift"), WRAPPER)


def run(root, label, *argv):
    env = dict(os.environ, PYTHONPATH=root)
    print(f"--- {label}: swift {' '.join(argv)}", flush=True)
    out = subprocess.run([sys.executable, "-s", os.path.join(root, "bin", "swift"), *argv], env=env,
                         capture_output=True, text=True, check=False)
    lines = (out.stdout + out.stderr).rstrip().splitlines()
    if out.returncode:
        # the lookup frame's source line and the exception line (caret lines dropped)
        keep = [ln for ln in lines if ln.strip() and set(ln.strip()) - set("^~")]
        print("\n".join(keep[-2:]), flush=True)
    else:
        print("\n".join(lines), flush=True)
    print(f"exit code {out.returncode}", flush=True)


def main():
    for label, text, cases in (
        ("v3.0.0 layout", V3_0, [("dpo", "--model", "m"), ("app_ui",), ("rlhf", "--rlhf_type", "dpo"), ()]),
        ("v4.5.2 layout", V4_5, [("dpo", "--model", "m"), ("app_ui",), ("--help",), ("rlhf", "--rlhf_type", "dpo"), ()]),
    ):
        with tempfile.TemporaryDirectory() as root:
            layout(root, text)
            for argv in cases:
                run(root, label, *argv)


if __name__ == "__main__":
    main()
