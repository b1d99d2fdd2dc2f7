"""scripts/run builds only when the sources changed since the binary was built (issue 41: SwiftPM's no-op build took
18–49 s before every start). Run in a copy of the repository's layout with a stand-in `swift` that records its calls
and a stand-in binary, so nothing is compiled."""
import os
import pathlib
import shutil
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]


def layout(tmp_path: pathlib.Path) -> tuple[pathlib.Path, dict]:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    for name in ("run", "bootstrap"):
        shutil.copy(REPO / "scripts" / name, repo / "scripts" / name)
    (repo / "Sources" / "x").mkdir(parents=True)
    (repo / "Sources" / "x" / "a.swift").write_text("// a source\n")
    (repo / "Package.swift").write_text("// the manifest\n")
    (repo / "Tests").mkdir()
    (repo / "Tests" / "requirements.txt").write_text("")
    binary = repo / ".build" / "release" / "livecontrols"
    binary.parent.mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "swift-calls"
    # The stand-in `swift` records each call and "builds": it writes a new stand-in binary.
    (bin_dir / "swift").write_text(f"""#!/bin/sh
echo "$@" >> {calls}
printf '#!/bin/sh\\necho "LiveControls listening on http://127.0.0.1:1/ (WebSocket ws://127.0.0.1:1/ws)"\\n' > {binary}
chmod +x {binary}
""")
    (bin_dir / "swift").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return repo, env


def run(repo: pathlib.Path, env: dict) -> str:
    done = subprocess.run([str(repo / "scripts" / "run"), "--port", "0"], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_scripts_run_builds_only_when_the_sources_changed(tmp_path):
    repo, env = layout(tmp_path)
    calls = tmp_path / "swift-calls"
    assert "listening" in run(repo, env)  # no binary yet: built
    assert calls.read_text().count("build") == 1
    assert "listening" in run(repo, env)  # nothing changed: started at once, no build
    assert calls.read_text().count("build") == 1
    source = repo / "Sources" / "x" / "a.swift"
    source.write_text("// changed\n")
    built = (repo / ".build" / "release" / "livecontrols").stat().st_mtime
    os.utime(source, (built + 1, built + 1))  # changed after the build
    assert "listening" in run(repo, env)
    assert calls.read_text().count("build") == 2
