"""Benchmark of the console's ontology tab on Brick (not a test): how long the class tree
takes to show in Debian's headless chromium, the tree drawn a level at a time.

Starts ``semps serve`` on a fresh data directory, loads brick-a's ontology (Brick 1.4
reduced to its axioms: 1,795 classes, 4,781 rows were every class drawn under each of its
parents), logs in as an admin and opens ``/console/#ontology`` ``--rounds`` times, each
twice: **cold** (an axiom added first, so the server builds its view of the new ontology
version for this paint) and **warm** (the view cached). The figure is the page's own
``semps:classes-painted`` mark (the class tree's first level in the page, from the start of
the navigation: the HTML, the modules, ``whoami``, the summary and the first page of roots),
read from the Performance API; beside it what the page holds (class rows, its height).

    .venv/bin/python bench/console_paint.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
from pathlib import Path

import httpx
from _common import create_tokens, serve
from _results import record
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parent.parent
BRICK = ROOT.parent / "shared" / "workloads" / "brick-a" / "ontology.owl"
NS = "https://brickschema.org/schema/Brick#"
MARK = (
    "const m = performance.getEntriesByName('semps:classes-painted');"
    "return m.length ? m[m.length - 1].startTime : null;"
)


def chromium(profile: Path) -> WebDriver:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,1000"):
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


def log_in(driver: WebDriver, url: str, token: str) -> None:
    driver.get(url + "/console/")
    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.CSS_SELECTOR, "#login-form button").click()
    WebDriverWait(driver, 60).until(lambda d: d.find_element(By.ID, "app").is_displayed())


def paint(driver: WebDriver, url: str, tag: str) -> tuple[float, int, int]:
    """Milliseconds to the class tree's mark, its rows, and the page's height."""
    driver.get(f"{url}/console/?{tag}#ontology")
    ms = WebDriverWait(driver, 120).until(lambda d: d.execute_script(MARK))
    rows = len(driver.find_elements(By.CSS_SELECTOR, "#class-tree li[data-iri]"))
    height = driver.execute_script("return document.documentElement.scrollHeight")
    return float(ms), rows, int(height)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="semps-paint-"))
    tokens = create_tokens(folder / "data", {"admin": "admin"})
    served = serve(folder / "data", [])
    headers = {"Authorization": f"Bearer {tokens['admin']}"}
    driver = chromium(folder / "profile")
    try:
        with httpx.Client(base_url=served.url, headers=headers, timeout=120) as admin:
            typed = {**headers, "Content-Type": "application/rdf+xml"}
            admin.put("/ontology", content=BRICK.read_bytes(), headers=typed).raise_for_status()
            log_in(driver, served.url, tokens["admin"])
            figures: dict[str, list[float]] = {"cold": [], "warm": []}
            for n in range(args.rounds):
                axiom = {"kind": "subClassOf", "subject": f"{NS}Bench{n}", "object": f"{NS}AHU"}
                admin.post("/ontology/axioms", json=axiom).raise_for_status()
                for run in ("cold", "warm"):
                    ms, rows, height = paint(driver, served.url, f"{run}{n}")
                    figures[run].append(ms)
                    print(f"round {n + 1} {run}: {ms:.0f} ms, {rows} class rows, {height} px")
        load = os.getloadavg()
        for run, values in figures.items():
            print(
                f"{run}: median {statistics.median(values):.0f} ms, "
                f"min {min(values):.0f}, max {max(values):.0f} over {len(values)} paints"
            )
        print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
        record(
            "console_paint",
            {
                "rounds": args.rounds,
                **{f"{run}_median_ms": statistics.median(v) for run, v in figures.items()},
                **{f"{run}_max_ms": max(v) for run, v in figures.items()},
                "class_rows": rows,
                "page_px": height,
            },
            note="brick-a's ontology (1,795 classes), headless chromium",
        )
    finally:
        driver.quit()
        served.process.terminate()
        served.process.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
