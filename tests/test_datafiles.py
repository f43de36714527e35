"""The grader's own TOML data, parsed once per change of the file (grader/datafiles.py)."""

import sys
import tomllib

import pytest

from grader import datafiles


@pytest.fixture
def writing(monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def _cache(path):
    return path.parent / "__pycache__" / f"{path.name}.{sys.implementation.cache_tag}.marshal"


def test_a_kept_parse_serves_the_next_load_until_the_file_changes(tmp_path, writing, monkeypatch):
    path = tmp_path / "data.toml"
    path.write_text('["a"]\nen = "one"\n', encoding="utf-8")
    assert datafiles.load_toml(path) == {"a": {"en": "one"}}
    assert _cache(path).is_file()
    monkeypatch.setattr(tomllib, "loads", lambda text: pytest.fail("parsed again"))
    assert datafiles.load_toml(path) == {"a": {"en": "one"}}  # from the cache
    monkeypatch.undo()
    path.write_text('["a"]\nen = "two, longer"\n', encoding="utf-8")
    assert datafiles.load_toml(path) == {"a": {"en": "two, longer"}}  # another size and time


def test_a_cache_that_is_not_ours_or_cannot_be_written_means_a_parse(tmp_path, writing):
    path = tmp_path / "data.toml"
    path.write_text('["a"]\nen = "one"\n', encoding="utf-8")
    _cache(path).parent.mkdir()
    _cache(path).write_bytes(b"not marshal at all")
    assert datafiles.load_toml(path) == {"a": {"en": "one"}}
    elsewhere = tmp_path / "readonly"
    elsewhere.mkdir()
    (elsewhere / "__pycache__").write_text("a file where the cache folder would be")
    (elsewhere / "data.toml").write_text('["b"]\nen = "x"\n', encoding="utf-8")
    assert datafiles.load_toml(elsewhere / "data.toml") == {"b": {"en": "x"}}
    assert sorted(p.name for p in elsewhere.iterdir()) == ["__pycache__", "data.toml"]


def test_the_real_data_files_read_the_same_from_the_cache(tmp_path, writing):
    from grader import course

    for name in ("messages.toml", "questions.toml"):
        copy = tmp_path / name
        copy.write_bytes((course.PACKAGE / name).read_bytes())
        parsed = datafiles.load_toml(copy)
        assert parsed == tomllib.loads(copy.read_text(encoding="utf-8")) == datafiles.load_toml(copy)
