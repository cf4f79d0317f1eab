"""The package as a user installs it: the wheel and sdist are built from this checkout, and
each set of extras is installed alone from the wheel into a fresh virtual environment
(versions pinned to uv.lock), where ``smoke.py`` imports every public module and uses
what the extras bring against real servers.

Needs uv (``scripts/test`` installs it) and the package index; without uv the tests skip,
and ``PARLEY_REQUIRE_PACKAGE=1`` (as CI sets) turns that skip into a failure."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tarfile
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import URL, make_url, text
from sqlalchemy.ext.asyncio import create_async_engine

from parley.stores.sql import database_url
from tests.servers import parley_serve

ROOT = Path(__file__).resolve().parents[2]
SMOKE = Path(__file__).with_name("smoke.py")

EXTRA_SETS = ["", "server", "grpc", "cli", "sqlite", "postgresql", "redis", "telemetry", "all"]
"""Each set of extras installed alone ("" is the core)."""


def _uv() -> list[str] | None:
    if found := shutil.which("uv"):
        return [found]
    for python in ("python3", "python"):
        interpreter = shutil.which(python)
        if (
            interpreter
            and subprocess.run(
                [interpreter, "-m", "uv", "--version"], capture_output=True
            ).returncode
            == 0
        ):
            return [interpreter, "-m", "uv"]
    return None


@pytest.fixture(scope="module")
def uv() -> list[str]:
    found = _uv()
    if found is None:
        if os.environ.get("PARLEY_REQUIRE_PACKAGE"):
            pytest.fail("PARLEY_REQUIRE_PACKAGE is set, but uv is not installed")
        pytest.skip("uv is not installed: scripts/test installs it")
    return found


@pytest.fixture(scope="module")
def built(uv: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder holding the wheel, the sdist and ``constraints.txt`` (uv.lock's pins)."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([*uv, "build", "--quiet", "--out-dir", str(out), str(ROOT)], check=True)
    pins = subprocess.run(
        [
            *uv,
            "export",
            "--frozen",
            "--all-extras",
            "--no-dev",
            "--no-hashes",
            "--no-emit-project",
            "--quiet",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (out / "constraints.txt").write_text(pins)
    return out


def _wheel(built: Path) -> Path:
    (wheel,) = built.glob("parley_a2a-*.whl")
    return wheel


def test_the_wheel_and_sdist_carry_the_package_and_its_command(built: Path) -> None:
    names = zipfile.ZipFile(_wheel(built)).namelist()
    assert "parley/py.typed" in names
    assert "parley/stores/sql/migrations/env.py" in names
    metadata = next(name for name in names if name.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(_wheel(built)).read(metadata).decode()
    assert "Name: parley-a2a" in text
    for extra in ("server", "grpc", "sqlite", "postgresql", "redis", "cli", "telemetry", "all"):
        assert f"Provides-Extra: {extra}" in text
    entry = next(name for name in names if name.endswith(".dist-info/entry_points.txt"))
    assert "parley = parley.cli:main" in zipfile.ZipFile(_wheel(built)).read(entry).decode()
    (sdist,) = built.glob("parley_a2a-*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    assert any(name.endswith("/src/parley/__init__.py") for name in members)
    assert any(name.endswith("/uv.lock") for name in members)


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The demo agent served from this checkout, JSON-RPC, HTTP+JSON and gRPC."""
    log = tmp_path_factory.mktemp("agent") / "serve.log"
    with parley_serve(["--db", "memory", "--grpc-port", "0"], log) as (_, url):
        yield url


@pytest.fixture(scope="module")
def postgres() -> Iterator[str | None]:
    """A PostgreSQL database of its own, dropped afterwards (None without a server)."""
    url = os.environ.get("PARLEY_TEST_POSTGRES_URL")
    if not url:
        yield None
        return
    server = make_url(database_url(url))
    name = f"parley_package_{uuid.uuid4().hex[:12]}"
    asyncio.run(_execute(server, f'CREATE DATABASE "{name}"'))
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(_execute(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def _execute(server: URL, statement: str) -> None:
    engine = create_async_engine(server, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            await connection.execute(text(statement))
    finally:
        await engine.dispose()


@pytest.mark.parametrize("extras", EXTRA_SETS, ids=lambda extras: extras or "core")
def test_each_set_of_extras_installs_alone_and_works(
    extras: str, uv: list[str], built: Path, agent: str, postgres: str | None, tmp_path: Path
) -> None:
    if extras == "postgresql" and postgres is None:
        if os.environ.get("PARLEY_REQUIRE_POSTGRES"):
            pytest.fail("PARLEY_REQUIRE_POSTGRES is set, but PARLEY_TEST_POSTGRES_URL is not")
        pytest.skip("no PostgreSQL: set PARLEY_TEST_POSTGRES_URL")
    venv = tmp_path / "venv"
    subprocess.run([*uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    wheel = f"{_wheel(built)}[{extras}]" if extras else str(_wheel(built))
    subprocess.run(
        [
            *uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(python),
            "-c",
            str(built / "constraints.txt"),
            wheel,
        ],
        check=True,
    )
    config = {"agent": agent, "postgres": postgres, "redis": "redis://127.0.0.1:6379/0"}
    smoke = subprocess.run(
        [str(python), str(SMOKE), extras, json.dumps(config)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert smoke.stdout.strip().endswith("ok")
