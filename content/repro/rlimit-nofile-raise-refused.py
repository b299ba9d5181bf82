"""Reproduce the ValueErrors CPython's resource.setrlimit raises for RLIMIT_NOFILE.

Three start-up calls that ask for more open files than the process may have, each in
its own child process so that the limits the parent runs with are never touched:

1. the MMDetection 0.x/1.x start-up line `setrlimit(RLIMIT_NOFILE, (4096, hard))` run
   under a hard limit of 1024 (soft above hard: EINVAL);
2. a script that raises the hard limit as well, run as an unprivileged user (the child
   drops to uid/gid 65534 when started as root): EPERM;
3. a hard limit one above /proc/sys/fs/nr_open, refused even with privilege: EPERM.

Then the clamped form MMDetection 2.x and MMEngine use, min(max(4096, soft), hard),
succeeds under the same 1024 hard limit. Linux only; finishes in well under a second.
"""
import os
import resource
import sys
import traceback


def in_child(title, body):
    print(f"--- {title}", flush=True)
    pid = os.fork()
    if pid == 0:
        try:
            body()
        except ValueError:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    print(f"child exit status: {os.waitstatus_to_exitcode(status)}", flush=True)


def mmdet_1x_style_under_low_hard_limit():
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))  # lowering is always allowed
    rlimit = resource.getrlimit(resource.RLIMIT_NOFILE)
    print("limits before the import-time call:", rlimit, flush=True)
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, rlimit[1]))


def raise_hard_limit_unprivileged():
    if os.getuid() == 0:
        os.setgid(65534)
        os.setuid(65534)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    print(f"uid {os.getuid()}, limits {soft, hard}; asking for hard {hard + 1}", flush=True)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard + 1, hard + 1))


def hard_limit_above_nr_open():
    nr_open = int(open("/proc/sys/fs/nr_open").read())
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    print(f"uid {os.getuid()}, fs.nr_open {nr_open}; asking for hard {nr_open + 1}", flush=True)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, nr_open + 1))


def clamped_request_under_low_hard_limit():
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
    base_soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    soft = min(max(4096, base_soft), hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    print("clamped request accepted, limits now:", resource.getrlimit(resource.RLIMIT_NOFILE), flush=True)


if __name__ == "__main__":
    print(sys.version.split()[0], "limits of this process:", resource.getrlimit(resource.RLIMIT_NOFILE), flush=True)
    in_child("soft limit 4096 above a hard limit of 1024", mmdet_1x_style_under_low_hard_limit)
    in_child("raising the hard limit without privilege", raise_hard_limit_unprivileged)
    in_child("hard limit above fs.nr_open", hard_limit_above_nr_open)
    in_child("clamped to the hard limit", clamped_request_under_low_hard_limit)
