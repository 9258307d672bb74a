"""A real Apache Kafka cluster for the tests beside this file (tools/kafka-cluster: KRaft,
127.0.0.1 only), and the two independent ways they read a topic back: kcat (librdkafka) and
Kafka's own Java consumer (tools/kafka/VerifyConsumer.java).

A test that cannot have the cluster (java, mvn or kcat missing, Maven Central unreachable
on the first fetch) exits 77 with a line saying why: `skip_unless_available()`.
"""
import atexit
import collections
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(ROOT, "tools", "kafka-cluster")
EXIT_MISSING = 3  # tools/kafka-cluster: what the cluster needs is not there
TIMEOUT = 120


def skip(why):
    print("SKIP: " + why, flush=True)
    print("*" * 78 + "\nSKIPPED: this test needs a real Kafka broker: %s\n" % why + "*" * 78,
          file=sys.stderr, flush=True)
    sys.exit(77)


def skip_unless_available():
    """Fetches the broker's jars (once, cached) or exits 77 saying why it cannot."""
    if not subprocess.run(["sh", "-c", "command -v kcat"], stdout=subprocess.DEVNULL).returncode == 0:
        skip("kcat is not installed")
    p = subprocess.run([TOOL, "fetch"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, timeout=1000)
    if p.returncode == EXIT_MISSING:
        skip(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "tools/kafka-cluster "
             "fetch exited 3")
    if p.returncode != 0:
        raise SystemExit("FAIL: tools/kafka-cluster fetch exited %d: %s" % (p.returncode,
                                                                          p.stderr[-600:]))


class Cluster:
    """tools/kafka-cluster start ... stop, in a directory of its own."""

    running = []

    def __init__(self, work, nodes=1, topics=()):
        self.dir = os.path.join(work, "kafka")
        Cluster.running.append(self)
        os.makedirs(self.dir, exist_ok=True)
        args = [TOOL, "start", "--nodes", str(nodes), "--dir", self.dir]
        for t in topics:
            args += ["--topic", t]
        t0 = time.monotonic()
        # generous: kafka-cluster's own waits poll their conditions for up to 300 s each
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=900)
        if p.returncode == EXIT_MISSING:
            skip(p.stderr.strip().splitlines()[-1])
        if p.returncode != 0:
            self.stop()
            raise SystemExit("FAIL: tools/kafka-cluster start exited %d: %s" % (
                p.returncode, p.stderr[-800:]))
        self.addr = p.stdout.strip()
        self.nodes = nodes
        print("ok: a real Kafka cluster of %d node(s) at %s, up in %.1f s" % (
            nodes, self.addr, time.monotonic() - t0), flush=True)

    def _tool(self, *args, timeout=TIMEOUT):
        p = subprocess.run([TOOL] + list(args) + ["--dir", self.dir], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=timeout)
        if p.returncode != 0:
            raise SystemExit("FAIL: tools/kafka-cluster %s exited %d: %s" % (
                " ".join(args), p.returncode, p.stderr[-800:]))
        return p.stdout

    def topic(self, *specs):
        self._tool("topic", *specs)

    def kill_node(self, i):
        """SIGKILL node i; with others up, returns once they elected new leaders."""
        self._tool("kill-node", str(i), timeout=600)

    def start_node(self, i):
        """Starts node i again; returns once it is registered, back in sync and the
        coordinators answer."""
        self._tool("start-node", str(i), timeout=900)

    def stop(self, now=False):
        if self in Cluster.running:
            Cluster.running.remove(self)
        subprocess.run([TOOL, "stop", "--dir", self.dir] + (["--now"] if now else []),
                       stdout=subprocess.DEVNULL, timeout=120)

    # ---- reading a topic back, two clients ---------------------------------------------

    def kcat_values(self, topic, isolation):
        """Every value of topic, from its start to its end, as kcat reads it."""
        p = subprocess.run(["kcat", "-C", "-b", self.addr, "-t", topic, "-e", "-q",
                            "-X", "log_level=3", "-X", "isolation.level=" + isolation,
                            "-f", "%s\n"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=TIMEOUT)
        if p.returncode != 0:
            raise SystemExit("FAIL: kcat could not read topic '%s' (%s): %s" % (
                topic, isolation, p.stderr[-400:]))
        return [l for l in p.stdout.splitlines() if l.strip()]

    def java_values(self, topic, isolation):
        """The same, as Kafka's Java consumer reads it."""
        p = subprocess.run([TOOL, "consume", topic, "--isolation", isolation,
                            "--dir", self.dir], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
        if p.returncode != 0:
            raise SystemExit("FAIL: the Java consumer could not read topic '%s' (%s): %s" % (
                topic, isolation, p.stderr[-600:]))
        return [l for l in p.stdout.splitlines() if l.strip()]

    def produce(self, topic, lines, keyed=True):
        """kcat writes "key<TAB>value" lines (or values), waiting for the acknowledgements."""
        args = ["kcat", "-P", "-b", self.addr, "-t", topic, "-X", "log_level=3"]
        if keyed:
            args += ["-K", "\t"]
        subprocess.run(args, input="".join(l + "\n" for l in lines), text=True, check=True,
                       timeout=TIMEOUT)


class Feeder:
    """Writes ids 0, 1, 2, ... into a topic at a steady rate from a thread (kcat, keyed by
    id), until stop(): the input keeps arriving while jobs are killed, so kills land in
    transactions that hold rows. line(i) gives the message value of id i.

    The expected output is computed from what the topic holds in the end (input_ids()),
    not from the ids written: kcat (an idempotent producer, so a retried request writes
    nothing twice) still gives up for good on some errors of a broker going away (every
    broker down; an idempotence sequence it cannot repair on a loaded machine), and then
    what it had in flight may or may not have landed. The feeder says so and goes on with
    a new kcat. pause() waits until everything written is acknowledged; resume() goes on."""

    RESTARTS = 5

    def __init__(self, cluster, topic, line, rate=2000, chunk=50):
        self.cluster, self.topic, self.line = cluster, topic, line
        self.rate, self.chunk = rate, chunk
        self.n = 0
        self.error = None
        self.restarts = 0
        self.errpath = os.path.join(cluster.dir, "feeder-kcat.err")
        self.resume()

    def _kcat(self):
        self.errlog = open(self.errpath, "a")
        return subprocess.Popen(["kcat", "-P", "-b", self.cluster.addr, "-t", self.topic,
                                 "-K", "\t", "-X", "log_level=3", "-X", "linger.ms=5",
                                 "-X", "enable.idempotence=true"],
                                stdin=subprocess.PIPE, stderr=self.errlog, text=True)

    def resume(self):
        import threading
        self._stop = threading.Event()
        self.p = self._kcat()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        t0, n0 = time.monotonic(), self.n
        while not self._stop.is_set():
            try:
                self.p.stdin.write("".join("%d\t%s\n" % (i, self.line(i))
                                           for i in range(self.n, self.n + self.chunk)))
                self.p.stdin.flush()
            except OSError:
                if not self._restart():
                    return
            self.n += self.chunk
            # steady on average: sleep until the time this many ids are due
            self._stop.wait(max(0.0, t0 + (self.n - n0) / self.rate - time.monotonic()))

    def _finish_kcat(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        rc = self.p.wait(timeout=TIMEOUT)
        self.errlog.close()
        return rc

    def _restart(self):
        rc = self._finish_kcat()
        self.restarts += 1
        print("   feeder: kcat gave up at id %d (exit %d: %s); a new one goes on" % (
            self.n, rc, self.last_error()), flush=True)
        if self.restarts > self.RESTARTS:
            self.error = "kcat gave up %d times" % self.restarts
            return False
        self.p = self._kcat()
        return True

    def last_error(self):
        try:
            with open(self.errpath) as f:
                lines = [l.strip() for l in f if l.strip()]
            return lines[-1] if lines else "no message"
        except OSError:
            return "no message"

    def pause(self):
        """Stops writing and waits until kcat has every id acknowledged."""
        self._stop.set()
        self.t.join()
        rc = self._finish_kcat()
        if rc != 0:
            print("   feeder: kcat exited %d at the end (%s)" % (rc, self.last_error()))
        if self.error:
            raise SystemExit("FAIL: the feeder could not write the input: %s (%s)" % (
                self.error, self.last_error()))

    def stop(self):
        """pause(), for good; returns the count of ids written: 0 .. count-1."""
        self.pause()
        return self.n

    def close(self):
        """Stops writing, on a failure path: no waiting, no complaint. Idempotent."""
        self._stop.set()
        self.t.join()
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()

    def input_ids(self):
        """A Counter of the ids the topic holds, as kcat reads it back: what the job read.
        Says when it is not 0 .. n-1 each once (kcat gave up with requests in flight)."""
        out = subprocess.run(["kcat", "-C", "-b", self.cluster.addr, "-t", self.topic, "-e",
                              "-q", "-X", "log_level=3", "-f", "%k\n"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             timeout=TIMEOUT)
        if out.returncode != 0:
            raise SystemExit("FAIL: kcat could not read the input topic '%s': %s" % (
                self.topic, out.stderr[-400:]))
        ids = collections.Counter(int(l) for l in out.stdout.split())
        dup = sum(c - 1 for c in ids.values() if c > 1)
        missing = self.n - len(ids.keys() & range(self.n))
        if dup or missing:
            print("   input: %d records of %d ids written: %d written twice, %d never landed "
                  "(kcat gave up with them in flight); the expectation counts what is "
                  "there" % (sum(ids.values()), self.n, dup, missing))
        return ids


class Engine:
    """One `sluice run JOB --checkpoint-dir CK` process, its stderr kept in a file. Any
    still running when the test exits (a failure path) is killed then."""

    started = []

    def __init__(self, sluice, job, ck, log, shards=2, args=(), env=None):
        """args: more `sluice run` options (e.g. a state backend); env: the whole
        environment, when it differs from the test's (e.g. SLUICE_FAULT set)."""
        self.log = log
        self.err = open(log, "w")
        self.p = subprocess.Popen([sluice, "run", job, "--shards", str(shards),
                                   "--checkpoint-dir", ck] + list(args),
                                  stdout=subprocess.DEVNULL, stderr=self.err, env=env)
        Engine.started.append(self)

    @staticmethod
    def kill_leftovers():
        for e in Engine.started:
            if e.p.poll() is None:
                e.p.kill()
                e.p.wait()

    def alive(self):
        return self.p.poll() is None

    def kill(self, sig=9):
        if self.alive():
            self.p.send_signal(sig)
        if sig == 9:
            self.p.wait()
            self.err.close()

    def wait(self, timeout=TIMEOUT):
        rc = self.p.wait(timeout=timeout)
        self.err.close()
        return rc

    def stderr(self, n=1200):
        with open(self.log, errors="replace") as f:
            return f.read()[-n:]


def complete_checkpoints(ck):
    """Ids of the complete checkpoints in ck (chk-<n>/MANIFEST)."""
    try:
        names = os.listdir(ck)
    except OSError:
        return []
    return sorted(int(n[4:]) for n in names
                  if n.startswith("chk-") and n[4:].isdigit() and
                  os.path.exists(os.path.join(ck, n, "MANIFEST")))


def wait_checkpoint_after(ck, after, engine, timeout=60):
    """Waits until ck holds a complete checkpoint newer than `after`; returns its id, or
    None when the engine exited or the time ran out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ids = complete_checkpoints(ck)
        if ids and ids[-1] > after:
            return ids[-1]
        if not engine.alive():
            return None
        time.sleep(0.01)
    return None


def on_sigterm(sig, frame):
    """meson's timeout (SIGTERM, then soon SIGKILL): no JVM or engine may outlive the test
    (the nodes run in sessions of their own), so they are killed at once."""
    Engine.kill_leftovers()
    for c in list(Cluster.running):
        c.stop(now=True)
    print("FAIL: terminated (signal %d), the cluster and engines killed" % sig, flush=True)
    os._exit(1)


atexit.register(Engine.kill_leftovers)
signal.signal(signal.SIGTERM, on_sigterm)
