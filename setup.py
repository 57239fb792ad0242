"""Map the customer's top-level folders into the one ``semps`` namespace.

``ontology/`` installs as ``semps.ontology``, ``api/`` as ``semps.api`` and so on, in wheels
and in editable installs alike, so nothing generic (``api``, ``spark``) lands at the top of
site-packages. Everything else about the build lives in ``pyproject.toml``.
"""

from setuptools import find_packages, setup

SUBPACKAGE_ROOTS = ("ontology", "ingest", "matcher", "api", "broker", "spark")

packages = ["semps", *find_packages(include=["semps.*"])]
package_dir = {"semps": "semps"}
for root in SUBPACKAGE_ROOTS:
    package_dir[f"semps.{root}"] = root
    packages += [f"semps.{name}" for name in find_packages(include=[root, f"{root}.*"])]

setup(packages=packages, package_dir=package_dir)
