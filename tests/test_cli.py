import base64

from bot.cli import main
from tests.fixtures.cli import library_bot, python


def test_generate_key_prints_one_usable_key(capsys):
    assert main(["generate-key"]) == 0
    line = capsys.readouterr().out.strip()
    assert "\n" not in line
    assert len(base64.urlsafe_b64decode(line + "=" * (-len(line) % 4))) == 32


def test_malformed_setting_is_one_line_naming_the_variable(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PORT": "eighty", "HOME": str(tmp_path)}
    done = library_bot("migrate", env=env, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "PORT" in done.stderr
    assert "Traceback" not in done.stderr


def test_run_loads_nothing_of_the_sandbox(tmp_path):
    # `run` without its settings stops at a configuration error, after parsing its command.
    probe = (
        "import sys\n"
        "from bot.cli import main\n"
        "import bot.runtime.runner\n"
        "code = main(['run'])\n"
        "print(code, sorted(m for m in sys.modules if m.partition('.')[0] == 'sandbox'))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = python("-c", probe, env=env, cwd=tmp_path)
    assert done.stdout.strip() == "2 []", done.stderr


def test_help_lists_the_sandbox_commands_beside_the_bot_s(capsys):
    try:
        main(["--help"])
    except SystemExit as exit_:
        assert exit_.code == 0
    listed = capsys.readouterr().out
    for command in ("run", "demo", "sandbox", "remind", "migrate", "generate-key", "rotate-keys"):
        assert command in listed
    try:
        main(["sandbox", "--help"])
    except SystemExit as exit_:
        assert exit_.code == 0
    assert "--single-port" in capsys.readouterr().out
