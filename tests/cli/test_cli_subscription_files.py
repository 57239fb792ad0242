"""``semps match``/``semps index`` read a folder of .rq files: in name order, each text
as Python's text mode reads it."""

from __future__ import annotations

from pathlib import Path

from semps.cli.match import load_subscriptions


def test_a_folder_is_read_in_name_order_with_newlines_as_text_mode_reads_them(
    tmp_path: Path,
) -> None:
    texts = {"b": "ASK {\r\n ?x ?p ?o }", "a10": "ASK {\r ?x ?p ?o }", "a2": "ASK { ?s ?p ?o }"}
    for name, text in texts.items():
        (tmp_path / f"{name}.rq").write_bytes(text.encode("utf-8"))
    (tmp_path / "notes.txt").write_text("not a subscription")
    found = load_subscriptions(tmp_path)
    assert [s.id for s in found] == ["a10", "a2", "b"]
    assert [s.text for s in found] == [
        (tmp_path / f"{s.id}.rq").read_text(encoding="utf-8") for s in found
    ]
    assert found[2].text == "ASK {\n ?x ?p ?o }"
    assert found.paths["a2"] == tmp_path / "a2.rq"
