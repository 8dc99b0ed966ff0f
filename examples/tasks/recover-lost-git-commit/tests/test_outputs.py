import subprocess

REPO = "/srv/fetcher"
README_COMMIT = "603a5c5bec6959942437791a52e5d79a273fcdda"  # "Document usage in README"
SUBJECTS = [
    "Add retry logic to fetcher",
    "Document usage in README",
    "Add configuration loader",
    "Initial commit: fetcher skeleton",
]
# Blob ids (content hashes) the files must have at the tip of main.
BLOBS = {
    "fetcher.py": "8e1a859e23b73da592e5c61541bec0144bc677b0",  # the lost commit's final version
    "tests/test_retry.py": "d83fd19894e53799a099be247f9daecd4a7a9dba",
    "README.md": "da88af23ffa9c1d154b08c20f821614bf6f59c85",  # with the usage section
    "config.py": "1c1fa548edf63dde8311b7e01e6348702bb8ef96",
}


def git(*args):
    run = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, f"git {' '.join(args)} failed: {run.stderr}"
    return run.stdout.strip()


def test_main_checked_out():
    assert git("symbolic-ref", "HEAD") == "refs/heads/main"


def test_history_of_main():
    assert git("log", "--format=%s", "main").splitlines() == SUBJECTS


def test_existing_commits_kept():
    assert git("rev-parse", "main~1") == README_COMMIT


def test_linear_history():
    assert git("rev-list", "--merges", "main") == ""


def test_recovered_commit_author():
    assert git("log", "-1", "--format=%an <%ae>", "main") == "Dana Developer <dana@example.com>"


def test_recovered_commit_changes_only_feature_files():
    changed = git("diff", "--name-only", "main~1", "main").splitlines()
    assert sorted(changed) == ["fetcher.py", "tests/test_retry.py"]


def test_files_at_tip():
    files = sorted(git("ls-tree", "-r", "--name-only", "main").splitlines())
    assert files == sorted(BLOBS)
    for path, blob in BLOBS.items():
        assert git("rev-parse", f"main:{path}") == blob, f"{path} differs from the expected content"


def test_working_tree_clean():
    assert git("status", "--porcelain", "--untracked-files=all") == ""
    for path, blob in BLOBS.items():
        assert git("hash-object", path) == blob, f"{path} in the working tree differs"
