"""The local runner's worker processes (`--direct_running_mode=multi_processing`), watched.

Beam's FnApiRunner starts each worker as a subprocess and then waits for the worker's answers;
a worker that exits first (it could not import tokfx, it was killed) never answers, and the run
waited for ever. Here a worker's exit with an error answers every instruction sent to it, and
every one sent after, with that error, so the run stops with it (WORKER_EXITED in its text)."""
from __future__ import annotations

import threading

from apache_beam.portability.api import beam_fn_api_pb2
from apache_beam.runners.portability import local_job_service
from apache_beam.runners.portability.fn_api_runner import worker_handlers

# The environment whose workers are watched (beam_jobs.options gives the pipeline's its URN); its
# payload, as for Beam's own subprocess environment, is the worker's command line.
URN = "tokfx:env:watched_subprocess:v1"
WORKER_EXITED = "a worker process exited"
# The exit status of a worker stopped by Ctrl-C or SIGTERM (by the signal, or as the shell that
# starts it says): the launcher got the signal too and stops the run as for any interrupt.
_SIGNALLED = ("-2", "-15", "130", "143")


def _answer(future, error: str) -> None:
    future.set(beam_fn_api_pb2.InstructionResponse(instruction_id=future.instruction_id, error=error))


class _Watched:
    """A worker's control connection, which answers with `error` once the worker has exited."""

    def __init__(self, connection):
        self._connection, self._error = connection, None

    def push(self, request):
        future = self._connection.push(request)
        if self._error is not None and future is not None:
            _answer(future, self._error)
        return future

    def exited(self, error: str) -> None:
        self._error = error
        for future in list(self._connection._futures_by_id.values()):  # the unanswered ones
            _answer(future, error)

    def __getattr__(self, name):
        return getattr(self._connection, name)


@worker_handlers.WorkerHandler.register_environment(URN, bytes)
class WatchedWorkerHandler(worker_handlers.SubprocessSdkWorkerHandler):
    def __init__(self, *args):
        super().__init__(*args)
        self.control_conn = _Watched(self.control_conn)

    def start_worker(self):
        worker = local_job_service.SubprocessSdkWorker(self._worker_command_line, self.control_address,
                                                       self.provision_info, self.worker_id)
        self.worker_thread = threading.Thread(name="run_worker", target=self._run, args=(worker,))
        self.worker_thread.start()

    def _run(self, worker) -> None:
        try:
            worker.run()
        except RuntimeError as exc:  # Beam's "Worker subprocess exited with return code N"
            status = str(exc).rsplit(" ", 1)[-1]
            if status not in _SIGNALLED:
                self.control_conn.exited(f"{WORKER_EXITED} with status {status} before the run ended"
                                         " (its own error, if it wrote one, is above)")
