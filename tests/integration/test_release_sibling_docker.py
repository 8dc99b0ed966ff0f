"""An Ubuntu jammy-style Dockerfile that installs `openjdk-21-jdk-headless` (Debian bookworm, the
stand-in for ubuntu:22.04, has OpenJDK 17 only) certifies offline on the trixie sibling of its
stand-in, which has OpenJDK 21, with the swap noted; the same Dockerfile whose tests run a
Gradle wrapper that downloads Gradle is `unavailable_offline` naming Gradle alone (Java 21 can
be had), and nothing is built for it."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.offline_tasks import offline_task_toml, verdicts_by_name, write_task

from factory.validate.outcome import Outcome

pytestmark = pytest.mark.docker

TEST_SH = """\
#!/bin/bash
{gradle}
major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/.*java.specification.version = //p')
if [ "$major" = "21" ] && [ "$(cat /app/answer.txt 2>/dev/null)" = "42" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def _task(root: Path, name: str, *, gradle: bool) -> Path:
    files = {
        "instruction.md": "Write 6*7, computed in Java, to /app/answer.txt.\n",
        "environment/Dockerfile": (
            "FROM ubuntu:22.04\n"
            "RUN apt-get update && apt-get install -y --no-install-recommends "
            "openjdk-21-jdk-headless && rm -rf /var/lib/apt/lists/*\n"
            "ENV JAVA_HOME=/usr/lib/jvm/java-21-openjdk-amd64\n"
            "RUN javac -version\n"
            "WORKDIR /app\n"
        ),
        "solution/solve.sh": (
            "#!/bin/bash\ncd /tmp && printf 'class A { public static void main(String[] a) "
            "{ System.out.println(6 * 7); } }' > A.java && javac A.java && java A > /app/answer.txt\n"
        ),
        "tests/test.sh": TEST_SH.replace(
            "{gradle}", "./gradlew --version || true" if gradle else ""
        ),
    }
    if gradle:
        files["environment/gradle/wrapper/gradle-wrapper.properties"] = (
            "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.7-bin.zip\n"
        )
    toml = offline_task_toml(
        name,
        "Compile and run a Java class",
        verifier_timeout=120.0,
        memory_mb=2048,
        build_timeout=900.0,
    )
    return write_task(root, name, toml, files)


def test_java_21_for_jammy_comes_from_the_trixie_sibling(runtime, tmp_path):
    ok = _task(tmp_path / "tasks", "java-twentyone", gradle=False)
    gradle = _task(tmp_path / "tasks", "java-gradle", gradle=True)
    verdicts = verdicts_by_name(runtime, tmp_path / "report", [ok, gradle])

    good = verdicts["java-twentyone"]
    assert good.outcome is Outcome.VALID, (good.reason, good.notes)
    assert any(
        n.startswith("base factory/base:bookworm -> factory/base:trixie: the Dockerfile asks for")
        and "Java 21 (openjdk-21-jdk-headless; Debian bookworm has OpenJDK 17)" in n
        for n in good.notes
    ), good.notes
    assert any("ubuntu:22.04 -> factory/base:trixie" in n for n in good.notes), good.notes

    bad = verdicts["java-gradle"]
    assert bad.outcome is Outcome.UNAVAILABLE_OFFLINE
    assert "Gradle 8.7" in bad.reason and "Java 21" not in bad.reason, bad.reason
