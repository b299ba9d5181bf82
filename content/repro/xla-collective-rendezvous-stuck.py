"""Reproduce XLA's rendezvous stuck warning and termination on CPU (needs jax/jaxlib, e.g. 0.8.1).

Two simulated CPU devices run one pmap step whose all-reduce is a rendezvous
of two threads. Before the all-reduce, device 1 spends its time in a host
callback (standing in for a host or device that is busy elsewhere), so device
0 reaches the all-reduce alone. With the warning time set to 2 s and the
termination time to 5 s, device 0's thread logs

    [id=0] This thread has been waiting for `all reduce RendezvousKey{...}` for 2 seconds and may be stuck. Expected 2 threads to join the rendezvous, but not all of them arrived on time.

and, since device 1 is still away after 5 more seconds, the process aborts with

    [id=0] Termination timeout for `all reduce RendezvousKey{...}` of 5 seconds exceeded. Exiting to ensure a consistent program state. Expected 2 threads to join the rendezvous, but only 1 of them arrived on time.

The xla_cpu_collective_call_* flags exist in jaxlib 0.8.1 and 0.10.2 (not in
0.6.2 or older, where an unknown flag in XLA_FLAGS aborts at start-up with
"Unknown flags in XLA_FLAGS"), so they are passed only from jaxlib 0.8 on.
Without them, jaxlib 0.6.2 prints the same two lines after its fixed 5 s and
10 s, and older jaxlib (0.4.30, 0.4.36) print, after a fixed 5000 ms,
"This thread has been waiting for 5000ms for and may be stuck: participant ...",
then "Thread is unstuck!" when device 1 arrives, and the result [3. 3.].
"""
import os
import sys
import time
from importlib.metadata import PackageNotFoundError, version

try:
    JAXLIB_VERSION = tuple(int(p) for p in version("jaxlib").split(".")[:2])
except PackageNotFoundError:
    sys.exit("this reproduction needs jax and jaxlib (pip install 'jax==0.8.1')")

XLA_FLAGS = ["--xla_force_host_platform_device_count=2"]
if JAXLIB_VERSION >= (0, 8):
    XLA_FLAGS += [
        "--xla_cpu_collective_call_warn_stuck_timeout_seconds=2",
        "--xla_cpu_collective_call_terminate_timeout_seconds=5",
    ]
os.environ["XLA_FLAGS"] = " ".join(XLA_FLAGS)

try:
    import jax
    import jax.numpy as jnp
    import numpy as np
except ImportError:
    sys.exit("this reproduction needs jax and jaxlib (pip install 'jax==0.8.1')")

DELAY_S = 30.0  # longer than warning + termination time (15 s on jaxlib 0.6.2)


def busy_on_device_1(i):
    if int(i) == 1:
        time.sleep(DELAY_S)
    return np.float32(i)


def step(x):
    i = jax.lax.axis_index("d")
    y = jax.pure_callback(busy_on_device_1, jax.ShapeDtypeStruct((), jnp.float32), i)
    return jax.lax.psum(x + y, "d")


print(jax.pmap(step, axis_name="d")(jnp.ones(2)), flush=True)
