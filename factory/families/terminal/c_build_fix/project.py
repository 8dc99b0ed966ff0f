"""The C project a c-build-fix task repairs: modules computing statistics over series, a report
program, a Makefile, and the breakages applied to them."""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path

from factory.families.terminal.words import WordTable

from .stats import C_STAT_LABELS, C_STATS, stat_value, uses_math

# =============================================================================================
# c-build-fix
# =============================================================================================

_WORDS = WordTable(Path(__file__).parent / "words.toml")
C_MODULES: list[str] = _WORDS["modules"]
C_SERIES: list[tuple[str, str]] = _WORDS.typed("series", list[tuple[str, str]])
C_REPORT: list[str] = _WORDS["report"]
C_PROGRAMS: list[str] = _WORDS["programs"]
C_BREAKAGES_PLAIN = [
    "missing-object",
    "include-path",
    "missing-libm",
    "recursive-var",
    "tab-separator",
]
C_BREAKAGES_SUBTLE = [
    "header-guard",
    "prototype-mismatch",
    "static-function",
    "header-definition",
    "silent-prototype",
]
#: Breakages only hard composes (two or three of these and the plain ones, beside one subtle).
C_BREAKAGES_HARD = [
    "wrong-library",
    "objdir-mkdir",
    "missing-include",
    "werror-unused",
    "clean-target",
]
#: Breakages that cannot be planted together (they break the same line).
C_EXCLUSIVE = [{"missing-libm", "wrong-library"}]


def _c_function_span(text: str, fname: str) -> str | None:
    """The body (braces included) of the definition of fname in C source text."""
    m = re.search(r"^[^\n;#]*\b" + re.escape(fname) + r"\s*\([^;{]*\)\s*\{", text, re.M)
    if not m:
        return None
    depth, i = 0, m.end() - 1
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i : j + 1]
    return None


def body_digest(text: str, fname: str) -> str | None:
    body = _c_function_span(text, fname)
    if body is None:
        return None
    return hashlib.sha256(re.sub(r"\s+", "", body).encode()).hexdigest()


class CProject:
    """Generates the sources of a small statistics tool, correct or with breakages."""

    def __init__(self, rng: random.Random, level: int):
        self.level = level
        self.prog = rng.choice(C_PROGRAMS)
        self.series, self.Series = rng.choice(C_SERIES)
        self.report = rng.choice(C_REPORT)
        self.std = rng.choice(["c99", "c11", "gnu11", "c17"])
        self.opt = rng.choice(["-O2", "-O1", "-O2 -g"])
        self.objdir = rng.choice(["build", "obj", ".objs", "out"])
        self.incdir = rng.choice(["include", "inc", "headers"])
        self.bad_incdir = rng.choice(
            [d for d in ["include", "inc", "headers", "hdr", "includes"] if d != self.incdir]
        )
        self.precision = rng.choice([2, 3, 4])
        self.codes = dict(zip(["bad", "empty"], rng.sample([2, 3, 4, 5, 65, 66], 2), strict=True))
        nmods = 2 if level == 0 else 3
        self.modules = rng.sample(C_MODULES, nmods)
        sqrt_stats = [s for s, (_, q) in C_STATS.items() if q]
        stats = [rng.choice(sqrt_stats)]
        stats += rng.sample([s for s in C_STATS if s not in stats], rng.randint(nmods, nmods + 2))
        rng.shuffle(stats)
        # distribute: every module gets at least one stat
        self.by_module: dict[str, list[str]] = {m: [] for m in self.modules}
        for i, stat in enumerate(stats):
            mod = self.modules[i] if i < nmods else rng.choice(self.modules)
            self.by_module[mod].append(stat)
        self.stats = [(m, s) for m in self.modules for s in self.by_module[m]]
        self.labels = {s: rng.choice(C_STAT_LABELS[s]) for _, s in self.stats}
        self.install = level >= 2
        # breakages
        if level == 0:
            kinds = [rng.choice(C_BREAKAGES_PLAIN + C_BREAKAGES_SUBTLE)]
        elif level == 1:
            kinds = rng.sample(C_BREAKAGES_PLAIN + C_BREAKAGES_SUBTLE, 2)
        else:
            # hard: one subtle breakage and two or three from the plain and hard-only pools
            kinds = [rng.choice(C_BREAKAGES_SUBTLE)]
            others: list[str] = []
            for _ in range(rng.randint(2, 3)):
                pool = [
                    b
                    for b in C_BREAKAGES_PLAIN + C_BREAKAGES_HARD
                    if b not in others
                    and not any(b in pair and pair & set(others) for pair in C_EXCLUSIVE)
                ]
                others.append(rng.choice(pool))
            kinds += others
            rng.shuffle(kinds)
        self.breakages = kinds
        # targets of the module-level breakages
        mods = list(self.modules)
        rng.shuffle(mods)
        self.victim = mods[0]
        self.victim_stat = rng.choice(self.by_module[self.victim])
        self.guard_donor = next(m for m in self.modules if m != self.victim)
        self.proto_bug = rng.choice(["int n", "float ret", "double *v"])
        self.silent_ret = rng.choice(["float", "int"])
        self.dropped_obj = rng.choice(self.modules)
        # targets of the hard-only breakages (drawn at hard only, so that easy and medium
        # tasks stay what they were)
        math_mods = [m for m in self.modules if any(uses_math(st) for st in self.by_module[m])]
        if level >= 2:
            self.math_mod = rng.choice(math_mods)
            self.noisy_mod = rng.choice(self.modules)
            self.bad_lib = rng.choice(["-lmath", "-lmaths", "-llibm"])
            self.build_id = f"{self.noisy_mod} {rng.randint(1, 4)}.{rng.randint(0, 19)}"
        else:
            self.math_mod, self.noisy_mod = math_mods[0], self.modules[0]
            self.bad_lib, self.build_id = "-lmath", f"{self.noisy_mod} 1.0"

    # --- names ------------------------------------------------------------------------------
    def fn(self, mod: str, stat: str) -> str:
        return f"{mod}_{stat}"

    def guard(self, mod: str) -> str:
        return f"{mod.upper()}_H"

    def functions(self) -> dict[str, str]:
        """Function name -> source file that must define it."""
        out = {
            f"{self.series}_read": f"src/{self.series}.c",
            f"{self.series}_free": f"src/{self.series}.c",
            f"{self.report}_line": f"src/{self.report}.c",
            "main": "src/main.c",
        }
        for mod, stat in self.stats:
            out[self.fn(mod, stat)] = f"src/{mod}.c"
        return out

    # --- repairs ----------------------------------------------------------------------------
    def fix(self, breakage: str) -> list[str]:
        """The commands (run in the project's root) a person types to repair one breakage."""
        inc, o, v, r = self.incdir, self.objdir, self.victim, self.report
        fn = self.fn(v, self.victim_stat)
        o_re = re.escape(o).replace("\\-", "-")
        fixes = {
            "missing-object": [f"sed -i 's|^OBJS = .*|& {o}/{v}.o|' Makefile"],
            "include-path": [f"sed -i 's|-I{self.bad_incdir}$|-I{inc}|' Makefile"],
            "missing-libm": ["sed -i 's/^LDLIBS =$/LDLIBS = -lm/' Makefile"],
            "wrong-library": ["sed -i 's/^LDLIBS = .*/LDLIBS = -lm/' Makefile"],
            "recursive-var": ["sed -i 's/^CFLAGS = \\$(CFLAGS) /CFLAGS += /' Makefile"],
            "tab-separator": ["sed -i 's/^    \\$(CC)/\\t$(CC)/' Makefile"],
            "objdir-mkdir": [f"sed -i '/^{o_re}\\/%\\.o:/a \\\\t@mkdir -p {o}' Makefile"],
            "clean-target": [f"sed -i 's|^\\trm -f \\*\\.o |\\trm -rf {o} |' Makefile"],
            "header-guard": [
                f"sed -i 's/\\b{self.guard(self.guard_donor)}\\b/{self.guard(v)}/' {inc}/{v}.h"
            ],
            "prototype-mismatch": [
                f"sed -i 's/^.*\\b{fn}(.*);$/double {fn}(const double *v, size_t n);/' {inc}/{v}.h"
            ],
            "static-function": [f"sed -i 's/^static double {fn}(/double {fn}(/' src/{v}.c"],
            "header-definition": [
                f"sed -i 's/^int {r}_precision = .*/extern int {r}_precision;/' {inc}/{r}.h",
                f"echo 'int {r}_precision = {self.precision};' >> src/{r}.c",
            ],
            "silent-prototype": [
                f"sed -i 's/^{self.silent_ret} {fn}(/double {fn}(/' {inc}/{v}.h",
                f"sed -i 's/^#include <stddef.h>$/&\\n\\n#include \"{v}.h\"/' src/{v}.c",
            ],
            "missing-include": [f"sed -i '1i #include <math.h>' src/{self.math_mod}.c"],
            "werror-unused": [
                f"sed -i '/^static const char {self.noisy_mod}_build_id/d' src/{self.noisy_mod}.c"
            ],
        }
        return fixes[breakage]

    def fix_install(self) -> list[str]:
        """Replace the install rule by one that honours DESTDIR and PREFIX."""
        return [
            "sed -i '/^install:/,/^$/d' Makefile",
            "cat >> Makefile <<'EOF'\n\n" + self.install_rule() + "EOF",
        ]

    def install_rule(self) -> str:
        return (
            "install: $(BIN)\n"
            "\tinstall -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1\n"
            "\tinstall -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/$(BIN)\n"
            f"\tinstall -m 644 man/{self.prog}.1 "
            f"$(DESTDIR)$(PREFIX)/share/man/man1/{self.prog}.1\n"
        )

    # --- files ------------------------------------------------------------------------------
    def files(
        self, broken: frozenset[str] = frozenset(), drop: str | None = None
    ) -> dict[str, str]:
        files = {"Makefile": self.makefile(broken, drop)}
        inc = self.incdir
        files[f"{inc}/{self.series}.h"] = self.series_h()
        files[f"src/{self.series}.c"] = self.series_c()
        files[f"{inc}/{self.report}.h"] = self.report_h("header-definition" in broken)
        files[f"src/{self.report}.c"] = self.report_c("header-definition" in broken)
        for mod in self.modules:
            if mod == drop:
                continue
            files[f"{inc}/{mod}.h"] = self.module_h(mod, broken)
            files[f"src/{mod}.c"] = self.module_c(mod, broken)
        files["src/main.c"] = self.main_c(drop)
        if self.install:
            files[f"man/{self.prog}.1"] = self.manpage()
        return files

    def makefile(
        self, broken: frozenset[str], drop: str | None = None, single: bool = False
    ) -> str:
        o = self.objdir
        objs = ["main", self.series, *self.modules, self.report]
        if "missing-object" in broken:
            objs.remove(self.victim)
        if drop:
            objs.remove(drop)
        if single:
            objs = ["main"]
        inc = self.bad_incdir if "include-path" in broken else self.incdir
        lines = [f"# Build of {self.prog}", "CC = gcc"]
        werror = " -Werror" if "werror-unused" in broken else ""
        flags = f"{self.opt} -std={self.std} -Wall{werror} -Werror=implicit-function-declaration"
        if "recursive-var" in broken:
            lines += [f"CFLAGS = {flags}", f"CFLAGS = $(CFLAGS) -I{inc}"]
        else:
            lines += [f"CFLAGS = {flags} -I{inc}"]
        if "missing-libm" in broken:
            lines.append("LDLIBS =")
        elif "wrong-library" in broken:
            lines.append(f"LDLIBS = {self.bad_lib}")
        else:
            lines.append("LDLIBS = -lm")
        if self.install:
            lines.append("PREFIX = /usr/local")
        lines += [f"BIN = {self.prog}", "OBJS = " + " ".join(f"{o}/{x}.o" for x in objs), ""]
        ind = "    " if "tab-separator" in broken else "\t"
        lines += [
            "all: $(BIN)",
            "",
            "$(BIN): $(OBJS)",
            ind + "$(CC) $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)",
            "",
        ]
        lines.append(f"{o}/%.o: src/%.c $(wildcard {self.incdir}/*.h)")
        if "objdir-mkdir" not in broken:
            lines.append(f"\t@mkdir -p {o}")
        lines += ["\t$(CC) $(CFLAGS) -c -o $@ $<", ""]
        if self.install:
            if "install" in broken:
                lines += ["install: $(BIN)", "\tinstall -m 755 $(BIN) /usr/local/bin/$(BIN)", ""]
            else:
                lines += [*self.install_rule().splitlines(), ""]
        lines += [
            "clean:",
            "\trm -f *.o $(BIN)" if "clean-target" in broken else f"\trm -rf {o} $(BIN)",
            "",
            ".PHONY: all clean" + (" install" if self.install else ""),
        ]
        return "\n".join(lines) + "\n"

    def series_h(self) -> str:
        g, S, s = f"{self.series.upper()}_H", self.Series, self.series
        return (
            f"#ifndef {g}\n#define {g}\n\n#include <stddef.h>\n#include <stdio.h>\n\n"
            f"typedef struct {{\n    double *items;\n    size_t count;\n    size_t cap;\n}} {S};\n\n"
            f"/* Read whitespace-separated numbers until EOF; 0 on success, -1 on a bad token. */\n"
            f"int {s}_read({S} *s, FILE *in);\nvoid {s}_free({S} *s);\n\n#endif\n"
        )

    def series_c(self) -> str:
        S, s = self.Series, self.series
        return (
            f'#include <stdlib.h>\n\n#include "{s}.h"\n\n'
            f"int {s}_read({S} *s, FILE *in)\n{{\n    double x;\n    int r;\n\n"
            "    s->items = NULL;\n    s->count = 0;\n    s->cap = 0;\n"
            '    while ((r = fscanf(in, "%lf", &x)) == 1) {\n'
            "        if (s->count == s->cap) {\n"
            "            size_t cap = s->cap ? s->cap * 2 : 16;\n"
            "            double *p = realloc(s->items, cap * sizeof *p);\n"
            "            if (!p)\n                return -1;\n"
            "            s->items = p;\n            s->cap = cap;\n        }\n"
            "        s->items[s->count++] = x;\n    }\n    return r == EOF ? 0 : -1;\n}\n\n"
            f"void {s}_free({S} *s)\n{{\n    free(s->items);\n    s->items = NULL;\n"
            "    s->count = s->cap = 0;\n}\n"
        )

    def report_h(self, broken: bool) -> str:
        g, r = f"{self.report.upper()}_H", self.report
        var = f"int {r}_precision = {self.precision};" if broken else f"extern int {r}_precision;"
        return (
            f"#ifndef {g}\n#define {g}\n\n/* Digits after the decimal point. */\n{var}\n\n"
            f"void {r}_line(const char *label, double value);\n\n#endif\n"
        )

    def report_c(self, broken: bool) -> str:
        r = self.report
        define = "" if broken else f"int {r}_precision = {self.precision};\n\n"
        return (
            f'#include <stdio.h>\n\n#include "{r}.h"\n\n{define}'
            f"void {r}_line(const char *label, double value)\n{{\n"
            f'    printf("%s: %.*f\\n", label, {r}_precision, value);\n}}\n'
        )

    def module_h(self, mod: str, broken: frozenset[str]) -> str:
        g = self.guard(
            self.guard_donor if ("header-guard" in broken and mod == self.victim) else mod
        )
        decls = []
        for stat in self.by_module[mod]:
            ret, params = "double", "const double *v, size_t n"
            if mod == self.victim and stat == self.victim_stat:
                if "prototype-mismatch" in broken:
                    if self.proto_bug == "int n":
                        params = "const double *v, int n"
                    elif self.proto_bug == "float ret":
                        ret = "float"
                    else:
                        params = "double *v, size_t n"
                if "silent-prototype" in broken:
                    ret = self.silent_ret
            decls.append(f"{ret} {self.fn(mod, stat)}({params});")
        return (
            f"#ifndef {g}\n#define {g}\n\n#include <stddef.h>\n\n"
            + "\n".join(decls)
            + "\n\n#endif\n"
        )

    def module_c(self, mod: str, broken: frozenset[str], own_header: bool = True) -> str:
        stats = self.by_module[mod]
        heads = [
            "#include <math.h>",
            "#include <stdlib.h>",
            "#include <string.h>",
            "#include <stddef.h>",
        ]
        if "missing-include" in broken and mod == self.math_mod:
            heads.remove("#include <math.h>")
        out = "\n".join(heads) + "\n\n"
        if "werror-unused" in broken and mod == self.noisy_mod:
            out += f'static const char {mod}_build_id[] = "{self.build_id}";\n\n'
        silent = "silent-prototype" in broken and mod == self.victim
        if own_header and not silent:
            out += f'#include "{mod}.h"\n\n'
        if "median" in stats:
            out += self.cmp_double()
        for stat in stats:
            static = (
                "static "
                if "static-function" in broken and mod == self.victim and stat == self.victim_stat
                else ""
            )
            out += (
                f"{static}double {self.fn(mod, stat)}(const double *v, size_t n)\n{{\n"
                f"{C_STATS[stat][0]}}}\n\n"
            )
        return out.rstrip("\n") + "\n"

    @staticmethod
    def cmp_double() -> str:
        return (
            "static int cmp_double(const void *a, const void *b)\n{\n"
            "    double x = *(const double *)a, y = *(const double *)b;\n\n"
            "    return (x > y) - (x < y);\n}\n\n"
        )

    def main_body(self, drop: str | None = None) -> str:
        s, r = self.series, self.report
        calls = "".join(
            f'    {r}_line("{self.labels[stat]}", {self.fn(mod, stat)}(data.items, data.count));\n'
            for mod, stat in self.stats
            if mod != drop
        )
        return (
            f"int main(void)\n{{\n    {self.Series} data;\n\n"
            f"    if ({s}_read(&data, stdin) != 0) {{\n"
            f'        fprintf(stderr, "{self.prog}: bad input\\n");\n'
            f"        {s}_free(&data);\n        return {self.codes['bad']};\n    }}\n"
            "    if (data.count == 0) {\n"
            f'        fprintf(stderr, "{self.prog}: no input\\n");\n'
            f"        {s}_free(&data);\n        return {self.codes['empty']};\n    }}\n"
            '    printf("count: %zu\\n", data.count);\n'
            f"{calls}    {s}_free(&data);\n    return 0;\n}}\n"
        )

    def main_c(self, drop: str | None = None) -> str:
        incs = [self.series, *[m for m in self.modules if m != drop], self.report]
        return (
            "#include <stdio.h>\n\n"
            + "".join(f'#include "{h}.h"\n' for h in incs)
            + "\n"
            + self.main_body(drop)
        )

    def single_main(self) -> str:
        """Everything in one file (a wholesale rewrite that behaves the same)."""
        out = (
            "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
            f"typedef struct {{\n    double *items;\n    size_t count;\n    size_t cap;\n}} {self.Series};\n\n"
        )
        out += self.series_c().split('#include "' + self.series + '.h"\n\n', 1)[1] + "\n"
        out += self.report_c(False).split('#include "' + self.report + '.h"\n\n', 1)[1] + "\n"
        for mod in self.modules:
            out += self.module_c(mod, frozenset(), own_header=False).split("\n\n", 1)[1] + "\n"
        return out + self.main_body()

    def manpage(self) -> str:
        return (
            f".TH {self.prog.upper()} 1\n.SH NAME\n{self.prog} \\- summary statistics of numbers\n"
            f".SH SYNOPSIS\n.B {self.prog}\n< numbers\n.SH DESCRIPTION\nReads numbers from "
            "standard input and prints summary statistics, one per line.\n"
        )

    def expected(self, values: list[float]) -> str:
        out = f"count: {len(values)}\n"
        for _mod, stat in self.stats:
            out += f"{self.labels[stat]}: {stat_value(stat, values):.{self.precision}f}\n"
        return out
