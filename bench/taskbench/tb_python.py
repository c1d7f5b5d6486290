"""tb_python.py - Task Bench's trivial and no_comm shapes on Python's
multiprocessing.Pool(2), the process pool rtask is measured against: the
same kernel (in Python), the same sweep and METG(50 %) as tb.c, printed
as "TB|..." and "METG|..." lines."""
import multiprocessing
import sys
import time


def kernel(iters, seed):
    a = [seed + j for j in range(8)]
    for _ in range(iters):
        for j in range(8):
            a[j] = a[j] * 0.999999 + 0.000001
    return sum(a)


def task(args):
    iters, seed = args
    return kernel(iters, seed)


def run_trivial(pool, width, steps, iters):
    start = time.perf_counter()
    pending = [pool.apply_async(task, ((iters, 0.0),)) for _ in range(width * steps)]
    for p in pending:
        p.get()  # every task, not only the last
    return time.perf_counter() - start


def run_no_comm(pool, width, steps, iters):
    start = time.perf_counter()
    outs = [0.0] * width
    for _ in range(steps):
        pending = [pool.apply_async(task, ((iters, outs[i] * 1e-9),)) for i in range(width)]
        outs = [p.get() for p in pending]
    return time.perf_counter() - start


def iteration_seconds():
    best = 1e9
    for r in range(3):
        start = time.perf_counter()
        kernel(1 << 14, r)
        best = min(best, (time.perf_counter() - start) / (1 << 14))
    return best


REPS = 3  # runs of each point: their median counts, as tb.c's


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    width = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    cores = 2
    # Its kernel is Python's, not C's: its peak is its own.
    per_iter = iteration_seconds()
    with multiprocessing.Pool(cores) as pool:
        for name, run in (("trivial", run_trivial), ("no_comm", run_no_comm)):
            metg, above = -1.0, None
            iters = 1 << 12
            while iters >= 1:
                took = sorted(run(pool, width, steps, iters) for _ in range(REPS))
                work = width * steps * iters * per_iter / cores
                efficiency = work / took[REPS // 2]
                granularity = took[REPS // 2] * cores / (width * steps)
                print(f"TB|Python Pool(2)|{name}|{width}|{iters}|{efficiency:.3f}|"
                      f"{granularity * 1e6:.3f}|{work / took[-1]:.3f}|{work / took[0]:.3f}|"
                      f"{iters * per_iter * 1e6:.3f}", flush=True)
                if efficiency >= 0.5:
                    above = (efficiency, granularity)
                    metg = granularity * 1e6
                    iters //= 2
                    continue
                if above:  # interpolated to 50 %, as tb.c does
                    e, g = above
                    metg = 1e6 * (g + (0.5 - e) * (granularity - g) / (efficiency - e))
                break
            print(f"METG|Python Pool(2)|{name}|{width}|{metg:.3f}", flush=True)


if __name__ == "__main__":
    main()
