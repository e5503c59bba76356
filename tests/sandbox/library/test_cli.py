"""`library-bot sandbox` prints the environment lines and the patron lines, then serves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from tests.fixtures.patrons import FAMILY, JONAS, KAREN, METTE, OLE

SCRIPT = Path(sys.executable).parent / "library-bot"
NAMES = ["OAUTH_URL", "AUTH_URL", "LOGIN_URL", "PLATFORM_URL", "CLIENT_ID", "CLIENT_SECRET"]


def run_sandbox(*args: str) -> tuple[subprocess.Popen[str], dict[str, str], list[str]]:
    process = subprocess.Popen(  # noqa: S603 - our own console script
        [str(SCRIPT), "sandbox", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    env: dict[str, str] = {}
    patrons: list[str] = []
    while len(patrons) < 7:
        line = process.stdout.readline()
        assert line, process.stderr.read() if process.stderr else "no output"
        line = line.rstrip("\n")
        if line.startswith("patron "):
            patrons.append(line)
        else:
            name, _, value = line.partition("=")
            env[name] = value
    return process, env, patrons


def stop(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()


def test_sandbox_command_prints_env_and_patrons_and_serves():
    process, env, patrons = run_sandbox()
    try:
        assert list(env) == NAMES
        assert env["CLIENT_ID"] == "library-bot-sandbox" and len(env["CLIENT_SECRET"]) >= 16
        for name in NAMES[:4]:
            assert env[name].startswith("http://127.0.0.1:") and not env[name].endswith("/")
        assert len({env[name] for name in NAMES[:4]}) == 4
        assert patrons[0].startswith("patron 1000000001 1234 ")
        assert [line.split(" ")[1] for line in patrons] == [
            KAREN, OLE, METTE, JONAS, *FAMILY,
        ]  # fmt: skip
        assert all(len(line.split(" ", 3)[3]) > 5 for line in patrons)
        response = httpx.post(
            f"{env['AUTH_URL']}/oauth/token",
            auth=(env["CLIENT_ID"], env["CLIENT_SECRET"]),
            data={"grant_type": "password", "username": "@", "password": "@"},
        )
        assert response.status_code == 200
    finally:
        assert stop(process) == 0


def test_sandbox_command_single_port():
    process, env, _ = run_sandbox("--single-port")
    try:
        assert len({env[name] for name in NAMES[:4]}) == 1
        assert httpx.get(f"{env['PLATFORM_URL']}/v3/user").status_code == 401
    finally:
        assert stop(process) == 0


def test_sandbox_command_delays_orders_as_for_a_person():
    process, env, _ = run_sandbox("--single-port")
    url = env["OAUTH_URL"]
    redirect = "http://127.0.0.1:8080/oauth/callback"
    try:
        login = httpx.post(
            f"{url}/oauth/authorize",
            data={
                "response_type": "code", "client_id": env["CLIENT_ID"], "redirect_uri": redirect,
                "agency": "710100", "user_id": OLE, "pin": "1234", "action": "login",
            },
        )  # fmt: skip
        code = httpx.URL(login.headers["location"]).params["code"]
        token = httpx.post(
            f"{url}/oauth/token",
            data={
                "grant_type": "authorization_code", "code": code, "redirect_uri": redirect,
                "client_id": env["CLIENT_ID"], "client_secret": env["CLIENT_SECRET"],
            },
        ).json()["access_token"]  # fmt: skip
        placed = httpx.get(
            f"{url}/v3/order",
            params={
                "access_token": token,
                "pids": '["870970-basis:22871420"]',
                "pickUpBranch": "DK-710104",
            },
        )
        assert placed.json()["data"]["status"] == "ok"
        status = httpx.get(f"{url}/v3/user", params={"access_token": token}).json()
        assert status["data"]["orders"] == []  # on its way for a few seconds
    finally:
        assert stop(process) == 0
