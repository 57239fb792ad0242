"""The building campus of bench/knowledge_graph.py (not a test): a knowledge graph of real
and generated Brick buildings, subscriptions a facilities application writes, telemetry.

- **Real buildings**: the models ``../shared/workloads/brick-a``'s events were cut from (UC
  Berkeley Soda Hall, UCSD EBU3B, UVA Rice Hall, the Brick examples): their equipment,
  points and relations gathered as buildings (the readings, ``brick:lastKnownValue``, left
  out: they are telemetry).
- **Generated buildings** (``http://example.org/campus/bNNN#``), as many as the size asks:
  floors, rooms, HVAC zones, AHUs feeding VAVs feeding zones, fan coil units, chillers,
  chilled-water pumps, boilers; points described as real models describe them (a Brick
  class, an alias class, ``brick:measures`` values or tags), with units, labels and
  timeseries references.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

BRICK = "https://brickschema.org/schema/Brick#"
TAG = "https://brickschema.org/schema/BrickTag#"
UNIT = "http://qudt.org/vocab/unit/"
BMS = "http://example.org/bms#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
XSD = "http://www.w3.org/2001/XMLSchema#"

#: Point kinds: Brick class, what it measures (Brick 1.2's definition: measures -> class),
#: whether models describe it by its tags (:func:`brick_tags`), unit, and the range of its
#: readings.
POINTS: dict[str, tuple[str, tuple[str, ...], bool, str, tuple[float, float]]] = {
    "ZN-T": ("Zone_Air_Temperature_Sensor", ("Temperature", "Zone_Air"), True, "DEG_F", (62, 84)),
    "ZN-T-SP": ("Zone_Air_Temperature_Setpoint", (), True, "DEG_F", (68, 76)),
    "SA-F": ("Supply_Air_Flow_Sensor", ("Flow", "Supply_Air"), False, "FT3-PER-MIN", (50, 1500)),
    "DMP-CMD": ("Damper_Position_Command", (), True, "PERCENT", (0, 100)),
    "OCC": ("Occupancy_Sensor", ("Occupancy",), True, "NUM", (0, 1)),
    "SA-T": (
        "Supply_Air_Temperature_Sensor",
        ("Temperature", "Supply_Air"),
        False,
        "DEG_F",
        (50, 66),
    ),
    "RA-T": (
        "Return_Air_Temperature_Sensor",
        ("Temperature", "Return_Air"),
        True,
        "DEG_F",
        (66, 80),
    ),
    "MA-T": (
        "Mixed_Air_Temperature_Sensor",
        ("Temperature", "Mixed_Air"),
        False,
        "DEG_F",
        (55, 75),
    ),
    "SA-T-SP": ("Supply_Air_Temperature_Setpoint", (), False, "DEG_F", (52, 60)),
    "FLT-DP": ("Filter_Differential_Pressure_Sensor", (), True, "IN_H2O", (0.1, 1.5)),
    "SF-S": ("Fan_Status", (), True, "NUM", (0, 1)),
    "SA-T-ALM": ("Supply_Air_Temperature_Alarm", (), True, "NUM", (0, 1)),
    "CO2": ("CO2_Sensor", ("Air", "CO2_Concentration"), False, "PPM", (400, 1600)),
    "CHWS-T": (
        "Chilled_Water_Supply_Temperature_Sensor",
        ("Temperature", "Supply_Chilled_Water"),
        False,
        "DEG_F",
        (40, 52),
    ),
    "CHWS-F": (
        "Chilled_Water_Discharge_Flow_Sensor",
        ("Flow", "Discharge_Chilled_Water"),
        False,
        "GAL_US-PER-MIN",
        (100, 900),
    ),
    "KW": ("Power_Sensor", ("Power",), False, "KiloW", (5, 400)),
    "HWS-T": (
        "Hot_Water_Supply_Temperature_Sensor",
        ("Temperature", "Supply_Hot_Water"),
        False,
        "DEG_F",
        (120, 180),
    ),
}
#: Equipment kinds: Brick class, an alias class some models use instead, its points.
EQUIPMENT = {
    "VAV": ("VAV", "Variable_Air_Volume_Box", ("ZN-T", "ZN-T-SP", "SA-F", "DMP-CMD", "OCC")),
    "AHU": (
        "AHU",
        "Air_Handling_Unit",
        ("SA-T", "RA-T", "MA-T", "SA-T-SP", "FLT-DP", "SF-S", "SA-T-ALM"),
    ),
    "FCU": ("FCU", "Fan_Coil_Unit", ("ZN-T", "ZN-T-SP", "SF-S")),
    "CH": ("Chiller", "Chiller", ("CHWS-T", "CHWS-F", "KW")),
    "CHWP": ("Chilled_Water_Pump", "Chilled_Water_Pump", ("KW",)),
    "BLR": ("Boiler", "Boiler", ("HWS-T",)),
}


def brick_tags(cls: str) -> tuple[str, ...]:
    """The Brick tags of a point class: ``Point`` and the words of its name (Brick composes
    a class's name of its tags: ``Zone_Air_Temperature_Sensor``)."""
    return ("Point", *cls.split("_"))


@dataclass
class Campus:
    """What the subscriptions and events draw their constants from."""

    points: list[tuple[str, str]] = field(default_factory=list)  # (IRI, kind; "" if real)
    equipment: dict[str, list[str]] = field(default_factory=dict)  # kind -> IRIs
    floors: list[str] = field(default_factory=list)
    rooms: list[str] = field(default_factory=list)
    zones: list[str] = field(default_factory=list)
    buildings: list[str] = field(default_factory=list)
    triples: int = 0


def nt(s: str, p: str, o: str) -> str:
    """An N-Triples line; ``o`` is an IRI unless it is already a literal or blank node."""
    obj = o if o[0] in '"_' else f"<{o}>"
    subj = s if s.startswith("_:") else f"<{s}>"
    return f"{subj} <{p}> {obj} .\n"


def literal(value: float | str, datatype: str) -> str:
    return f'"{value}"^^<{XSD}{datatype}>'


def real_buildings(folder: Path, campus: Campus) -> Iterator[str]:
    """The brick-a models' triples without their readings, in a fixed order, blank nodes
    labelled canonically (rdflib.compare) and renamed per file."""
    import rdflib
    from rdflib.compare import to_canonical_graph

    for i, path in enumerate(sorted(p for p in folder.iterdir() if p.suffix in (".ttl", ".rdf"))):
        graph = rdflib.Graph()
        graph.parse(path, format="xml" if path.suffix == ".rdf" else "turtle")
        readings = set(graph.objects(None, rdflib.URIRef(BRICK + "lastKnownValue")))
        kept = rdflib.Graph()
        for s, p, o in graph:
            if s not in readings and str(p) != BRICK + "lastKnownValue":
                kept.add((s, p, o))
        lines = []
        for s, p, o in to_canonical_graph(kept):
            lines.append(" ".join(_n3(t, i) for t in (s, p, o)) + " .\n")
            if str(p) == BRICK + "isPointOf" and isinstance(s, rdflib.URIRef):
                campus.points.append((str(s), ""))
        yield from sorted(lines)
    campus.points[:] = sorted(set(campus.points))


def _n3(term: object, file_index: int) -> str:
    import rdflib

    if isinstance(term, rdflib.BNode):
        return f"_:r{file_index}x{term}"
    return term.n3()  # type: ignore[attr-defined, no-any-return]


class Building:
    """One generated building's triples, its constants recorded in the campus."""

    def __init__(self, rng: random.Random, index: int, campus: Campus) -> None:
        self.rng, self.campus = rng, campus
        self.ns = f"http://example.org/campus/b{index:03}#"
        self.lines: list[str] = []

    def add(self, s: str, p: str, o: str) -> None:
        self.lines.append(nt(s, p, o))

    def equip(self, kind: str, name: str, room: str) -> str:
        cls, alias, points = EQUIPMENT[kind]
        iri = self.ns + name
        self.add(iri, RDF_TYPE, BRICK + (alias if self.rng.random() < 0.3 else cls))
        self.add(iri, BRICK + "hasLocation", room)
        self.campus.equipment.setdefault(kind, []).append(iri)
        for point in points:
            if self.rng.random() < 0.9:
                self.point(iri, name, point)
        return iri

    def point(self, equipment: str, name: str, kind: str) -> str:
        cls, measures, tagged, unit, _ = POINTS[kind]
        tags = brick_tags(cls) if tagged else ()
        iri = f"{self.ns}{name}.{kind}"
        how = self.rng.random()
        if how < 0.6 or not (measures or tags):
            self.add(iri, RDF_TYPE, BRICK + cls)
        elif measures and how < 0.8:
            for m in measures:
                self.add(iri, BRICK + "measures", BRICK + m)
        if tags and (how >= 0.8 or self.rng.random() < 0.3):
            for t in tags:
                self.add(iri, BRICK + "hasTag", TAG + t)
        self.add(iri, LABEL, f'"{name}.{kind}"')
        self.add(iri, BRICK + "hasUnit", UNIT + unit)
        if self.rng.random() < 0.5:
            self.add(iri, BRICK + "isPointOf", equipment)
        else:
            self.add(equipment, BRICK + "hasPoint", iri)
        if self.rng.random() < 0.6:
            ts = iri + ".ts"
            self.add(iri, BRICK + "timeseries", ts)
            self.add(ts, BRICK + "hasTimeseriesId", f'"ts-{self.rng.getrandbits(32):08x}"')
        self.campus.points.append((iri, kind))
        return iri

    def build(self) -> list[str]:
        rng, ns = self.rng, self.ns
        building = ns + "building"
        self.add(building, RDF_TYPE, BRICK + "Building")
        self.campus.buildings.append(building)
        floors, rooms_by_floor = rng.randint(3, 8), []
        for f in range(1, floors + 1):
            floor = f"{ns}FL{f}"
            self.add(floor, RDF_TYPE, BRICK + ("Floor" if rng.random() < 0.5 else "Storey"))
            self.add(floor, BRICK + "isPartOf", building)
            self.campus.floors.append(floor)
            rooms = []
            for r in range(rng.randint(8, 20)):
                room = f"{ns}FL{f}-RM{f}{r:02}"
                self.add(room, RDF_TYPE, BRICK + "Room")
                self.add(room, BRICK + "isPartOf", floor)
                rooms.append(room)
                self.campus.rooms.append(room)
                if rng.random() < 0.15:
                    self.point(room, f"FL{f}-RM{f}{r:02}", "CO2")
                    self.add(f"{ns}FL{f}-RM{f}{r:02}.CO2", BRICK + "hasLocation", room)
            rooms_by_floor.append(rooms)
        plant = rooms_by_floor[0][0]
        chillers = [self.equip("CH", f"CH-{i}", plant) for i in (1, 2)]
        for i, chiller in enumerate(chillers, 1):
            self.add(self.equip("CHWP", f"CHWP-{i}", plant), BRICK + "feeds", chiller)
        boiler = self.equip("BLR", "BLR-1", plant)
        for a in range((floors + 1) // 2):
            ahu = self.equip("AHU", f"AHU-{a + 1}", plant)
            self.add(chillers[a % 2], BRICK + "feeds", ahu)
            for f in (2 * a, 2 * a + 1):
                if f < floors:
                    self.zones_of(ahu, f + 1, rooms_by_floor[f])
        for i in range(rng.randint(2, 4)):
            room = rng.choice(rng.choice(rooms_by_floor))
            self.add(boiler, BRICK + "feeds", self.equip("FCU", f"FCU-{i}", room))
        return self.lines

    def zones_of(self, ahu: str, floor: int, rooms: list[str]) -> None:
        for z in range(0, len(rooms), 2):
            zone = f"{self.ns}HVZ-{floor}{z // 2:02}"
            self.add(zone, RDF_TYPE, BRICK + "HVAC_Zone")
            self.campus.zones.append(zone)
            for room in rooms[z : z + 2]:
                self.add(zone, BRICK + "hasPart", room)
            vav = self.equip("VAV", f"VAV-{floor}{z // 2:02}", rooms[z])
            if self.rng.random() < 0.5:
                self.add(ahu, BRICK + "feeds", vav)
            else:
                self.add(vav, BRICK + "isFedBy", ahu)
            self.add(vav, BRICK + "feeds", zone)


def write_graph(folder: Path, brick_a: Path, triples: int, rng: random.Random) -> Campus:
    """``folder/brick-a.nt`` and ``folder/campus-NNN.nt`` (100 buildings a file) until the
    graph holds about ``triples`` triples, and at least one generated building (the
    subscriptions and events name its equipment: a smaller ``triples`` gives the brick-a
    models and that one building)."""
    folder.mkdir(parents=True, exist_ok=True)
    campus = Campus()
    with (folder / "brick-a.nt").open("w") as out:
        for line in real_buildings(brick_a, campus):
            out.write(line)
            campus.triples += 1
    index, out_file = 0, None
    while campus.triples < triples or index == 0:
        if index % 100 == 0:
            if out_file:
                out_file.close()
            out_file = (folder / f"campus-{index // 100:03}.nt").open("w")
        lines = Building(rng, index, campus).build()
        out_file.writelines(lines)  # type: ignore[union-attr]
        campus.triples += len(lines)
        index += 1
    if out_file:
        out_file.close()
    return campus
