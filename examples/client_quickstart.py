"""semps.client in a few lines: load an ontology, subscribe, publish, read the notifications.

Start a server and take an admin token (`scripts/run` prints one and keeps serving), then:

    export SEMPS_URL=http://127.0.0.1:8000 SEMPS_TOKEN=<admin token>
    .venv/bin/python examples/client_quickstart.py
"""

import os

from rdflib import RDF, Graph, Literal, Namespace, URIRef

from semps.cli.demo import demo_dir
from semps.client import Client
from semps.errors import SubscriptionSyntaxError

UB = Namespace("http://swat.cse.lehigh.edu/onto/univ-bench.owl#")
URL = os.environ.get("SEMPS_URL", "http://127.0.0.1:8000")

with Client(URL, os.environ["SEMPS_TOKEN"]) as client:
    # LUBM's univ-bench: a FullProfessor is a Professor, a Professor is Faculty.
    version = client.replace_ontology(demo_dir() / "univ-bench.owl")
    print(f"ontology version {version}")

    # SPARQL text (a pathlib.Path to a .rq file works too).
    sub = client.subscribe(
        "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
        "SELECT ?who ?name WHERE { ?who a ub:Faculty ; ub:name ?name }",
        name="faculty",
    )
    print(f"subscribed {sub.name}")

    # An rdflib Graph (or RDF bytes or text with a media type, or a file: its suffix says
    # the syntax, or a JSON event as a dict). It never says "Faculty": the ontology does.
    ada = URIRef("http://www.Department0.University0.edu/FullProfessor0")
    event = Graph()
    event.add((ada, RDF.type, UB.FullProfessor))
    event.add((ada, UB.name, Literal("Ada")))
    published = client.publish(event)
    print(f"published an event: {published.matched} notification(s)")

    # What is stored so far; without once=True the loop follows new notifications, and
    # reconnects by itself (Last-Event-ID) if the connection drops.
    for note in client.notifications(sub, once=True):
        print(f"notification {note.seq}: {sorted(note.solutions[0].items())}")

    # Refusals are semps' own exceptions, with the server's message and position.
    try:
        client.subscribe("SELECT ?x WHERE { ?x a }")
    except SubscriptionSyntaxError as exc:
        print(f"refused at line {exc.line}, column {exc.column}")

    client.delete(sub)
