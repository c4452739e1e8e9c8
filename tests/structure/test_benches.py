"""The benchmarks have one home, benches/ (the meldstream_benches package), which no service image
ships (issue 28): no module or package named bench* under libs/*/src or services/*/src, no product
source importing the benchmarks or their peers (OpenSpiel, RLCard), the image recipe building libs/ and
services/ only, and every `make bench-*` command running a module that is there.
Each check is also run on a case that breaks it, so none passes by finding nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from .imports import importing

ROOT = Path(__file__).resolve().parents[2]
BENCHES = ROOT / "benches" / "src" / "meldstream_benches"
BENCH_ONLY_IMPORTS = frozenset({"meldstream_benches", "pyspiel", "open_spiel", "rlcard"})


def _product_sources() -> Iterator[Path]:
    for src in sorted([*ROOT.glob("libs/*/src"), *ROOT.glob("services/*/src")]):
        yield from sorted(src.rglob("*.py"))


def bench_modules(paths: Iterable[Path]) -> list[str]:
    """The paths (relative to ROOT) whose module or package is named bench*."""
    return sorted(
        {
            str(path.relative_to(ROOT))
            for path in paths
            for part in path.relative_to(ROOT).parts[3:]  # below libs/NAME/src or services/NAME/src
            if part.startswith("bench")
        }
    )


def bench_imports(source: str) -> list[int]:
    """Lines of `source` importing the benchmarks or a peer only they use."""
    return importing(source, BENCH_ONLY_IMPORTS)


def make_bench_modules(makefile: str) -> list[str]:
    """The modules the Makefile's recipes run with `python -m`."""
    return re.findall(r"python -m (meldstream_benches\.\w+|\S*bench\S*)", makefile)


def test_no_benchmark_lives_in_a_product_package() -> None:
    assert not bench_modules(_product_sources())
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _product_sources()
        for line in bench_imports(path.read_text(encoding="utf-8"))
    ]
    assert not found


def test_the_image_builds_libs_and_services_only() -> None:
    dockerfile = (ROOT / "deploy" / "service.Dockerfile").read_text(encoding="utf-8")
    assert "COPY libs libs" in dockerfile  # the check still reads the recipe it was written for
    assert not re.search(r"\bbenches\b", dockerfile)
    ignore = [
        line.strip()
        for line in (ROOT / "deploy" / "service.Dockerfile.dockerignore")
        .read_text(encoding="utf-8")
        .splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert ignore[0] == "**"  # everything is left out but what is named
    assert not [line for line in ignore if line.startswith("!") and "bench" in line]


def test_every_make_bench_target_runs_a_module_in_benches() -> None:
    modules = make_bench_modules((ROOT / "Makefile").read_text(encoding="utf-8"))
    assert len(modules) >= 6
    for module in modules:
        package, _, name = module.partition(".")
        assert package == "meldstream_benches", module
        assert (BENCHES / f"{name}.py").is_file(), module


def test_each_check_finds_what_it_forbids() -> None:
    assert bench_modules(
        [
            ROOT / "libs/rummy_rules/src/rummy_rules/bench.py",
            ROOT / "services/engine/src/rummy_engine/bench_scale.py",
            ROOT / "services/engine/src/rummy_engine/benches/load.py",
            ROOT / "libs/rummy_rules/src/rummy_rules/solver.py",
        ]
    ) == [
        "libs/rummy_rules/src/rummy_rules/bench.py",
        "services/engine/src/rummy_engine/bench_scale.py",
        "services/engine/src/rummy_engine/benches/load.py",
    ]
    assert bench_imports(
        "import json\nimport pyspiel\nfrom meldstream_benches.engine import UNLIMITED\n"
    ) == [
        2,
        3,
    ]
    assert not bench_imports("from rummy_rules.bots import random_legal\n")
    assert make_bench_modules("\t$(BIN)/python -m rummy_engine.bench_scale $(ARGS)\n") == [
        "rummy_engine.bench_scale"
    ]
