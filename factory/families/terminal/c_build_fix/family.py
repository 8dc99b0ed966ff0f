"""c-build-fix: repair a broken C project's build (Makefile, headers, link order, warnings as
errors) so that make produces a working binary. The project is generated in :mod:`.project`."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from factory.families.base import Draft, Family, Trap, register
from factory.families.terminal.knobs import level_of
from factory.families.terminal.near_miss import near_misses
from factory.families.terminal.words import TEAMS
from factory.vocabulary import Difficulty

from .project import CProject, body_digest
from .stats import C_STAT_DOCS


def _traps(proj: CProject) -> list[Trap]:
    """What each breakage is, and the words that would give it away."""
    v, fn = proj.victim, proj.fn(proj.victim, proj.victim_stat)
    tells = {
        "missing-object": ("missing object", "OBJS", f"{v}.o", "undefined reference"),
        "include-path": ("include path", f"-I{proj.bad_incdir}", "No such file"),
        "missing-libm": ("math library", "libm", "-lm", "LDLIBS"),
        "wrong-library": ("math library", "libm", "-lm", proj.bad_lib, "LDLIBS"),
        "recursive-var": ("recursive", "CFLAGS", "+="),
        "tab-separator": ("tab", "separator", "indentation"),
        "objdir-mkdir": ("mkdir", "object directory", f"{proj.objdir}/"),
        "clean-target": ("clean rule", "*.o", "leftover objects"),
        "header-guard": ("header guard", "include guard", proj.guard(proj.guard_donor)),
        "prototype-mismatch": ("prototype", "conflicting types", fn),
        "static-function": ("static", fn, "undefined reference"),
        "header-definition": ("multiple definition", "extern", f"{proj.report}_precision"),
        "silent-prototype": ("prototype", "return type", fn),
        "missing-include": ("math.h", "implicit declaration", "#include"),
        "werror-unused": ("-Werror", "unused", f"{proj.noisy_mod}_build_id"),
    }
    names = {
        "missing-object": "a module left out of the link",
        "include-path": "a wrong include directory",
        "missing-libm": "the math library not linked",
        "wrong-library": "a library that does not exist linked instead of libm",
        "recursive-var": "a recursively expanded variable that refers to itself",
        "tab-separator": "a recipe indented with spaces",
        "objdir-mkdir": "objects written to a directory nothing creates",
        "clean-target": "a clean rule that leaves the objects behind",
        "header-guard": "two headers sharing one include guard",
        "prototype-mismatch": "a prototype that disagrees with its definition",
        "static-function": "a function made static in its module",
        "header-definition": "a variable defined in a header",
        "silent-prototype": "a wrong return type the compiler cannot see",
        "missing-include": "a module using <math.h> functions without the header",
        "werror-unused": "an unused variable under -Werror",
    }
    return [Trap(names[b], tells[b]) for b in proj.breakages]


def _c_number(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.3:
        text = str(rng.randint(-50, 300))
    elif kind < 0.9:
        text = f"{rng.uniform(-200, 900):.{rng.choice([1, 2, 3])}f}"
    else:
        text = f"{rng.randint(1, 9)}e{rng.randint(0, 2)}"
    return "0" if float(text) == 0 else text


@register
class CBuildFix(Family):
    """A small C statistics tool (several modules, headers, a Makefile) that does not build,
    or builds a wrong binary. Easy: one breakage; medium: two; hard: three or four from the
    breakage grammar, unannounced (one subtle: a header guard clash, a prototype that disagrees
    with its definition, a static function, a variable defined in a header, a silently wrong
    return type; and two or three of: a module left out, a wrong include path, libm missing or a
    wrong library, a self-referencing CFLAGS, spaces for a tab, no mkdir of the object
    directory, a missing <math.h>, an unused variable under -Werror, a clean rule that leaves
    the objects) plus an `install` target that must honour DESTDIR and PREFIX. The tests run
    `make clean && make`, run the binary on hidden inputs, check that make clean removes what
    make built and that the functions' bodies were not rewritten."""

    name = "c-build-fix"
    title = "Repair a broken C project's build so that make produces a working binary"
    category = "build-systems"

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        level = level_of(difficulty)
        proj = CProject(rng, level)
        if params.get("breakages"):
            proj.breakages = list(params["breakages"])
        team = rng.choice(TEAMS)
        root = rng.choice(
            [
                f"/srv/{team}/{proj.prog}",
                f"/home/dev/{proj.prog}",
                f"/opt/src/{proj.prog}",
                f"/work/{proj.prog}",
            ]
        )
        broken = frozenset(proj.breakages) | ({"install"} if proj.install else set())
        fixed_files = proj.files()
        broken_files = proj.files(broken)
        changed = {rel: text for rel, text in fixed_files.items() if broken_files.get(rel) != text}
        # fix every breakage but the last one
        partial = proj.files(frozenset(proj.breakages[-1:]))
        partial_changed = {r: t for r, t in partial.items() if broken_files.get(r) != t}
        functions = proj.functions()
        digests = {f: body_digest(fixed_files[path], f) for f, path in functions.items()}
        assert all(digests.values()), digests
        cases = []
        for i in range(7):
            n = [1, 2, 3][i] if i < 3 else rng.randint(4, 40)
            values = [_c_number(rng) for _ in range(n)]
            sep = rng.choice([" ", "\n", "  ", "\t"])
            text = sep.join(values) + ("\n" if i % 2 else "")
            cases.append({"stdin": text, "stdout": proj.expected([float(x) for x in values])})
        sample_vals = [_c_number(rng) for _ in range(rng.randint(8, 15))]
        sample = "\n".join(sample_vals) + "\n"
        drop = proj.victim if proj.victim in proj.modules else proj.dropped_obj
        dropped = proj.files(drop=drop)
        dropped_changed = {r: t for r, t in dropped.items() if broken_files.get(r) != t}
        single = {
            "Makefile": proj.makefile(frozenset(), single=True),
            "src/main.c": proj.single_main(),
        }
        mut_make = fixed_files["Makefile"]
        if proj.install:
            mut_make = mut_make.replace("$(DESTDIR)", "")
        else:
            mut_make = mut_make.split("clean:")[0] + ".PHONY: all\n"
        files = {f"environment/project/{rel}": text for rel, text in broken_files.items()}
        files["environment/project/examples/input.txt"] = sample
        files["environment/project/examples/expected.txt"] = proj.expected(
            [float(x) for x in sample_vals]
        )
        stat_docs = [(proj.labels[s], C_STAT_DOCS[s]) for _, s in proj.stats]
        fixes = [(b, proj.fix(b)) for b in proj.breakages]
        if proj.install:
            fixes.append(("install", proj.fix_install()))
        context = {
            "root": root,
            "prog": proj.prog,
            "level": level,
            "install": proj.install,
            "breakages": proj.breakages,
            "fixes": fixes,
            "changed": changed,
            "partial_changed": partial_changed,
            "dropped_changed": dropped_changed,
            "dropped_files": [f"src/{drop}.c", f"{proj.incdir}/{drop}.h"],
            "single": single,
            "module_files": [f"src/{m}.c" for m in proj.modules]
            + [f"{proj.incdir}/{m}.h" for m in proj.modules],
            "functions": functions,
            "digests": digests,
            "cases": cases,
            "codes": proj.codes,
            "precision": proj.precision,
            "stat_docs": stat_docs,
            "objdir": proj.objdir,
            "mut_makefile": mut_make,
            "stat_functions": [
                [proj.fn(m, st), f"src/{m}.c", proj.labels[st]] for m, st in proj.stats
            ],
            "manpage": fixed_files.get(f"man/{proj.prog}.1", ""),
        }
        mutations = {}
        if level >= 2:
            # one near miss per breakage but the last (fix-all-but-one leaves that one): the
            # reference solution with that one repair left out
            mutations.update(near_misses(self, context, proj.breakages[:-1]))
        return Draft(
            context=context,
            files=files,
            outputs=[f"{root}/{proj.prog}"],
            separate_verifier=True,
            artifacts=[root],
            verifier_timeout_sec=180.0,
            tags=["c", "make", *proj.breakages] + (["install", "destdir"] if proj.install else []),
            faults=list(proj.breakages) if level >= 2 else [],
            traps=_traps(proj) if level >= 2 else [],
            mutations=mutations,
        )
