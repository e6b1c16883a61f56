"""The run engine every checker shares (issue 34): seed ranges → tasks → in this process, a pool
of threads, or Spark (embedded or any master) → an order-independent merge → one interrupt policy
and no child process left behind.

* :mod:`properties.engine.run` — :func:`~properties.engine.run.run`, the executors
  (:class:`~properties.engine.run.InProcess`, :class:`~properties.engine.run.Threads`,
  :class:`~properties.engine.run.Spark`), :class:`~properties.engine.run.Outcome` and
  :func:`~properties.engine.run.session`;
* :mod:`properties.engine.interrupts` — SIGINT and SIGTERM as an exception in the main thread,
  held off while a finished task is merged or a report written;
* :mod:`properties.engine.children` — every child process a run starts, ended when it ends;
* :mod:`properties.engine.spark` — starting and stopping Spark quietly, on any master;
* :mod:`properties.engine.errors` — :class:`~properties.engine.errors.RunError`, one line, exit 2.

The hang watchdog lives with the systems it guards (:mod:`properties.systems.watchdog`) and works
in every executor: in this thread, a pool's threads and a Spark worker alike.
"""
