# Receipts: the two commands are `make run` and `make test`.
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
# make run listens on this machine only (its demo login is public); HOST=0.0.0.0 opens it.
HOST ?= 127.0.0.1
export PORT HOST

.PHONY: run serve test install install-dev migrate demo lint format clean

# The service's packages (requirements.txt): installs only when that file changed since the
# last install.
$(VENV)/.installed: requirements.txt
	@python=$$(scripts/find-python) || exit 1; \
	if [ ! -x $(PY) ] || ! $(PY) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)'; then \
		echo "Creating $(VENV) with $$python"; rm -rf $(VENV); "$$python" -m venv $(VENV) || exit 1; \
	fi
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

# The test, lint and type-checking tools on top (requirements-dev.txt). It depends on the
# stamp above, so a change to either file installs again.
$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@touch $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

migrate: install
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py load_demo

# The embedded default: SQLite and a broker kept in files under var/, so nothing external
# is needed. Two workers run beside the web server and stop with it: one for checks and the
# judge (with the sweeper's schedule), one for webhook deliveries and export jobs, so a
# backlog of those never holds up a check.
run: demo
	$(PY) manage.py collectstatic --noinput --verbosity 0
	@echo "Receipts on http://$(HOST):$(PORT)/ (Ctrl-C stops the server and the workers)"
	@$(VENV)/bin/celery -A grounding_site worker --beat --queues celery,judge --concurrency 1 --loglevel WARNING \
		--hostname checks@%h --schedule var/celerybeat-schedule & checks=$$!; \
	$(VENV)/bin/celery -A grounding_site worker --queues webhooks,exports --concurrency 1 --loglevel WARNING \
		--hostname background@%h & background=$$!; \
	trap 'kill $$checks $$background 2>/dev/null; wait $$checks $$background 2>/dev/null' EXIT INT TERM; \
	$(PY) manage.py runserver --noreload $(HOST):$(PORT)

# Production: gunicorn, a worker per queue and the scheduler (Procfile), on the services
# named by DATABASE_URL and REDIS_URL; see the README's production section.
serve: install
	@test -n "$$DATABASE_URL" || { echo "make serve needs DATABASE_URL (PostgreSQL) and REDIS_URL"; exit 1; }
	@test -n "$$REDIS_URL" || { echo "make serve needs REDIS_URL"; exit 1; }
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(VENV)/bin/honcho start -f Procfile

test: install-dev
	$(PY) -m pytest -m "not services and not browser and not pdf" -n 2

lint: install-dev
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .

format: install-dev
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf var staticfiles
