# Two commands for a fresh machine: `make demo` and `make test` (see README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Exact versions and hashes of every package (`make lock`): LOCK for the venv and CI (the
# dev tools included), RUNTIME_LOCK for the container and servers (the same versions, without
# the dev tools). Both carry pip and setuptools (build-tools.in), so every install is
# `pip install --require-hashes -r <lock>`, then the package itself with --no-deps.
LOCK := constraints.txt
RUNTIME_LOCK := requirements.txt
LOCK_VENV := .lock-venv
UV_VERSION := 0.13.9
# Patron texts (README, "Translating"): English in bot/texts/catalog, the other
# languages in $(LOCALE)/<lang>/LC_MESSAGES/messages.po, read as they are at start-up.
LOCALE := bot/texts/locale
POT := $(LOCALE)/messages.pot

.PHONY: demo dist test lint typecheck pytest bench browser unit-tools clean lock messages extract-messages compile-messages

$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes --requirement $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

# The template from the source (msgctxt = key, msgid = English), then every .po updated from it.
# The creation date is dropped so that the files change only when the texts do.
messages: extract-messages
	$(BIN)/pybabel --quiet update --input-file $(POT) --output-dir $(LOCALE) \
		--ignore-obsolete --width 76
	sed -i '/^"POT-Creation-Date: /d' $(POT) $(LOCALE)/*/LC_MESSAGES/messages.po

# tests/texts runs this into a scratch file to check that the checked-in template is current.
extract-messages: | $(STAMP)
	$(BIN)/pybabel --quiet extract --mapping-file bot/texts/babel.cfg \
		--no-default-keywords --keyword '_:1c,2' --keyword '_n:1c,2,3' \
		--add-comments TRANSLATORS: --strip-comment-tags --add-location file --width 76 \
		--project library-bot --copyright-holder library-bot \
		--header-comment '# Patron texts of library-bot (English source), made by `make messages`.' \
		--output-file $(POT) bot/texts/catalog

# Nothing to compile: the bot reads the .po itself (bot/texts). Kept so that older
# instructions (`make .venv/.installed compile-messages`) still work; it checks the catalogues.
compile-messages: | $(STAMP)
	$(BIN)/python -c 'import bot.texts'

# Resolve pyproject.toml (and build-tools.in) with uv and write both locks with hashes.
# Versions already in the lock are kept where still allowed, so after a change to the
# dependencies only what changed moves; `make lock UPGRADE=1` takes the newest of everything.
# uv reads PyPI itself (not this machine's pip configuration), so the hashes are PyPI's.
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet 'uv==$(UV_VERSION)'
	$(LOCK_VENV)/bin/uv pip compile --quiet --python-version 3.11 --generate-hashes \
		--custom-compile-command 'make lock' $(if $(UPGRADE),--upgrade) \
		--extra dev pyproject.toml build-tools.in --output-file $(LOCK)
	$(LOCK_VENV)/bin/uv pip compile --quiet --python-version 3.11 --generate-hashes \
		--custom-compile-command 'make lock' --constraint $(LOCK) $(if $(UPGRADE),--upgrade) \
		pyproject.toml build-tools.in --output-file $(RUNTIME_LOCK)
	rm -rf $(LOCK_VENV)

# Debian's Chromium for the end-to-end tests; Playwright drives it via executable_path.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji >/dev/null; }

# strace and systemd-analyze for tests/runtime/test_unit.py (the unit's sandbox, checked offline).
unit-tools:
	@command -v strace >/dev/null 2>&1 && command -v systemd-analyze >/dev/null 2>&1 || { \
		echo "installing Debian's strace and systemd for the unit's tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace systemd >/dev/null; }

demo: $(STAMP)
	$(BIN)/library-bot demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP) browser unit-tools
	$(BIN)/pytest -q

test: lint typecheck pytest

# The bench extra (aiogram, bench.anchors' bare bot) beside the lock: aiogram asks for an older
# pydantic than the lock's, and runs on the lock's (pyproject.toml, `bench`).
BENCH_STAMP := $(VENV)/.bench
$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --no-deps aiogram==3.31.0 magic-filter==1.0.12 \
		aiofiles==25.1.0
	touch $(BENCH_STAMP)

bench: $(STAMP) $(BENCH_STAMP)
	$(BIN)/python -m bench $(if $(FULL),--full)

# A release: the sdist and the wheel built from it, never from this tree's build/ (a stale
# one would go into the wheel). Run it on a clean checkout of the release's commit.
dist: $(STAMP)
	deploy/build-wheel $(BIN)/python dist

clean:
	rm -rf $(VENV) $(LOCK_VENV) .mypy_cache .ruff_cache .pytest_cache build dist
