"""The daemon's processes, read from /proc (Linux): who they are, what CPU
they use, what they hold. Python 3 standard library only."""

import os
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def stat(pid):
    """(ppid, state, cpu seconds) of a process, or None if it is gone. The
    CPU is its own utime + stime plus cutime + cstime (the children it has
    reaped), so a tree's sum only grows."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rindex(")") + 2:].split()  # from field 3 (state) on
    ticks = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return int(fields[1]), fields[0], ticks / CLK_TCK


def children(root, zombies=True):
    """{pid: cpu seconds} of the processes below `root`, at any depth; with
    zombies=False only the live ones. (A zombie still shows its CPU time
    until it is reaped, when its parent's cutime + cstime take it over: a
    tree's sum counts it once either way.)"""
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = stat(int(name))
            if st is not None and (zombies or st[1] != "Z"):
                parents[int(name)] = st
    out, todo = {}, [root]
    while todo:
        p = todo.pop()
        for pid, (ppid, _, cpu) in parents.items():
            if ppid == p and pid not in out:
                out[pid] = cpu
                todo.append(pid)
    return out


def cmdline(pid):
    """A process's command line, its arguments NUL-terminated (b"" if gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def live_children(root):
    """The pids of the live (not zombie) processes below `root`."""
    return set(children(root, zombies=False))


def serving(root):
    """The live processes below `root` that serve: in fork and prefork not
    the supervisor process, which the server forks without exec (its only
    child, with the server's command line), only what that one forks; with
    --python not the warm parent, only the workers it forks. A process in
    the middle of an exec, or on its way out, shows an empty command line:
    it is not counted (a warm parent in its exec would otherwise pass for
    a worker)."""
    own = cmdline(root)

    def serves(pid):
        line = cmdline(pid)
        if not line:
            return False  # in an exec, leaving, or gone
        st = stat(pid)
        return st is not None and not (st[0] == root
                                       and (line == own or b"--warm-parent\0" in line))

    return {p for p in live_children(root) if serves(p)}


def warm_parents(root):
    """The warm parents (--python) among `root`'s live children."""
    return {p for p in live_children(root)
            if stat(p)[0] == root and b"--warm-parent\0" in cmdline(p)}


def tree_cpu(root):
    """CPU seconds used so far by `root` and every process below it, the
    dead ones included. The root is read first, so a child reaped meanwhile
    is counted at most once."""
    own = stat(root)
    if own is None:
        raise AssertionError(f"process {root} is gone")
    return own[2] + sum(children(root).values())


def wait_for(predicate, deadline, interval=0.01):
    """predicate()'s first true value, or its last value at `deadline`."""
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def open_fds(pid):
    """{fd number: what it points to} of a live process."""
    out = {}
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            out[int(name)] = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            pass  # closed meanwhile
    return out


def socket_inode(target):
    """The inode of a `socket:[N]` link target, or None."""
    if target.startswith("socket:[") and target.endswith("]"):
        return int(target[len("socket:["):-1])
    return None


def listening_inodes(port):
    """Inodes of the TCP sockets listening on `port` (IPv4 and IPv6)."""
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    cols = line.split()
                    local, state, inode = cols[1], cols[3], int(cols[9])
                    if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                        out.add(inode)
        except OSError:
            continue
    return out
