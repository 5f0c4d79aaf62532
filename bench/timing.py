"""Timing shared by the benches that take a --runs count."""
import statistics
import time


def median_seconds(run, runs: int, clock=time.perf_counter) -> float:
    """The median time of `runs` calls of `run()`: wall time, or the time of another `clock`
    (time.process_time: this process's CPU time)."""
    times = []
    for _ in range(runs):
        start = clock()
        run()
        times.append(clock() - start)
    return statistics.median(times)
