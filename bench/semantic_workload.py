"""A semantic workload at realistic selectivity, and its benchmark (not a test).

Shape (``write``):

- **Ontology** (``ontology.owl``, RDF/XML): 300 classes in a random tree under ``C0``
  (each class's parent drawn among the earlier ones, so depth ~4-6), 100 object
  properties (60% under an earlier property), 10 ``owl:inverseOf`` pairs, 2 equivalent
  classes, 20 datatype properties: about 430 terms.
- **Events** (``events/*.nt``, N-Triples, ~16 triples): 4 nodes drawn from 3,000, each
  typed by a random class of the lower half of the tree and carrying one integer value
  (0-99) of one of 10 integer properties; 6 object links between them and 2 string values.
- **Subscriptions** (``subscriptions/*.rq``, 1-4 patterns, most with FILTERs), templates in
  equal parts: a typed node with a numeric range; a link to a typed node; a link whose
  target has a value below a bound; a typed node linked to a typed node with a value in a
  range; a link to a constant node; a value equal to a constant; a string value containing
  a word. ``--selectivity`` scales the classes' and filters' breadth so that about that share
  of the subscriptions match each event (0.01: ~1,200 of 100k); below 0.005 the classes and
  properties are leaves of their trees and the words two-word phrases (0.001: ~100).

Benchmark (``run``): registration/s, index bytes per subscription, counts-only events/s
and p50/p99 per event in process (CPU time, one event per call, after a first one; the
closure excluded), the CPU of ``semps match``'s processes per event,
``semps match --workers 1`` and ``2`` events/s (its output written to a file whose size is
sampled as it grows, the rate taken between 10% and 90% of it: start-up, registration and
shutdown excluded), and
the naive method (closure + every subscription as a SPARQL query in pyoxigraph over each
event, on a sample, extrapolated).

    .venv/bin/python bench/semantic_workload.py write DIR [--subs 100000] [--events 1000]
        [--selectivity 0.01]
    .venv/bin/python bench/semantic_workload.py run DIR [--cli] [--naive] [--repo PATH]
    .venv/bin/python bench/semantic_workload.py compare DIR --repo PATH [--rounds 4]
        [--workers 2 | --paired]
    .venv/bin/python bench/semantic_workload.py memory [--subs 1000000] [--selectivity 0.01]
"""

from __future__ import annotations

import gc
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

from _common import workload_commands
from _machine import stamp, tree_cpu  # bench/ is on the path: this file runs as a script
from _results import record
from _shapes import SHAPES, Vocabulary

from semps.ontology.closure import close

#: This checkout (the ``compare`` runs without ``--repo`` run its ``semps``).
HERE = Path(__file__).resolve().parents[1]
EX = "http://bench.example/w#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
XSD = "http://www.w3.org/2001/XMLSchema#"
N_CLASSES, N_PROPS, N_INT, N_STR, N_NODES = 300, 100, 10, 10, 3000
WORDS = ["red", "green", "blue", "gold", "iron", "salt", "oak", "ash", "elm", "fir"]


def tree(rng: random.Random, n: int) -> list[int]:
    """Parents of a random tree over ``0..n-1`` (0 is the root)."""
    return [-1] + [rng.randrange(max(1, i // 2), i) if i > 2 else 0 for i in range(1, n)]


def ontology_xml(rng: random.Random) -> tuple[str, list[int], list[int]]:
    classes, props = tree(rng, N_CLASSES), tree(rng, N_PROPS)
    out = [
        '<?xml version="1.0" encoding="utf-8"?>',
        f'<rdf:RDF xmlns:rdf="{RDF}" xmlns:rdfs="{RDFS}" xmlns:owl="{OWL}">',
    ]
    for i, parent in enumerate(classes):
        sup = f'<rdfs:subClassOf rdf:resource="{EX}C{parent}"/>' if parent >= 0 else ""
        out.append(f'<owl:Class rdf:about="{EX}C{i}">{sup}</owl:Class>')
    for i, parent in enumerate(props):
        sup = ""
        if parent >= 0 and rng.random() < 0.6:
            sup = f'<rdfs:subPropertyOf rdf:resource="{EX}p{parent}"/>'
        if i % 10 == 5:
            sup += f'<owl:inverseOf rdf:resource="{EX}inv{i}"/>'
        out.append(f'<owl:ObjectProperty rdf:about="{EX}p{i}">{sup}</owl:ObjectProperty>')
    for i in range(N_INT):
        out.append(f'<owl:DatatypeProperty rdf:about="{EX}d{i}"/>')
    for i in range(N_STR):
        out.append(f'<owl:DatatypeProperty rdf:about="{EX}s{i}"/>')
    for alias, cls in (("Alias1", 7), ("Alias2", 19)):
        out.append(
            f'<owl:Class rdf:about="{EX}{alias}">'
            f'<owl:equivalentClass rdf:resource="{EX}C{cls}"/></owl:Class>'
        )
    out.append("</rdf:RDF>")
    return "\n".join(out) + "\n", classes, props


def event_nt(rng: random.Random) -> str:
    nodes = [f"{EX}n{rng.randrange(N_NODES)}" for _ in range(4)]
    lines = []
    for node in nodes:
        lines.append(f"<{node}> <{RDF}type> <{EX}C{rng.randrange(N_CLASSES // 2, N_CLASSES)}> .")
        value = rng.randrange(100)
        lines.append(f'<{node}> <{EX}d{rng.randrange(N_INT)}> "{value}"^^<{XSD}integer> .')
    links = set()
    while len(links) < 6:
        a, b = rng.sample(nodes, 2)
        links.add(f"<{a}> <{EX}p{rng.randrange(N_PROPS // 3, N_PROPS)}> <{b}> .")
    lines += sorted(links)
    for node in rng.sample(nodes, 2):
        words = " ".join(rng.sample(WORDS, 3))
        lines.append(f'<{node}> <{EX}s{rng.randrange(N_STR)}> "{words}" .')
    return "\n".join(lines) + "\n"


def subscription(rng: random.Random, v: Vocabulary, width: int, phrase: bool = False) -> str:
    """One subscription of 1-4 patterns; ``width`` (0-100) is how wide its value filters are."""
    d = f"<{EX}d{rng.randrange(N_INT)}>"
    lo = rng.randrange(100)
    hi = lo + width
    kind = rng.randrange(7)
    if kind == 0:
        body = f"?x a {v.cls()} . ?x {d} ?v FILTER(?v >= {lo} && ?v < {hi})"
    elif kind == 1:
        body = f"?x {v.prop()} ?y . ?y a {v.cls()}"
    elif kind == 2:
        body = f"?x {v.prop()} ?y . ?y {d} ?v FILTER(?v < {width // 2})"
    elif kind == 3:
        body = (
            f"?x a {v.cls()} . ?x {v.prop()} ?y . ?y a {v.cls()} . ?y {d} ?v "
            f"FILTER(?v > {lo} || ?v < {width // 2})"
        )
    elif kind == 4:
        body = f"?x {v.prop()} <{EX}n{rng.randrange(N_NODES)}>"
    elif kind == 5:
        body = f"?x {d} ?v FILTER(?v = {rng.randrange(100)})"
    else:
        word = " ".join(rng.sample(WORDS, 2)) if phrase else rng.choice(WORDS)
        body = f'?x <{EX}s{rng.randrange(N_STR)}> ?s FILTER(contains(?s, "{word}"))'
    head = "SELECT DISTINCT ?x" if rng.random() < 0.2 else "SELECT *"
    return f"{head} WHERE {{ {body} }}\n"


def write(
    folder: Path, subs: int, events: int, selectivity: float, seed: int = 1, shape: str = "bench"
) -> None:
    rng = random.Random(seed)
    xml, classes, props = ontology_xml(rng)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ontology.owl").write_text(xml)
    if shape != "bench":  # bench/_shapes.py: the users' shape and others
        from _shapes import write_shape

        write_shape(folder, rng, shape, classes, props, subs, events, selectivity)
        return
    # Calibrated by hand: broad picks and wide filters raise the share that matches.
    # Below 0.5%: no broad picks, leaf classes and properties, two-word phrases.
    narrow = selectivity < 0.005
    broad = 0.0 if narrow else min(1.0, 0.05 + 8 * selectivity)
    width = max(2, min(100, int(selectivity * 3000)))
    vocabulary = Vocabulary(rng, classes, props, broad, leaves=narrow)
    sub_dir, event_dir = folder / "subscriptions", folder / "events"
    sub_dir.mkdir(exist_ok=True)
    event_dir.mkdir(exist_ok=True)
    for i in range(subs):
        (sub_dir / f"s{i:06}.rq").write_text(subscription(rng, vocabulary, width, narrow))
    for i in range(events):
        (event_dir / f"e{i:05}.nt").write_text(event_nt(rng))


def _load(folder: Path):  # type: ignore[no-untyped-def]
    from semps.cli.match import event_files, load_subscriptions
    from semps.ingest.rdf import read_events
    from semps.ontology import load_expansion

    expansion = load_expansion(folder / "ontology.owl")
    subs = load_subscriptions(folder / "subscriptions")
    events = list(read_events(event_files(folder / "events"), None))
    return expansion, subs, events


def in_process(folder: Path) -> dict[str, float]:
    from semps.matcher.base import MatchContext
    from semps.matcher.semantic import SemanticMatcher

    expansion, subs, events = _load(folder)
    matcher = SemanticMatcher()
    t0 = time.perf_counter()
    for sub in subs:
        matcher.add(sub)
    reg = time.perf_counter() - t0
    reg_cli = float("nan")
    try:  # as semps match registers (the cyclic GC off meanwhile), where it does
        from semps.cli.match import build_matcher

        t0 = time.perf_counter()
        build_matcher(subs, 1)
        reg_cli = time.perf_counter() - t0
    except ImportError:
        pass
    tracemalloc.start()
    again = SemanticMatcher()
    for sub in subs:
        again.add(sub)
    mem = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del again
    gc.collect()
    gc.freeze()
    contexts = [MatchContext(e, expansion) for e in events]
    for c in contexts:
        c.parts  # noqa: B018 - the closure is timed apart
    matcher.count_batch(contexts[:1])  # compiled kernels loaded (or compiled)
    lat, matches, solutions = [], 0, 0
    wall = time.perf_counter()
    for c in contexts:
        t = time.process_time()  # CPU time: the machine may be shared
        (counts,) = matcher.count_batch([c])
        lat.append(time.process_time() - t)
        matches += len(counts)
        solutions += sum(counts.values())
    lat.sort()
    n = len(events)
    return {
        "subs": len(subs),
        "reg_per_s": len(subs) / reg,
        "reg_per_s_as_cli": len(subs) / reg_cli,
        "bytes_per_sub": mem / len(subs),
        "events_per_cpu_s": n / sum(lat),
        "events_per_wall_s": n / (time.perf_counter() - wall),
        "p50_cpu_ms": 1000 * lat[n // 2],
        "p99_cpu_ms": 1000 * lat[max(0, int(n * 0.99) - 1)],
        "matches_per_event": matches / n,
        "solutions_per_event": solutions / n,
    }


def cli(folder: Path, workers: int, repo: Path | None) -> dict[str, float]:
    """Events/s of ``semps match`` with its output written to a file, as one would keep
    bulk answers: the file's size is sampled every 10 ms and the rate taken between 10% and
    90% of the output (start-up, ontology, registration and shutdown excluded); the CPU
    time of its processes (the parent and the workers, read from ``/proc`` at each sample)
    over the same stretch, per event: on a shared machine the figure that depends least on
    what else runs, and 2 cores / it is the rate the machine allows; plus the whole run's
    time. A run on the first event alone goes first (it compiles the kernels when their
    cache is cold). (Reading the output through a pipe instead understates a 2-worker run
    at ~4 KB a line: the reader takes CPU from the workers and the pipe's 64 KB buffer
    stalls them.)"""
    env = dict(os.environ)
    if repo is not None:
        env["PYTHONPATH"] = str(repo)
    cmd = [sys.executable, "-m", "semps", "match", "--ontology", str(folder / "ontology.owl")]
    cmd += ["--subscriptions", str(folder / "subscriptions"), "--workers", str(workers)]
    with tempfile.TemporaryDirectory() as one:
        first = min((folder / "events").iterdir())
        (Path(one) / first.name).symlink_to(first)
        _timed(cmd + ["--events", one], env)
    run = _timed(cmd + ["--events", str(folder / "events")], env)
    events = 0.8 * run.lines
    return {
        "workers": workers,
        "events_per_s": events / max(1e-9, run.at(0.9) - run.at(0.1)),
        "cpu_us_per_event": 1e6 * (run.cpu_at(0.9) - run.cpu_at(0.1)) / max(1.0, events),
        "first_output_s": run.at(0.0),
        "total_s": run.wall,
        "output_lines": run.lines,
    }


def compare(folder: Path, repo: Path, rounds: int, workers: int, paired: bool = False) -> None:
    """``semps match --workers N`` of this checkout and of ``repo``, alternately, ``rounds``
    times each (this machine's speed drifts by tens of percent within minutes: only runs
    side by side compare); each run's events/s and CPU per event, then medians.

    ``paired``: the two run *at the same time* instead, ``--workers 1`` each (one core
    each on a 2-core machine), so each round's two runs see the same machine: the
    fairest comparison of CPU per event where the speed drifts; each round's ratio too."""
    runs: dict[str, list[dict[str, float]]] = {"this": [], str(repo): []}
    sides: tuple[tuple[str, Path | None], ...] = (("this", None), (str(repo), repo))
    for i in range(rounds):
        stamp(f"round {i + 1}")
        if paired:
            found_by: dict[str, dict[str, float]] = {}
            threads = [
                threading.Thread(target=_paired_run, args=(folder, *side, found_by))
                for side in sides
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if len(found_by) < len(sides):
                msg = "a paired run failed (see above)"
                raise RuntimeError(msg)
            ratio = found_by["this"]["cpu_us_per_event"] / found_by[str(repo)]["cpu_us_per_event"]
        for name, where in sides:
            found = found_by[name] if paired else cli(folder, workers, where)
            runs[name].append(found)
            how = "compare --paired" if paired else "compare"
            record(
                "semantic_workload",
                {"folder": folder.name, "run": f"{how} round {i + 1}", **found},
                checkout=where or HERE,
            )
            rate, cpu = found["events_per_s"], found["cpu_us_per_event"]
            print(
                f"round {i + 1} {name}: {rate:,.0f} events/s, {cpu:,.0f} us CPU/event", flush=True
            )
        if paired:
            print(f"round {i + 1}: this checkout's CPU per event is {ratio:.2f}x", flush=True)
    stamp("end")
    for name, found in runs.items():
        rates = [f["events_per_s"] for f in found]
        cpu = statistics.median(f["cpu_us_per_event"] for f in found)
        print(
            f"median {name}: {statistics.median(rates):,.0f} events/s "
            f"(range {min(rates):,.0f}-{max(rates):,.0f}), {cpu:,.0f} us CPU/event",
            flush=True,
        )


def _paired_run(
    folder: Path, name: str, repo: Path | None, into: dict[str, dict[str, float]]
) -> None:
    into[name] = cli(folder, 1, repo)


class _Run:
    """One timed run of a command whose output went to a file: the file's size and the CPU
    time of its processes as sampled over time, its line count, and its wall time."""

    def __init__(self, samples: list[tuple[float, int, float]], lines: int, wall: float):
        self.samples, self.lines, self.wall = samples, lines, wall

    def _first(self, share: float) -> tuple[float, int, float]:
        final = self.samples[-1][1]
        return next(s for s in self.samples if s[1] > 0 and s[1] >= share * final)

    def at(self, share: float) -> float:
        """When the output first reached ``share`` of its final size (seconds from the
        start; the first non-empty sample for 0)."""
        return self._first(share)[0]

    def cpu_at(self, share: float) -> float:
        """The processes' CPU seconds when the output first reached ``share`` of it."""
        return self._first(share)[2]


def _timed(cmd: list[str], env: dict[str, str]) -> _Run:
    """Run ``cmd`` with its output written to a temporary file, sampling the file's size
    and the CPU time of the process and its children every 10 ms."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=out, cwd=tempfile.gettempdir())
        samples = [(0.0, 0, 0.0)]
        while proc.poll() is None:
            time.sleep(0.01)
            cpu = tree_cpu(proc.pid)
            samples.append((time.perf_counter() - t0, os.fstat(out.fileno()).st_size, cpu))
        wall = time.perf_counter() - t0
        if proc.returncode:
            msg = f"semps match failed with status {proc.returncode}"
            raise RuntimeError(msg)
        samples.append((wall, os.fstat(out.fileno()).st_size, samples[-1][2]))
        out.seek(0)
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: out.read(1 << 20), b""))
    return _Run(samples, lines, wall)


def naive(folder: Path, sample_subs: int = 300, sample_events: int = 10) -> float:
    """Events/s of the naive method: closure + each subscription as a SPARQL query in
    pyoxigraph per event, on a sample of subscriptions, extrapolated to all."""
    import pyoxigraph as ox

    from semps.terms import Literal

    expansion, subs, events = _load(folder)

    def term(t: object) -> object:
        if isinstance(t, Literal):
            if t.lang:
                return ox.Literal(t.lexical, language=t.lang)
            return ox.Literal(t.lexical, datatype=ox.NamedNode(t.datatype))
        return ox.NamedNode(t)  # type: ignore[arg-type]

    texts = [s.text for s in subs[:: max(1, len(subs) // sample_subs)]]
    t0 = time.perf_counter()
    for e in events[:sample_events]:
        store = ox.Store()
        closed = close(expansion, e.triples)
        store.extend([ox.Quad(term(s), term(p), term(o)) for s, p, o in closed])
        for text in texts:
            list(store.query(text))
    per_event = (time.perf_counter() - t0) / sample_events * len(subs) / len(texts)
    return 1 / per_event


def _rss() -> int:
    """This process's resident set size in bytes (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def memory(subs: int, selectivity: float, seed: int = 1) -> dict[str, float]:
    """Bytes per subscription of a built index at ``subs`` subscriptions drawn as ``write``
    draws them (held in memory, no files): the growth of the resident set over building
    it, the subscription texts excluded (they are made first); and registration/s."""
    from semps.matcher.semantic import SemanticMatcher
    from semps.matcher.values import Subscription

    rng = random.Random(seed)
    _, classes, props = ontology_xml(rng)
    narrow = selectivity < 0.005
    broad = 0.0 if narrow else min(1.0, 0.05 + 8 * selectivity)
    width = max(2, min(100, int(selectivity * 3000)))
    vocabulary = Vocabulary(rng, classes, props, broad, leaves=narrow)
    items = [
        Subscription(f"s{i:07}", "semantic", subscription(rng, vocabulary, width, narrow))
        for i in range(subs)
    ]
    gc.collect()
    gc.disable()
    before = _rss()
    t0 = time.process_time()
    matcher = SemanticMatcher()
    for item in items:
        matcher.add(item)
    cpu = time.process_time() - t0
    gc.enable()
    gc.collect()
    grown = _rss() - before
    return {"subs": subs, "reg_per_cpu_s": subs / cpu, "bytes_per_sub": grown / subs}


def main() -> None:
    parser, sub, w, r = workload_commands(__doc__)
    w.add_argument("--subs", type=int, default=100_000)
    w.add_argument("--events", type=int, default=1000)
    w.add_argument("--selectivity", type=float, default=0.01)
    w.add_argument("--shape", choices=SHAPES, default="bench", help="bench/_shapes.py")
    r.add_argument("--cli", action="store_true", help="time semps match with 1 and 2 workers")
    r.add_argument("--naive", action="store_true", help="the naive method on a sample")
    r.add_argument("--repo", type=Path, help="PYTHONPATH for the CLI runs (another checkout)")
    r.add_argument("--skip-in-process", action="store_true")
    c = sub.add_parser("compare", help="semps match here and in another checkout, alternately")
    c.add_argument("folder", type=Path)
    c.add_argument("--repo", type=Path, required=True, help="the other checkout")
    c.add_argument("--rounds", type=int, default=4)
    c.add_argument("--workers", type=int, default=2)
    c.add_argument(
        "--paired", action="store_true", help="both at the same time, 1 worker each (one core)"
    )
    m = sub.add_parser("memory", help="bytes per subscription of a built index (no files)")
    m.add_argument("--subs", type=int, default=100_000)
    m.add_argument("--selectivity", type=float, default=0.01)
    args = parser.parse_args()
    print(f"command: {' '.join(sys.argv)}", flush=True)
    if args.command in ("run", "memory"):  # compare stamps each round
        stamp("start")
    if args.command == "write":
        write(args.folder, args.subs, args.events, args.selectivity, args.seed, args.shape)
        return
    if args.command == "compare":
        compare(args.folder, args.repo, args.rounds, args.workers, args.paired)
        return
    if args.command == "memory":
        found = memory(args.subs, args.selectivity)
        print("memory:", {k: round(v, 1) for k, v in found.items()}, flush=True)
        record("semantic_workload", {"run": "memory", "selectivity": args.selectivity, **found})
        return
    if not args.skip_in_process:
        found = in_process(args.folder)
        print("in process:", {k: round(v, 3) for k, v in found.items()}, flush=True)
        record("semantic_workload", {"folder": args.folder.name, "run": "in-process", **found})
    if args.cli:
        for workers in (1, 2):
            found = cli(args.folder, workers, args.repo)
            print("semps match:", {k: round(v, 3) for k, v in found.items()}, flush=True)
            record(
                "semantic_workload",
                {"folder": args.folder.name, "run": "semps match", **found},
                checkout=args.repo or HERE,
            )
    if args.naive:
        print(f"naive (pyoxigraph per subscription): {naive(args.folder):.3f} events/s")
    stamp("end")


if __name__ == "__main__":
    main()
