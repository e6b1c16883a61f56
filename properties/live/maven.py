"""A pom's runtime dependencies from Maven Central, resolved once into a cache folder.

:func:`resolve` runs ``mvn dependency:copy-dependencies -DincludeScope=runtime`` on a pom (with
``-DNAME=VALUE`` properties: the version, a profile) into ``CACHE/FOLDER/lib``, where CACHE is
``$GROUPCHECK_CACHE``, else ``~/.cache/groupcheck``, and never again for that folder: a second
call needs neither Maven nor the network (Maven's own ``~/.m2`` keeps the downloads). The jars go
to a staging folder renamed into place once Maven succeeded and the expected artifact is there, so
a run stopped mid-download leaves no half folder; a lock file makes processes that ask at the same
time (a conformance run's consumers, two brokers started at once) wait for one resolution instead
of racing. Maven runs as a child of :mod:`properties.engine.children`, so a SIGTERM to the run stops
it too. Missing ``mvn`` or ``java``, a failed resolution, or one that takes longer than
:data:`RESOLVE_TIMEOUT_S` is one line (:class:`properties.errors.UsageError`).

Used for Kafka's broker (:mod:`properties.live.kafka`, ``java/kafka/pom.xml``) and Kafka's consumer
(:mod:`properties.clients.runners.java`, ``java/consumer/pom.xml``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile
from typing import Callable, Iterator, Mapping

from properties.engine import children
from properties.errors import UsageError

RESOLVE_TIMEOUT_S = 900.0
DONE = ".resolved"  # the marker of a finished folder (written last, inside the staging folder)


def cache_dir() -> str:
    """Where resolved jars (and anything else built once) are kept."""
    return os.environ.get("GROUPCHECK_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "groupcheck")


def require(program: str, who: str) -> str:
    """The path of *program* (``java`` or ``mvn``); UsageError saying *who* needs it otherwise."""
    path = shutil.which(program)
    if path is None:
        need = "Java 17 or later (java on PATH)" if program == "java" else "Maven (mvn on PATH)"
        raise UsageError(f"{who} needs {need}: {program} was not found")
    return path


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    """An exclusive lock on the file *path* (made if missing) while the block runs."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def once(folder: str, build: Callable[[str], None]) -> str:
    """``CACHE/folder``, filled by ``build(staging)`` the first time and kept: *build* fills an
    empty staging folder (raising to give up: nothing is kept), which is then renamed into place
    with its :data:`DONE` marker. One process builds at a time; the others find it done."""
    target = os.path.join(cache_dir(), folder)
    if os.path.exists(os.path.join(target, DONE)):
        return target
    parent = os.path.dirname(target)
    with _locked(target + ".lock"):
        if os.path.exists(os.path.join(target, DONE)):
            return target  # another process made it while this one waited
        staging = tempfile.mkdtemp(prefix=os.path.basename(folder) + "-", dir=_made(parent))
        try:
            build(staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        open(os.path.join(staging, DONE), "w").close()
        shutil.rmtree(target, ignore_errors=True)
        os.rename(staging, target)  # whole or not at all
    return target


def resolve(pom: str, folder: str, artifact: str, properties: Mapping[str, str], who: str) -> str:
    """The folder ``CACHE/folder/lib`` of *pom*'s runtime dependencies with ``-DNAME=VALUE``
    *properties*, resolved from Maven Central the first time (offline after). *artifact*
    (``group:name:version``) must be among the jars; *who* names what needs them in the one-line
    errors (``Kafka``)."""
    group, name, version = artifact.split(":")
    label = f"{who} {version}"

    def build(staging: str) -> None:
        mvn = require("mvn", who)
        require("java", who)
        args = [mvn, "-B", "-q", "-f", pom, *(f"-D{k}={v}" for k, v in properties.items()),
                "dependency:copy-dependencies", "-DincludeScope=runtime", f"-DoutputDirectory={staging}"]
        process = children.popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True)
        try:
            output, _ = process.communicate(timeout=RESOLVE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise UsageError(f"{label}: Maven did not resolve it within {RESOLVE_TIMEOUT_S:.0f} s") from None
        if process.returncode != 0 or not any(f.startswith(f"{name}-") for f in os.listdir(staging)):
            errors = [line for line in output.splitlines() if "ERROR" in line] or output.strip().splitlines()
            raise UsageError(f"{label}: Maven could not resolve {artifact} from {pom}: "
                             f"{(errors or ['no output'])[0].strip()[:400]}")

    return once(os.path.join(folder, "lib"), build)


def _made(path: str) -> str:
    os.makedirs(path, exist_ok=True)
    return path
