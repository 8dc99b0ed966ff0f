from __future__ import annotations

import pytest

from factory.errors import RecipeError
from factory.images.builder import extra_certificates, host_mirror, recipe_hash
from factory.images.recipes import load_recipe, load_recipes

PEM_A = b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"
PEM_B = b"-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----"


def test_bundled_recipes_load_in_dependency_order():
    recipes = load_recipes()
    names = [r.name for r in recipes]
    assert "factory/base:bookworm" in names
    assert names.index("factory/base:bookworm") < names.index("factory/build:bookworm")
    base = recipes[names.index("factory/base:bookworm")]
    for package in (
        "bash",
        "python3",
        "python3-pytest",
        "procps",
        "curl",
        "git",
        "tmux",
        "ca-certificates",
    ):
        assert package in base.debootstrap.packages
    for spec in base.copy_:
        assert spec.source_path().is_dir()


@pytest.mark.parametrize(
    ("text", "error"),
    [
        pytest.param('name = "x:1"\n', "exactly one", id="no-origin"),
        pytest.param('name = "x:1"\nfrom_image = "a"\nbogus = 1\n', "bogus", id="unknown-key"),
    ],
)
def test_recipe_needs_exactly_one_origin_and_no_unknown_key(tmp_path, text, error):
    bad = tmp_path / "r.toml"
    bad.write_text(text)
    with pytest.raises(RecipeError, match=error):
        load_recipe(bad)


def test_cycle_detected(tmp_path):
    (tmp_path / "a.toml").write_text('name = "a:1"\nfrom_image = "b:1"\n')
    (tmp_path / "b.toml").write_text('name = "b:1"\nfrom_image = "a:1"\n')
    with pytest.raises(RecipeError, match="cycle"):
        load_recipes(tmp_path)


def test_recipe_hash_tracks_inputs():
    base = load_recipes()[0]
    first = recipe_hash(base, b"")
    assert recipe_hash(base, b"") == first
    assert recipe_hash(base, PEM_A) != first
    assert recipe_hash(base.model_copy(update={"run": ["true"]}), b"") != first


def test_extra_certificates():
    assert extra_certificates(PEM_A + b"\n" + PEM_B, PEM_A) == [PEM_B]
    assert extra_certificates(PEM_A, PEM_A + PEM_B) == []


def test_host_mirror(tmp_path):
    sources = tmp_path / "sources.list"
    sources.write_text("# comment\ndeb [arch=amd64] http://mirror.example/debian bookworm main\n")
    assert host_mirror((sources,)).startswith("http")


def test_like_inherits_and_overrides():
    recipes = {r.name: r for r in load_recipes()}
    base, trixie = recipes["factory/base:bookworm"], recipes["factory/base:trixie"]
    assert trixie.debootstrap.suite == "trixie"
    assert trixie.debootstrap.packages == base.debootstrap.packages
    assert trixie.run == base.run and trixie.copy_ == base.copy_
    assert recipe_hash(trixie, b"") != recipe_hash(base, b"")


def test_like_must_name_a_recipe(tmp_path):
    (tmp_path / "a.toml").write_text('name = "a:1"\nlike = "nope:1"\n')
    with pytest.raises(RecipeError, match="names no plain recipe"):
        load_recipes(tmp_path)
