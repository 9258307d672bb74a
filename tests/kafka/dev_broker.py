"""The development broker (tools/kafka_broker.c) for the end-to-end Kafka tests: started
with its fault-command channel (stdin) open, stopped with SIGTERM. Imported by the tests
beside it (their directory is the first entry of sys.path)."""

import subprocess


class Broker:
    """sluice-kafka-broker with its command channel (stdin) open."""

    def __init__(self, exe, topics, nbrokers=2):
        args = [exe, "--brokers", str(nbrokers)]
        for t in topics:
            args += ["--topic", t]
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        self.addr = self.p.stdout.readline().strip()
        if not self.addr.startswith("127.0.0.1:"):
            self.stop()
            raise SystemExit("FAIL: the broker printed %r, not a bootstrap list" % self.addr)

    def command(self, line):
        """Sends one fault command and waits for the broker's `ok <command>`."""
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        answer = self.p.stdout.readline().strip()
        if answer != "ok " + line:
            raise SystemExit("FAIL: broker command %r answered %r" % (line, answer))

    def stop(self):
        self.p.terminate()
        self.p.wait(timeout=10)
