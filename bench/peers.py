#!/usr/bin/env python3
"""peers.py - the same no-op work done by Python's process pools.

Two workers, a module-level no-op task, pools warmed up before timing.
Prints one line per figure: PEER|name|unit|median
"""
import concurrent.futures as cf
import multiprocessing as mp
import statistics
import sys
import time


def noop(*_):
    return None


def median_of(reps, fn):
    return statistics.median(fn() for _ in range(reps))


def rate(n, fn):
    start = time.perf_counter()
    fn()
    return n / (time.perf_counter() - start)


def per_call_us(n, fn):
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    reps = 5
    out = []
    with mp.get_context("fork").Pool(2) as pool:
        pool.map(noop, range(8), chunksize=1)
        out.append(("Pool.map chunksize=1", "tasks/s",
                    median_of(reps, lambda: rate(n, lambda: pool.map(noop, range(n), chunksize=1)))))
        out.append(("Pool.apply (sync)", "us/task",
                    median_of(reps, lambda: per_call_us(n // 10, lambda: pool.apply(noop)))))
    with cf.ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as ex:
        cf.wait([ex.submit(noop) for _ in range(8)])
        out.append(("ProcessPoolExecutor submit all", "tasks/s",
                    median_of(reps, lambda: rate(n, lambda: cf.wait([ex.submit(noop) for _ in range(n)])))))
        out.append(("ProcessPoolExecutor submit+result", "us/task",
                    median_of(reps, lambda: per_call_us(n // 10, lambda: ex.submit(noop).result()))))
    with mp.get_context("fork").Pool(2, maxtasksperchild=1) as pool:
        m = 200
        out.append(("Pool maxtasksperchild=1", "us/task",
                    median_of(reps, lambda: 1e6 / rate(m, lambda: pool.map(noop, range(m), chunksize=1)))))
    for name, unit, value in out:
        print(f"PEER|{name}|{unit}|{value:.6g}", flush=True)


if __name__ == "__main__":
    main()
