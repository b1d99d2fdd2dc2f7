"""web/livecontrols.d.ts against a typed example (Tests/types/example.ts): `tsc --noEmit --strict` (Debian's
node-typescript, installed by scripts/bootstrap) accepts the example and rejects each line marked @ts-expect-error."""
import shutil
import subprocess

import pytest

from livecontrols_server import REPO


def test_the_js_clients_declarations_type_check_a_page_script():
    tsc = shutil.which("tsc")
    if tsc is None:
        pytest.skip("tsc is not installed (Debian: node-typescript)")
    result = subprocess.run([tsc, "-p", str(REPO / "Tests" / "types" / "tsconfig.json")], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
