"""Reproduce a Stable-Baselines3 SubprocVecEnv losing one environment worker.

Needs stable-baselines3 and gymnasium next to torch (`pip install stable-baselines3
gymnasium`, or a venv whose site-packages also sees torch). CPU only, a few seconds.

Each case builds a SubprocVecEnv of two small environments and makes worker 1
die in a different way. The parent never sees the real cause: it only notices
that the pipe to the worker is closed. Cases:

1. env.step() raises in the worker: the worker prints its own traceback
   ("Process ForkServerProcess-N:" ... "in _worker" ... the env's exception),
   exits with code 1, and the parent's step_wait() fails with a bare EOFError
   at `results = [remote.recv() for remote in self.remotes]`.
2. The worker is SIGKILLed inside env.step() (what the OOM killer does):
   same EOFError in the parent, and this time nothing at all from the worker.
3. The worker is killed while idle, between two steps: the parent's next
   step_async() fails with "BrokenPipeError: [Errno 32] Broken pipe" at
   `remote.send(("step", action))`.
   Calling close() afterwards (as a `finally:` block would) fails the same
   way at `remote.send(("close", None))`, and that traceback is the last one
   printed.
4. The command was already queued when the worker died without reading it:
   recv() fails with "ConnectionResetError: [Errno 104] Connection reset by peer"
   (Linux, socketpair-based Pipe).
5. The environment's constructor raises in worker 0 (ctor0): the parent fails
   inside SubprocVecEnv.__init__ at
   `observation_space, action_space = self.remotes[0].recv()`. The worker
   never reads the "get_spaces" command, so on Linux this is usually
   ConnectionResetError (BrokenPipeError at the send before it if the worker
   was already gone). Raised in worker 1 instead (ctor1), SB3 2.x fails one
   call later, in the get_attr("render_mode") that VecEnv.__init__ sends to
   every worker: at `return [remote.recv() for remote in target_remotes]` or
   at `remote.send(("get_attr", attr_name))`, depending on the same race.
6. A method called through env_method() raises: EOFError at
   `return [remote.recv() for remote in target_remotes]`.
After each case the script prints every worker's exitcode, the one piece of
information that says how the worker died (1: Python exception, -9: SIGKILL).
"""
import multiprocessing as mp
import os
import signal
import sys
import traceback

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import SubprocVecEnv


class FlakyEnv(gym.Env):
    def __init__(self, idx, mode):
        if mode == f"ctor{idx}":
            raise RuntimeError("could not connect to the simulator")
        self.idx, self.mode, self.t = idx, mode, 0
        self.observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        if self.idx == 1 and self.t == 3:
            if self.mode == "raise":
                raise RuntimeError("physics engine diverged")
            if self.mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
        return np.zeros(2, np.float32), 0.0, False, False, {}

    def calibrate(self):
        if self.idx == 1:
            raise ValueError("calibration file missing")
        return True


def make(idx, mode):
    return lambda: FlakyEnv(idx, mode)


def run(mode):
    print(f"\n===== case: {mode}", flush=True)
    venv = None
    try:
        venv = SubprocVecEnv([make(i, mode) for i in range(2)])
        venv.reset()
        actions = np.zeros(2, dtype=np.int64)
        if mode == "idle":
            venv.step(actions)
            victim = venv.processes[1]
            os.kill(victim.pid, signal.SIGKILL)
            victim.join()
            try:
                venv.step(actions)
            except BrokenPipeError:
                traceback.print_exc()
                sys.stderr.flush()
            venv.close()
        elif mode == "queued":
            venv.step(actions)
            victim = venv.processes[1]
            os.kill(victim.pid, signal.SIGSTOP)
            venv.step_async(actions)
            os.kill(victim.pid, signal.SIGKILL)
            victim.join()
            venv.step_wait()
        elif mode == "method":
            venv.env_method("calibrate")
        for _ in range(5):
            venv.step(actions)
    except (EOFError, OSError):
        traceback.print_exc()
        sys.stderr.flush()
    finally:
        if venv is not None:
            for i, p in enumerate(venv.processes):
                p.join(timeout=0.5)  # the dead one has exited already; the others keep running
                print(f"worker {i}: pid {p.pid} exitcode {p.exitcode}", flush=True)
            for p in venv.processes:
                if p.is_alive():
                    p.kill()
                    p.join()
        for p in mp.active_children():  # workers of a SubprocVecEnv that failed in __init__
            p.kill()
            p.join()


if __name__ == "__main__":
    # Import SB3 (and torch) once in the forkserver instead of in every worker.
    mp.set_forkserver_preload(["stable_baselines3.common.vec_env.subproc_vec_env"])
    for case in ("raise", "kill", "idle", "queued", "ctor0", "ctor1", "method"):
        run(case)
