"""Spark as one of the run engine's executors: an embedded, quiet session (or the one spark-submit
made), a master checked before Spark starts, the project shipped to the executors, and a stop
that leaves no JVM behind.

Every checker that runs on Spark (the simulation campaign, broker and client conformance
campaigns, the exhaustive explorer) starts and stops it through this module.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from properties.engine.errors import RunError

ROOT = Path(__file__).resolve().parents[2]

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n%ex
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
"""


_SHIPPED: set = set()


def java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return True
    return shutil.which("java") is not None


def is_local(master: str | None) -> bool:
    return master is None or master.startswith("local")


_LOOPBACK = ("localhost", "::1", "[::1]")


def standalone_masters(master: str | None) -> list:
    """[(host, port)] of a standalone master URL (``spark://h1:7077[,h2:7077]``), else []."""
    if not master or not master.startswith("spark://"):
        return []
    out = []
    for part in master[len("spark://"):].split(","):
        host, _, port = part.strip().rpartition(":")
        if not host or not port.isdigit():
            raise RunError(f"--master {master}: not a Spark master URL (spark://HOST:PORT)")
        out.append((host.strip("[]"), int(port)))
    return out


def is_loopback(host: str) -> bool:
    return host in _LOOPBACK or host.startswith("127.")


def check_master(master: str | None, timeout: float = 3.0) -> None:
    """A standalone master must accept a TCP connection (within *timeout* seconds) before Spark is
    started: otherwise Spark retries for about 70 s and then reports only "All masters are
    unresponsive" in its log. RunError (one line) when none of the URL's masters answers."""
    import socket

    reasons = []
    for host, port in standalone_masters(master):
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except socket.timeout:
            reasons.append(f"{host}:{port}: no answer within {timeout:g} s")
        except OSError as e:
            reasons.append(f"{host}:{port}: {e.strerror or e}")
    if reasons:
        raise RunError(f"--master {master}: no Spark master reachable ({'; '.join(reasons)})")


def with_retries(master: str, max_failures: int = 4) -> str:
    """``local`` / ``local[N]`` / ``local[*]`` → ``local[N,max_failures]`` (Spark's local mode
    fails a job at the first task failure otherwise); other masters unchanged."""
    if master == "local":
        return f"local[1,{max_failures}]"
    m = re.fullmatch(r"local\[(\*|\d+)\]", master)
    if m:
        return f"local[{m.group(1)},{max_failures}]"
    return master


def project_zip(directory: str) -> str:
    """The project's own packages as a zip for ``addPyFile`` (executors on other machines)."""
    path = os.path.join(directory, "groupcheck-project.zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for package in ("model", "impl", "properties"):
            for f in sorted((ROOT / package).rglob("*.py")):
                z.write(f, f.relative_to(ROOT).as_posix())
    return path


def start_spark(master: str | None, app: str = "groupcheck-campaign", max_failures: int = 4, extra_conf: dict | None = None,
                log_path: str | None = None):
    """An embedded, quiet Spark session: log level error, no UI, no console progress bar, loopback
    for local masters, task retries. *master* None = whatever spark-submit configured.
    *log_path*: where the JVM's (and its Python workers') stderr goes — the JVM prints a few lines
    at start-up that no log configuration silences, and a worker that dies prints its stack there."""
    if not java_available():
        raise RunError("Java not found: Spark needs a Java runtime (17); install one "
                            "(apt-get install openjdk-17-jre-headless) or set JAVA_HOME")
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise RunError("pyspark is not installed (pip install -e . installs it)") from None
    resolved = master if master is not None else submitted_master()  # under spark-submit: the one it was given
    check_master(resolved)
    conf_dir = tempfile.mkdtemp(prefix="groupcheck-spark-conf-")
    Path(conf_dir, "log4j2.properties").write_text(_LOG4J)
    os.environ["SPARK_CONF_DIR"] = conf_dir
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    local = is_local(resolved)
    if local:
        os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
        # local workers are processes on this machine: let them import the project from its source
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if str(ROOT) not in paths:
            os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + paths)
    builder = SparkSession.builder.appName(app)
    if master is not None:
        builder = builder.master(with_retries(master, max_failures))
    conf = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.task.maxFailures": str(max_failures),
        "spark.python.worker.reuse": "true",
        "spark.executorEnv.PYTHONHASHSEED": "0",
    }
    masters = standalone_masters(resolved)
    if masters and all(is_loopback(host) for host, _ in masters):
        # a cluster on this machine: executors reach the driver on loopback (not on whatever
        # address the host name resolves to)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        conf.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
    if local:
        conf.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
                     # the JVM only schedules and relays here: C1-only JIT and the serial GC halve its
                     # CPU (start-up 14 -> 8 CPU-s, during a job ~25 % -> ~8 % of a core), which the
                     # Python workers get instead on a 2-core machine
                     "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"})
    conf.update(extra_conf or {})
    for k, v in conf.items():
        builder = builder.config(k, v)
    saved = None
    if log_path is not None:
        sys.stderr.flush()
        saved = os.dup(2)
        fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 2)  # inherited by the JVM that getOrCreate launches
        os.close(fd)
    try:
        spark = builder.getOrCreate()
    except Exception as e:  # the JVM did not start: say so in one line
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise RunError(f"Spark did not start: {first}" + (f" (see {log_path})" if log_path else "")) from None
    finally:
        if saved is not None:
            os.dup2(saved, 2)
            os.close(saved)
    spark.sparkContext.setLogLevel("ERROR")
    # ship the project's own code: executors (local workers, or another machine's) need only Python
    # and the declared dependencies, whatever the working directory or installation
    sc = spark.sparkContext
    if sc.applicationId not in _SHIPPED:  # once per application (getOrCreate may return a running one)
        sc.addPyFile(project_zip(conf_dir))
        _SHIPPED.add(sc.applicationId)
    return spark


def submitted_master() -> str | None:
    """The master spark-submit was given (None when not under spark-submit)."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return None
    try:
        from pyspark import SparkConf, SparkContext

        SparkContext._ensure_initialized()
        return SparkConf().get("spark.master", None)
    except Exception:
        return None


def current_gateway():
    """pyspark's gateway to the JVM in this process (None: none yet)."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return None
    return SparkContext._gateway


def stop_spark(spark, stop_jvm: bool = False) -> None:
    """Stop the session (if any) and, with *stop_jvm* (this campaign launched Spark's JVM), the
    JVM too, waiting for it to exit, so that nothing of Spark outlives the campaign. Quiet when the
    JVM is already gone (SIGTERM to the whole process group)."""
    import warnings

    from pyspark import SparkContext

    if spark is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                spark.stop()
            except Exception:
                pass
    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)  # None under spark-submit: its JVM is our parent
    if not stop_jvm or proc is None:
        return
    try:
        gateway.shutdown()
    except Exception:
        pass
    try:
        if proc.stdin is not None:
            proc.stdin.close()  # the gateway JVM exits when its stdin closes
        proc.wait(timeout=15)
    except Exception:
        proc.kill()
        proc.wait()
    SparkContext._gateway = None  # a later session in this process starts a new JVM
    SparkContext._jvm = None
    _SHIPPED.clear()


@contextlib.contextmanager
def driver_log(path):
    """Python-side messages of Spark's driver go to *path* (spark.log) while the campaign runs, not
    to the terminal: py4j reports a lost JVM with ``logging.exception`` on the root logger (which
    would otherwise configure itself to print on stderr), and pyspark's accumulator server prints a
    traceback when the JVM's connection to it ends. Both happen when SIGTERM reaches the whole
    process group and the JVM exits first."""
    handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter("python: %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        handler.close()


def quiet_accumulator_server(sc) -> None:
    """pyspark's accumulator server (a socketserver in this process) prints a traceback on stderr
    when the JVM's connection ends abruptly; log it instead (see :func:`driver_log`)."""
    server = getattr(sc, "_accumulatorServer", None)
    if server is not None:
        server.handle_error = lambda request, address: logging.getLogger("pyspark.accumulators").info(
            "connection from the JVM ended", exc_info=True)


def _active_session():
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    return SparkSession.getActiveSession()


def executor_count(sc) -> int:
    if is_local(sc.master):
        return 1
    try:
        return max(1, sc._jsc.sc().getExecutorMemoryStatus().size() - 1)
    except Exception:
        return 0




@contextlib.contextmanager
def started(master: str | None, log_path, interrupts=None, app: str = "groupcheck-campaign"):
    """Spark for one run: started quietly on *master* (None: spark-submit's), the JVM's and
    Spark's Python-side output in *log_path* (``spark.log``), the run's SIGINT handler put back
    (the SparkContext installs its own), and stopped at the end with its JVM when this run launched
    it; a session someone else started (tests, spark-submit) stays up."""
    print(f"groupcheck: starting Spark ({master or 'from spark-submit'})...", file=sys.stderr, flush=True)
    owned = _active_session() is None
    jvm_before = current_gateway()
    spark = None
    with driver_log(log_path):
        try:
            spark = start_spark(master, app=app, log_path=str(log_path))
            if interrupts is not None:
                interrupts.install()
            quiet_accumulator_server(spark.sparkContext)
            yield spark
        finally:
            if owned:
                held = interrupts.held(release=False) if interrupts is not None else contextlib.nullcontext()
                with held:
                    gateway = current_gateway()
                    stop_spark(spark, stop_jvm=gateway is not None and gateway is not jvm_before)


@contextlib.contextmanager
def executor(local: bool, master: str | None, log_path, interrupts=None, app: str = "groupcheck-campaign",
             in_flight: int | None = None, description: str = "groupcheck seeds"):
    """The run's executor for ``--local`` (this process, one task after the other) or ``--master``
    (Spark, :func:`started` around it)."""
    from properties.engine.run import InProcess, Spark

    if local:
        yield InProcess()
        return
    with started(master, log_path, interrupts, app=app) as spark:
        yield Spark(spark, in_flight, description)


def run_schedules(args, work, tally, interrupts, out, app: str, what: str, task_size: int, failures: str):
    """A campaign of conformance schedules (``--system broker:NAME`` or ``client:NAME``): seeds
    ``--seed-start`` on, ``--interleavings`` of them, in tasks of ``--task-size`` (default
    *task_size*), run with *work* in this process (``--local``) or on Spark (``--master``; the JVM's
    output in ``out/spark.log``, the folder made first), merged into *tally*, with a progress line
    that calls a failing schedule *failures*. Returns (the engine's outcome, where it ran, the task
    size)."""
    from properties.engine import run as engine
    from properties.progress import Progress

    os.makedirs(out, exist_ok=True)
    size = args.task_size or task_size
    progress = Progress(args.interleavings, unit="schedules", failures=failures)
    with executor(args.local, args.master, os.path.join(out, "spark.log"), interrupts, app=app,
                  description=f"{app} schedules") as where:
        if not args.local:
            print(f"groupcheck: {args.interleavings:,} schedules {what} in tasks of {size} on {where.name} "
                  f"({where.cores} at once)", file=sys.stderr, flush=True)
        outcome = engine.run(engine.task_ranges(args.seed_start, args.interleavings, size), work, tally, where,
                             progress, interrupts)
    with interrupts.held(release=False):
        progress(tally.done, tally.failed, final=True)
    return outcome, where.name, size
