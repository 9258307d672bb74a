#!/usr/bin/env python3
"""The control socket of `sluice run` (issue 13, item 8): where it lives, what it may remove,
and how many clients it serves.

  private dir    by default the socket is $XDG_RUNTIME_DIR/sluice/sluice-<pid>.sock (here a
                 temp dir), in a directory of mode 0700 made for it; `sluice savepoint <pid>`
                 finds it, and the socket is gone when the job ends
  not ours       --control naming a regular file, a directory or the live socket of another
                 process: the job runs without savepoints, says why, and removes nothing
  stale          --control naming the socket of a process that died: it is replaced, and
                 at start the private dir loses the sockets of dead processes (not a live
                 one, not a file that is not a socket)
  replaced       when the path no longer holds our socket at exit (moved away, a file put
                 there), the job leaves what is there alone
  full backlog   a listener in the private dir that never accepts (a job stopped with
                 SIGSTOP) and whose backlog is full: a new job still starts (its sweep must
                 not block on that connect) and leaves the socket alone
  many clients   six idle connections do not delay a savepoint: it completes while all six
                 are still open, unanswered (a server serving one at a time answers each
                 idle one only after its read timeout)

Every wait is for a condition (a socket accepting, a process gone). Usage: control_socket.py SLUICE
"""
import os
import select
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time

JOB = """CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '200',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '0', 'fields.id.end' = '100000000');
CREATE TABLE out_t (id BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out_t SELECT id FROM gen;
"""

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL: " + msg)


def wait(cond, p, what, limit=30):
    t0 = time.monotonic()
    while not cond():
        if p is not None and p.poll() is not None:
            return "the job exited (%d) before %s: %s" % (p.returncode, what,
                                                           p.stderr.read().decode()[-300:])
        if time.monotonic() - t0 > limit:
            return "no %s within %d s" % (what, limit)
        time.sleep(0.01)
    return None


def accepts(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def dead_socket(path):
    """A socket file whose listener is gone, as a killed process leaves it."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(1)
    s.close()


def start(sluice, job, env, extra=()):
    return subprocess.Popen([sluice, "run", job, "--quiet"] + list(extra), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def stop(sluice, target, p, env):
    r = subprocess.run([sluice, "stop", target], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return "the job did not stop"
    if r.returncode or p.returncode:
        return "stop exited %d, the job %d: %s %s" % (r.returncode, p.returncode,
                                                      r.stderr.decode()[-200:],
                                                      p.stderr.read().decode()[-200:])
    return None


def check_private_dir(sluice, work, job):
    run = os.path.join(work, "xdg")
    os.mkdir(run, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=run)
    env.pop("SLUICE_RUN_DIR", None)
    priv = os.path.join(run, "sluice")
    os.mkdir(priv, 0o700)
    # left by earlier runs: a dead process's socket, a live one, a file that is no socket
    dead_socket(os.path.join(priv, "sluice-999999999.sock"))
    live = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    live.bind(os.path.join(priv, "sluice-1.sock"))
    live.listen(1)
    with open(os.path.join(priv, "sluice-2.sock"), "w") as f:
        f.write("not a socket")
    os.chmod(priv, 0o755)  # made too open by someone: the job must tighten or refuse it
    p = start(sluice, job, env)
    sock = os.path.join(priv, "sluice-%d.sock" % p.pid)
    err = wait(lambda: accepts(sock), p, "socket at " + sock)
    if err:
        fail("private dir: " + err)
        p.kill()
        p.wait()
        live.close()
        return
    mode = stat.S_IMODE(os.stat(priv).st_mode)
    if mode != 0o700:
        fail("private dir: %s has mode %o, want 700" % (priv, mode))
    left = sorted(os.listdir(priv))
    want = sorted(["sluice-1.sock", "sluice-2.sock", "sluice-%d.sock" % p.pid])
    if left != want:
        fail("private dir: it holds %s, want %s (the dead process's socket removed, "
             "nothing else)" % (left, want))
    sp = os.path.join(work, "sp-private")
    r = subprocess.run([sluice, "savepoint", str(p.pid), sp], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    if r.returncode:
        fail("private dir: savepoint by pid: %s" % r.stderr.decode()[-300:])
    err = stop(sluice, str(p.pid), p, env)
    if err:
        fail("private dir: " + err)
    if os.path.exists(sock):
        fail("private dir: the socket %s is still there after the job ended" % sock)
    if not accepts(os.path.join(priv, "sluice-1.sock")):
        fail("private dir: the live socket of another process was removed")
    live.close()
    if not FAILS:
        print("ok: private dir %s (0700), the dead socket removed, savepoint by pid" % priv)


def check_not_ours(sluice, work, job):
    env = dict(os.environ)
    cases = []
    f = os.path.join(work, "a-file")
    with open(f, "w") as fh:
        fh.write("precious")
    cases.append(("a regular file", f))
    d = os.path.join(work, "a-dir")
    os.mkdir(d)
    cases.append(("a directory", d))
    lv = os.path.join(work, "live.sock")
    live = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    live.bind(lv)
    live.listen(1)
    cases.append(("a live socket", lv))
    n = len(FAILS)
    for what, path in cases:
        p = start(sluice, job, env, ["--control", path])
        # the job says why savepoints are off, then runs on: wait for that line
        got = [b""]

        def said():
            if select.select([p.stderr], [], [], 0.05)[0]:
                got[0] += os.read(p.stderr.fileno(), 4096)
            return b"savepoints unavailable" in got[0]
        err = wait(said, p, "a word about the control socket", limit=10)
        if err:
            fail("%s at --control: no clear refusal (%s): %r" % (what, err, got[0][-300:]))
        else:
            print("   %s: %s" % (what, got[0].decode().strip().splitlines()[-1]))
        p.terminate()
        p.wait()
        if what == "a regular file" and (not os.path.isfile(f) or open(f).read() != "precious"):
            fail("a regular file at --control was removed or changed")
        if what == "a directory" and not os.path.isdir(d):
            fail("a directory at --control was removed")
        if what == "a live socket" and not accepts(lv):
            fail("the live socket of another process at --control was removed")
    live.close()
    if len(FAILS) == n:
        print("ok: a file, a directory and a live socket at --control are refused, kept")


def check_stale_and_replaced(sluice, work, job):
    env = dict(os.environ)
    n = len(FAILS)
    sock = os.path.join(work, "stale.sock")
    dead_socket(sock)
    p = start(sluice, job, env, ["--control", sock])
    err = wait(lambda: accepts(sock), p, "socket replacing the stale one")
    if err:
        fail("stale socket: " + err)
        p.kill()
        p.wait()
        return
    # move our socket away and put a file at its path: at exit the job must leave it
    moved = os.path.join(work, "moved.sock")
    os.rename(sock, moved)
    with open(sock, "w") as fh:
        fh.write("someone else's")
    err = stop(sluice, moved, p, env)
    if err:
        fail("replaced socket: " + err)
    if not os.path.isfile(sock) or open(sock).read() != "someone else's":
        fail("replaced socket: the file put at the socket's path was removed at exit")
    if len(FAILS) == n:
        print("ok: a stale socket is replaced; what replaced ours is left alone at exit")


def check_full_backlog(sluice, work, job):
    run = os.path.join(work, "xdg-full")
    priv = os.path.join(run, "sluice")
    os.makedirs(priv, 0o700)
    os.chmod(run, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=run)
    env.pop("SLUICE_RUN_DIR", None)
    frozen_path = os.path.join(priv, "sluice-3.sock")
    frozen = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    frozen.bind(frozen_path)
    frozen.listen(1)
    queued = []
    while True:  # fill its backlog: the next connect would wait for an accept()
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.setblocking(False)
        try:
            c.connect(frozen_path)
        except BlockingIOError:
            c.close()
            break
        queued.append(c)
    p = start(sluice, job, env)
    sock = os.path.join(priv, "sluice-%d.sock" % p.pid)
    err = wait(lambda: accepts(sock), p, "socket at " + sock)
    if err:
        fail("full backlog: a job beside a listener that never accepts: " + err)
        p.kill()
        p.wait()
    else:
        err = stop(sluice, str(p.pid), p, env)
        if err:
            fail("full backlog: " + err)
        if not os.path.exists(frozen_path):
            fail("full backlog: the socket of a listener that does not accept was removed")
    for c in queued:
        c.close()
    frozen.close()
    if not err:
        print("ok: a job starts beside a listener whose backlog is full, and leaves it alone")


def check_many_clients(sluice, work, job):
    env = dict(os.environ)
    sock = os.path.join(work, "many.sock")
    p = start(sluice, job, env, ["--control", sock])
    err = wait(lambda: accepts(sock), p, "socket")
    if err:
        fail("many clients: " + err)
        p.kill()
        p.wait()
        return
    idle = []
    for _ in range(6):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock)
        idle.append(s)
    sp = os.path.join(work, "sp-many")
    r = subprocess.run([sluice, "savepoint", sock, sp], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    answered = 0
    for s in idle:
        s.setblocking(False)
        try:
            s.recv(1)
            answered += 1  # a reply or EOF: the server got to it first
        except BlockingIOError:
            pass
        s.close()
    if r.returncode:
        fail("many clients: savepoint: %s" % r.stderr.decode()[-300:])
    if answered:
        fail("many clients: %d of 6 idle connections were answered (timed out) before the "
             "savepoint completed: one client at a time" % answered)
    err = stop(sluice, sock, p, env)
    if err:
        fail("many clients: " + err)
    if not r.returncode and not answered and not err:
        print("ok: a savepoint completes while 6 idle connections stay open")


def main():
    sluice = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sluice-ctl-")
    try:
        job = os.path.join(work, "job.sql")
        with open(job, "w") as f:
            f.write(JOB)
        check_private_dir(sluice, work, job)
        check_not_ours(sluice, work, job)
        check_stale_and_replaced(sluice, work, job)
        check_full_backlog(sluice, work, job)
        check_many_clients(sluice, work, job)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
