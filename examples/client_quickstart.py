"""semps.client in a few lines: subscribe, publish, read the notifications.

Start the demo service (`scripts/run` loads LUBM's univ-bench ontology and prints a token
for each role), then, with its subscriber and publisher tokens:

    export SEMPS_URL=http://127.0.0.1:8000
    export SEMPS_SUBSCRIBER_TOKEN=<subscriber token> SEMPS_PUBLISHER_TOKEN=<publisher token>
    .venv/bin/python examples/client_quickstart.py

It reads with the server's ontology and never changes it (that takes an admin token).
"""

import os

from rdflib import RDF, Graph, Literal, Namespace, URIRef

from semps.client import Client
from semps.errors import SubscriptionSyntaxError

UB = Namespace("http://swat.cse.lehigh.edu/onto/univ-bench.owl#")
URL = os.environ.get("SEMPS_URL", "http://127.0.0.1:8000")

subscriber = Client(URL, os.environ["SEMPS_SUBSCRIBER_TOKEN"])
publisher = Client(URL, os.environ["SEMPS_PUBLISHER_TOKEN"])
with subscriber, publisher:
    # SPARQL text (a pathlib.Path to a .rq file works too).
    sub = subscriber.subscribe(
        "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
        "SELECT ?who ?name WHERE { ?who a ub:Faculty ; ub:name ?name }",
        name="faculty",
    )
    print(f"subscribed {sub.name}")

    # An rdflib Graph (or RDF bytes or text with a media type, or a file: its suffix says
    # the syntax, or a JSON event as a dict). It never says "Faculty": the server's
    # ontology does (univ-bench: a FullProfessor is a Professor, a Professor is Faculty).
    ada = URIRef("http://www.Department0.University0.edu/FullProfessor0")
    event = Graph()
    event.add((ada, RDF.type, UB.FullProfessor))
    event.add((ada, UB.name, Literal("Ada")))
    publisher.publish(event)
    print("published an event")

    # What is stored so far; without once=True the loop follows new notifications, and
    # reconnects by itself (Last-Event-ID) if the connection drops.
    for note in subscriber.notifications(sub, once=True):
        print(f"notification {note.seq}: {sorted(note.solutions[0].items())}")
    if subscriber.subscription(sub).matches == 0:
        print("no notification: does the server's ontology hold univ-bench? (scripts/run)")

    # Refusals are semps' own exceptions, with the server's message and position.
    try:
        subscriber.subscribe("SELECT ?x WHERE { ?x a }")
    except SubscriptionSyntaxError as exc:
        print(f"refused at line {exc.line}, column {exc.column}")

    subscriber.delete(sub)
