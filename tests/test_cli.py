import base64
import subprocess
import sys

from bot.cli import main


def test_generate_key_prints_one_usable_key(capsys):
    assert main(["generate-key"]) == 0
    line = capsys.readouterr().out.strip()
    assert "\n" not in line
    assert len(base64.urlsafe_b64decode(line + "=" * (-len(line) % 4))) == 32


def test_malformed_setting_is_one_line_naming_the_variable(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PORT": "eighty", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "bot", "migrate"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "PORT" in done.stderr
    assert "Traceback" not in done.stderr
