"""Timing shared by the benches that take a --runs count."""
import statistics
import time


def median_seconds(run, runs: int) -> float:
    """The median wall time of `runs` calls of `run()`."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
