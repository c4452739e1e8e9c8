"""The one third-party script the web app serves, SortableJS, is byte for byte the file npm publishes:
the version pinned in tools/web/package.json, the tarball whose sha512 the lock file records (npm's
`integrity`, the registry's own published checksum), and in it the very file and licence committed in
static/vendor/. No browser needed; the tarball comes from npm's cache (`make setup` ran `npm ci`), or
from the registry with `npm pack` when the cache lacks it."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "web"
VENDOR = ROOT / "services" / "web" / "src" / "meldstream_web" / "static" / "vendor"
PACKAGE = "sortablejs"
# The published tarball's files, and the committed copies they must equal.
FILES = {
    "package/Sortable.min.js": VENDOR / "Sortable.min.js",
    "package/LICENSE": VENDOR / "Sortable.LICENSE",
}


def _locked() -> tuple[str, str, str]:
    """The pinned version, and the lock's version, tarball address (npm may leave out the default
    registry's) and integrity (`sha512-<base64>`)."""
    wanted = json.loads((TOOLS / "package.json").read_text())["devDependencies"][PACKAGE]
    lock = json.loads((TOOLS / "package-lock.json").read_text())
    entry = lock["packages"][f"node_modules/{PACKAGE}"]
    assert entry["version"] == wanted, (entry["version"], wanted)
    return wanted, entry.get("resolved", ""), entry["integrity"]


def _tarball(version: str, integrity: str, tmp_path: Path) -> bytes:
    """The package's tarball: from npm's content-addressed cache, else fetched by `npm pack`."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    cache = subprocess.run([npm, "config", "get", "cache"], capture_output=True, text=True, check=True)
    digest = base64.b64decode(integrity.removeprefix("sha512-")).hex()
    content = Path(cache.stdout.strip()) / "_cacache" / "content-v2" / "sha512"
    cached = content / digest[:2] / digest[2:4] / digest[4:]
    if cached.is_file():
        return cached.read_bytes()
    packed = subprocess.run(
        [npm, "pack", f"{PACKAGE}@{version}", "--pack-destination", str(tmp_path), "--silent"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if packed.returncode != 0:
        pytest.skip(f"the {PACKAGE} tarball is neither in npm's cache nor fetchable: {packed.stderr[-300:]}")
    return (tmp_path / packed.stdout.strip().splitlines()[-1]).read_bytes()


def test_the_vendored_sortablejs_is_the_published_file(tmp_path: Path) -> None:
    version, resolved, integrity = _locked()
    assert version.count(".") == 2 and version[0].isdigit(), f"{PACKAGE} pinned exactly, not {version!r}"
    assert resolved in ("", f"https://registry.npmjs.org/{PACKAGE}/-/{PACKAGE}-{version}.tgz"), resolved
    assert integrity.startswith("sha512-"), integrity
    tarball = _tarball(version, integrity, tmp_path)
    published = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
    assert published == integrity, "the tarball is not the one the lock file (and the registry) names"
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        manifest = archive.extractfile("package/package.json")
        assert manifest is not None and json.load(manifest)["version"] == version
        for member, committed in FILES.items():
            inside = archive.extractfile(member)
            assert inside is not None, member
            assert inside.read() == committed.read_bytes(), f"{committed.name} is not {member} of {version}"
    # The copy the page loads names the same version in its banner.
    assert f"Sortable {version} " in (VENDOR / "Sortable.min.js").read_text()[:80]
    index = (VENDOR.parent / "index.html").read_text()
    assert 'src="/static/vendor/Sortable.min.js"' in index
