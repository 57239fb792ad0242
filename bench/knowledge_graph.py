"""Events against a knowledge graph on a building campus, and its benchmark (not a test;
issue 33).

Shape (``write DIR``), deterministic from ``--seed``:

- ``ontology.owl``: Brick 1.2 (``../shared/workloads/brick-kg-a/ontology.owl``, copied).
- ``graph/``: the campus (bench/_campus.py): the real brick-a models as buildings, then
  generated buildings until the graph holds about ``--triples`` triples (N-Triples; at
  least one generated building: about 6.5k triples at the smallest).
- ``subscriptions/*.rq`` (``--subs``): what facilities applications write, constants drawn
  from the campus: a point's reading over a threshold; readings of a class of point on one
  floor; readings of an equipment's points; zone temperatures downstream of an AHU or a
  chiller (``brick:feeds+``); a zone above its setpoint; a room's CO2; OPTIONAL units, NOT
  EXISTS timeseries, ASK, and new equipment on a floor (the graph alone answers nothing
  new until an event adds some).
- ``events/*.nt`` (``--events``): telemetry of 1-3 readings of points the graph knows,
  ``<point> bms:lastReading [ brick:value v ; bms:observedAt t ]``; one in a hundred
  commissions a VAV (fed by an AHU, feeding a zone, with its points and a reading).
- ``about.json``: the sizes.

Benchmark (``run DIR``): ``semps match --graph`` events/s on 1 and 2 workers (the output
written to a file sampled as it grows, the rate taken between 10% and 90% of it, as
bench/semantic_workload.py does), ``semps graph load`` triples/s and bytes per graph triple
when the CLI offers them (each part says so and is skipped when it does not); beside them,
on samples, the naive method (each subscription a pyoxigraph query over the closed graph
plus the event) and SEPA's (every subscription re-evaluated over the store after each
one-triple update, its answers compared with the last), extrapolated to all subscriptions.

    .venv/bin/python bench/knowledge_graph.py write DIR [--triples 1000000] [--subs 100000]
        [--events 10000] [--seed 1]
    .venv/bin/python bench/knowledge_graph.py run DIR [--sample-subs 200]
        [--sample-events 5] [--skip-naive] [--load-only]

``--load-only`` runs ``semps graph load`` alone (``PYTHONPATH=CHECKOUT`` measures another
commit's).
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _campus import BMS, BRICK, EQUIPMENT, POINTS, RDF_TYPE, Campus, literal, nt, write_graph
from _common import workload_commands
from _machine import stamp, tree_cpu  # bench/ is on the path: this file runs as a script

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ROOT.parent / "shared" / "workloads"
SEMPS = [sys.executable, "-m", "semps"]
PREFIXES = f"PREFIX brick: <{BRICK}>\nPREFIX bms: <{BMS}>\n"


# -- write ------------------------------------------------------------------------------------


def _reading(rng: random.Random, kind: str) -> str:
    low, high = POINTS[kind][4] if kind else (0, 100)
    return f"{rng.uniform(low, high):.1f}"


def subscription(rng: random.Random, campus: Campus) -> str:
    """One subscription in a shape facilities applications write."""
    kind, shape = rng.choice([k for k in POINTS if k != "SA-T-SP"]), rng.random()
    point_class = BRICK + POINTS[kind][0]
    low, high = POINTS[kind][4]
    threshold = f"{rng.uniform(low, high):.0f}"
    reading = "bms:lastReading [ brick:value ?v ]"
    if shape < 0.2:
        point, kind = rng.choice(campus.points)
        level = _reading(rng, kind)
        return f"SELECT ?v WHERE {{ <{point}> {reading} . FILTER(?v > {level}) }}"
    if shape < 0.35:
        floor = rng.choice(campus.floors)
        return (
            f"SELECT ?s ?v WHERE {{ ?s {reading} ; a <{point_class}> ; brick:isPointOf ?e . "
            f"?e brick:hasLocation ?room . ?room brick:isPartOf <{floor}> . "
            f"FILTER(?v > {threshold}) }}"
        )
    if shape < 0.5:
        equipment = rng.choice(campus.equipment[rng.choice(list(EQUIPMENT))])
        return (
            f"SELECT ?s ?v WHERE {{ ?s brick:isPointOf <{equipment}> ; {reading} ; "
            f"a brick:Point . FILTER(?v < {threshold} || ?v > {threshold} * 2) }}"
        )
    if shape < 0.6:
        ahu, hot = rng.choice(campus.equipment["AHU"]), rng.randint(72, 82)
        return (
            f"SELECT ?box ?s ?v WHERE {{ <{ahu}> brick:feeds+ ?box . ?box brick:hasPoint ?s . "
            f"?s a brick:Zone_Air_Temperature_Sensor ; {reading} . FILTER(?v > {hot}) }}"
        )
    if shape < 0.68:
        chiller = rng.choice(campus.equipment["CH"])
        return (
            f"SELECT ?z ?s WHERE {{ <{chiller}> brick:feeds+ ?z . ?z a brick:HVAC_Zone . "
            f"?vav brick:feeds ?z ; brick:hasPoint ?s . ?s bms:lastReading ?r }}"
        )
    if shape < 0.76:
        vav = rng.choice(campus.equipment["VAV"])
        return (
            f"SELECT ?t ?sp WHERE {{ <{vav}> brick:hasPoint ?s , ?p . "
            f"?s a brick:Zone_Air_Temperature_Sensor ; bms:lastReading [ brick:value ?t ] . "
            f"?p a brick:Zone_Air_Temperature_Setpoint ; brick:timeseries ?ts . "
            f"OPTIONAL {{ ?p bms:lastReading [ brick:value ?sp ] }} "
            f"FILTER(!bound(?sp) || ?t > ?sp + 2) }}"
        )
    if shape < 0.82:
        equipment = rng.choice(campus.equipment[rng.choice(["AHU", "CH", "BLR"])])
        return (
            f"SELECT ?s ?v ?u WHERE {{ ?s brick:isPointOf <{equipment}> ; {reading} . "
            f"OPTIONAL {{ ?s brick:hasUnit ?u }} }}"
        )
    if shape < 0.88:
        floor = rng.choice(campus.floors)
        return (
            f"SELECT ?s WHERE {{ ?s a brick:Point ; bms:lastReading ?r ; brick:isPointOf ?e . "
            f"?e brick:hasLocation/brick:isPartOf <{floor}> . "
            f"FILTER NOT EXISTS {{ ?s brick:timeseries ?ts }} }}"
        )
    if shape < 0.93:
        floor = rng.choice(campus.floors)
        return (
            f"ASK {{ ?s a brick:Zone_Air_Temperature_Sensor ; {reading} ; brick:isPointOf ?e . "
            f"?e brick:hasLocation ?room . ?room brick:isPartOf <{floor}> . "
            f"FILTER(?v > {rng.randint(76, 84)}) }}"
        )
    if shape < 0.97:
        room = rng.choice(campus.rooms)
        return (
            f"SELECT ?s ?v WHERE {{ ?s a brick:CO2_Sensor ; brick:hasLocation <{room}> ; "
            f"{reading} . FILTER(?v > {rng.choice([800, 1000, 1200])}) }}"
        )
    floor = rng.choice(campus.floors)
    return (
        f"SELECT ?vav WHERE {{ ?vav a brick:VAV ; brick:hasLocation ?room . "
        f"?room brick:isPartOf <{floor}> }}"
    )


def telemetry(rng: random.Random, campus: Campus, stamp_s: int) -> str:
    """1-3 readings of points the graph knows, each a blank node with value and time."""
    lines = []
    for i in range(rng.choice([1, 1, 2, 3])):
        point, kind = rng.choice(campus.points)
        node = f"_:r{i}"
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(stamp_s + 60 * i))
        lines += [
            nt(point, BMS + "lastReading", node),
            nt(node, BRICK + "value", literal(_reading(rng, kind), "double")),
            nt(node, BMS + "observedAt", literal(at, "dateTime")),
        ]
    return "".join(lines)


def commissioning(rng: random.Random, campus: Campus, index: int) -> str:
    """A new VAV: fed by an AHU, feeding a zone, located in a room, with its points and a
    first reading."""
    ahu = rng.choice(campus.equipment["AHU"])
    building = ahu.split("#")[0] + "#"
    vav = f"{building}VAV-N{index}"
    lines = [
        nt(vav, RDF_TYPE, BRICK + "VAV"),
        nt(ahu, BRICK + "feeds", vav),
        nt(vav, BRICK + "feeds", rng.choice([z for z in campus.zones if z.startswith(building)])),
        nt(
            vav,
            BRICK + "hasLocation",
            rng.choice([r for r in campus.rooms if r.startswith(building)]),
        ),
    ]
    for kind in EQUIPMENT["VAV"][2][:3]:
        point = f"{vav}.{kind}"
        lines += [nt(point, RDF_TYPE, BRICK + POINTS[kind][0]), nt(point, BRICK + "isPointOf", vav)]
    lines += [
        nt(f"{vav}.ZN-T", BMS + "lastReading", "_:r0"),
        nt("_:r0", BRICK + "value", literal(_reading(rng, "ZN-T"), "double")),
    ]
    return "".join(lines)


def write(folder: Path, triples: int, subs: int, events: int, seed: int) -> dict[str, float]:
    started = time.perf_counter()
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(WORKLOADS / "brick-kg-a" / "ontology.owl", folder / "ontology.owl")
    campus = write_graph(folder / "graph", WORKLOADS / "brick-a" / "events", triples, rng)
    graph_s = time.perf_counter() - started
    sub_dir, event_dir = folder / "subscriptions", folder / "events"
    for d in (sub_dir, event_dir):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
    for i in range(subs):
        text = PREFIXES + subscription(rng, campus) + "\n"
        (sub_dir / f"s{i:06}.rq").write_text(text)
    start = 1726099200  # 2024-09-12T00:00:00Z
    for i in range(events):
        body = commissioning(rng, campus, i) if i % 100 == 99 else telemetry(rng, campus, start)
        (event_dir / f"e{i:06}.nt").write_text(body)
        start += rng.randint(1, 30)
    about = {
        "seed": seed,
        "graph_triples": campus.triples,
        "buildings": len(campus.buildings),
        "points": len(campus.points),
        "subscriptions": subs,
        "events": events,
        "graph_seconds": round(graph_s, 1),
        "write_seconds": round(time.perf_counter() - started, 1),
    }
    (folder / "about.json").write_text(json.dumps(about, indent=1) + "\n")
    return about


# -- run --------------------------------------------------------------------------------------


def _offers(*command: str, option: str = "") -> bool:
    """Whether this semps has ``command`` (and ``option`` in its help)."""
    found = subprocess.run(
        [*SEMPS, *command, "--help"], capture_output=True, text=True, cwd=tempfile.gettempdir()
    )
    return found.returncode == 0 and option in found.stdout


def match_rate(folder: Path, workers: int) -> dict[str, float]:
    """``semps match --graph`` events/s: its output file sampled every 10 ms, the rate and
    CPU per event taken between 10% and 90% of the output (start-up, loading and shutdown
    excluded)."""
    cmd = [*SEMPS, "match", "--graph", str(folder / "graph")]
    cmd += ["--ontology", str(folder / "ontology.owl"), "--workers", str(workers)]
    cmd += ["--subscriptions", str(folder / "subscriptions"), "--events", str(folder / "events")]
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, cwd=tempfile.gettempdir())
        samples = [(0.0, 0, 0.0)]
        while proc.poll() is None:
            time.sleep(0.01)
            size = os.fstat(out.fileno()).st_size
            samples.append((time.perf_counter() - t0, size, tree_cpu(proc.pid)))
        if proc.returncode:
            msg = f"semps match --graph failed with status {proc.returncode}"
            raise RuntimeError(msg)
        out.seek(0)
        lines = out.read().count(b"\n")
    final = samples[-1][1]

    def at(share: float) -> tuple[float, int, float]:
        return next(s for s in samples if s[1] > 0 and s[1] >= share * final)

    events = 0.8 * lines
    return {
        "workers": workers,
        "events_per_s": events / max(1e-9, at(0.9)[0] - at(0.1)[0]),
        "cpu_us_per_event": 1e6 * (at(0.9)[2] - at(0.1)[2]) / max(1.0, events),
        "first_output_s": at(0.0)[0],
        "total_s": samples[-1][0],
        "output_lines": lines,
    }


def bulk_load(folder: Path) -> dict[str, float]:
    """``semps graph load`` of the graph into a fresh data directory: triples/s (the
    closure included, as the command does it) and the directory's bytes per triple."""
    about = json.loads((folder / "about.json").read_text())
    files = sorted(str(p) for p in (folder / "graph").iterdir())
    with tempfile.TemporaryDirectory() as data:
        cmd = [*SEMPS, "graph", "load", *files, "--ontology", str(folder / "ontology.owl")]
        load = os.getloadavg()[0]
        cpu0, t0 = _children_cpu(), time.perf_counter()
        subprocess.run([*cmd, "--data-dir", data], check=True, cwd=tempfile.gettempdir())
        seconds, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
        size = sum(p.stat().st_size for p in Path(data).rglob("*") if p.is_file())
    triples = about["graph_triples"]
    return {"triples": triples, "seconds": seconds, "triples_per_s": triples / seconds,
            "cpu_s": cpu, "triples_per_cpu_s": triples / cpu, "load_before": load,
            "load_after": os.getloadavg()[0], "bytes_per_triple": size / triples}  # fmt: skip


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser, _, w, r = workload_commands(__doc__)
    w.add_argument("--triples", type=int, default=1_000_000)
    w.add_argument("--subs", type=int, default=100_000)
    w.add_argument("--events", type=int, default=10_000)
    r.add_argument("--sample-subs", type=int, default=200)
    r.add_argument("--sample-events", type=int, default=5)
    r.add_argument("--skip-naive", action="store_true", help="neither the naive nor SEPA's")
    r.add_argument("--load-only", action="store_true", help="semps graph load alone")
    args = parser.parse_args()
    print(f"command: {' '.join(sys.argv)}", flush=True)
    if args.command == "write":
        about = write(args.folder, args.triples, args.subs, args.events, args.seed)
        print("written:", about, flush=True)
        return
    stamp("start")
    if args.load_only:
        print("semps graph load:", {k: round(v, 3) for k, v in bulk_load(args.folder).items()})
        stamp("end")
        return
    if _offers("match", option="--graph"):
        for workers in (1, 2):
            found = match_rate(args.folder, workers)
            print("semps match --graph:", {k: round(v, 3) for k, v in found.items()}, flush=True)
    else:
        print("semps match --graph: this semps has no --graph option yet: skipped", flush=True)
    if _offers("graph", "load"):
        print("semps graph load:", {k: round(v, 3) for k, v in bulk_load(args.folder).items()})
    else:
        print("semps graph load: this semps has no such command yet: skipped", flush=True)
    if not args.skip_naive:
        from _kg_baselines import naive_and_sepa

        for line in naive_and_sepa(args.folder, args.sample_subs, args.sample_events):
            print(line, flush=True)
    stamp("end")


if __name__ == "__main__":
    main()
