# leafkit — developer entry points.
#
#   make lab          create .venv if needed, install '.[lab]', open JupyterLab on lesson 0, as a
#                     learner sees it (the notebooks alone: no exercise solutions); in English, or
#                     in Chinese when LANG is zh_* (LESSON_LANG=zh or en chooses); it prints where
#                     both languages start
#   make lab-zh       the same, on the Chinese lesson 0 (中文课程：lessons/zh/00_start_here.ipynb)
#   make lab-torch    the same, with real PyTorch installed too (to try `import torch`)
#   make lab-teacher  the same, for editing lessons: jupytext opens each notebook together with its
#                     Markdown source (solutions included), and saving writes both
#                     (all of them: LAB_ARGS='--port=8890' passes options to `jupyter lab`)
#   make lessons      write the generated parts from lessons/manifest.toml, sync every lesson (en + zh)
#                     from its .md source and execute it (nbclient); needs only '.[lab]' and graphviz
#   make lesson L=01  the same for one lesson (file name prefix; both languages), and for the lessons
#                     whose generated parts changed (lesson 0 and the last lesson, after adding one)
#   make test         install '.[test,parity,lab]' and run the WHOLE suite: lint, then the gradient
#                     suites on the reference path (LEAFKIT_FAST=0), then one pytest run of
#                     unit + parity + browser (JupyterLab in headless Chromium) +
#                     binder checks + nbval on every lessons/*.ipynb and lessons/zh/*.ipynb
#   make test-fast    unit tests only (no browser, no parity, no nbval, no slow tests)
#   make lint         ruff check + ruff format --check on the paths in LINT_PATHS, mypy on the autograd core
#   make system-deps  apt-get install graphviz + chromium (+ fonts, python3-venv); needs root
#   make binder-pins  rewrite the exact pins in binder/requirements.txt from .venv
#
# Works on a fresh Debian machine with Python 3.11; `make test` installs missing
# system packages itself when run as root with apt-get (set NO_SYSTEM_DEPS=1 to
# forbid that).  Extra pytest arguments: make test PYTEST_ARGS='-x -k smoke'.

SHELL        := /bin/bash
.SHELLFLAGS  := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON       ?= python3
VENV         ?= .venv
VPY          := $(VENV)/bin/python
PIP          := $(VPY) -m pip
PIP_FLAGS    ?=
PYTEST_ARGS  ?=
APT_PACKAGES ?= graphviz chromium fonts-dejavu-core fonts-wqy-zenhei

# The gradient suites (gradcheck, gradgradcheck, op parity, gradient routing, random programs, higher order,
# saved-tensor hooks, the profiler's rebinding of the engine)
# run a second time on the reference path: LEAFKIT_FAST=0 leaves out the speed-ups of
# leafkit/_functions/_fast.py, so both paths are shown to give PyTorch's gradients.
REFERENCE_TESTS ?= tests/engine/test_gradcheck.py tests/engine/test_op_db.py tests/engine/test_engine.py \
  tests/engine/test_views_inplace.py tests/parity/test_op_db_parity.py tests/parity/test_gradient_routing.py \
  tests/parity/test_random_programs.py tests/parity/test_random_inplace_programs.py \
  tests/parity/test_higher_order.py tests/parity/test_engine_parity.py tests/parity/test_grads_batched_parity.py \
  tests/parity/test_saved_tensors_hooks_parity.py tests/parity/test_profiler_parity.py

# Notebook validation (nbval) is added only when lessons exist; pytest collects lessons/zh/ too,
# with the same sanitize file.
LESSONS      := $(wildcard lessons/*.ipynb lessons/zh/*.ipynb)
SANITIZE     := $(wildcard lessons/sanitize.cfg)
NBVAL_ARGS   := $(if $(LESSONS),--nbval --nbval-current-env $(if $(SANITIZE),--nbval-sanitize-with $(SANITIZE)) lessons)

# ruff (configured in pyproject.toml) on the whole repository: leafkit/, tests/, scripts/, bench/ and
# the lessons (their notebooks; the Markdown sources are the same code).
LINT_PATHS   ?= .

# jupyter-server refuses to start as root unless told so.  `make lab` serves the
# whole repository (root_dir) and opens lesson 0 in the learner's language; the printed
# URL (default_url) leads there too, for machines without a local browser.
ROOT_FLAG    := $(if $(filter 0,$(shell id -u)),--allow-root)
LESSON_LANG  ?= $(if $(filter zh%,$(firstword $(LC_ALL) $(LC_MESSAGES) $(LANG))),zh,en)
EN_START     := lessons/00_start_here.ipynb
ZH_START     := lessons/zh/00_start_here.ipynb
START_NB     := $(wildcard $(if $(filter zh,$(LESSON_LANG)),$(ZH_START),$(EN_START)))

# Install stamps: redone when pyproject.toml changes.
DEPS_LAB     := $(VENV)/.deps-lab
DEPS_FAST    := $(VENV)/.deps-fast
DEPS_TEST    := $(VENV)/.deps-test
DEPS_TORCH   := $(VENV)/.deps-torch

.PHONY: help lab lab-zh lab-torch lab-teacher open-lab lessons lesson check-graphviz lint binder-pins test test-fast test-browser venv system-deps check-system-deps clean-venv

help:
	@sed -n '3,27p' Makefile | sed 's/^# \{0,1\}//'

# ---------------------------------------------------------------- venv ----
$(VPY):
	@$(PYTHON) -c 'import sys, ensurepip; assert sys.version_info >= (3, 10)' 2>/dev/null || { \
	  echo "error: '$(PYTHON) -m venv' is not usable (need Python >= 3.10 with ensurepip)."; \
	  echo "       On Debian/Ubuntu: apt-get install -y python3 python3-venv"; exit 1; }
	$(PYTHON) -m venv $(VENV)

venv: $(VPY)

$(DEPS_LAB): pyproject.toml | $(VPY)
	$(PIP) install $(PIP_FLAGS) -e '.[lab]'
	@touch $@

$(DEPS_TORCH): $(DEPS_LAB)
	$(PIP) install $(PIP_FLAGS) -e '.[lab,torch]'
	@touch $@

$(DEPS_FAST): pyproject.toml | $(VPY)
	$(PIP) install $(PIP_FLAGS) -e '.[test]'
	@touch $@

# torch==2.13.0 (the parity extra) is pinned in pyproject.toml on purpose.
$(DEPS_TEST): pyproject.toml | $(VPY)
	$(PIP) install $(PIP_FLAGS) -e '.[test,parity,lab]'
	@touch $@ $(DEPS_LAB) $(DEPS_FAST)

clean-venv:
	rm -rf $(VENV)

# --------------------------------------------------------- system deps ----
system-deps:
	@if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
	  echo "error: system-deps needs root and apt-get. Run: sudo apt-get install -y $(APT_PACKAGES) python3-venv"; exit 1; fi
	DEBIAN_FRONTEND=noninteractive apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(APT_PACKAGES) \
	  $$($(PYTHON) -c 'import ensurepip' 2>/dev/null || echo python3-venv)

# dot is needed by lessons and viz tests; chromium by the browser tests
# (skipped without it, except under CI=true where it is an error).
check-system-deps:
	@missing=""; \
	command -v dot >/dev/null || missing="$$missing graphviz"; \
	{ [ -x "$${LEAFKIT_CHROMIUM:-/usr/bin/chromium}" ] || command -v chromium >/dev/null; } || missing="$$missing chromium"; \
	if [ -n "$$missing" ] && [ -z "$${NO_SYSTEM_DEPS:-}" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo ">> missing system packages:$$missing -- installing them with apt-get (NO_SYSTEM_DEPS=1 to skip)"; \
	  $(MAKE) --no-print-directory system-deps; missing=""; \
	fi; \
	for m in $$missing; do \
	  case "$$m" in \
	    graphviz) echo "error: graphviz 'dot' not found. Install it: apt-get install -y graphviz"; fail=1;; \
	    chromium) if [ "$${CI:-}" = true ]; then echo "error: chromium not found (CI=true). Install it: apt-get install -y chromium"; fail=1; \
	              else echo "warning: chromium not found; browser tests will be skipped. Install it: apt-get install -y chromium"; fi;; \
	  esac; \
	done; \
	[ -z "$${fail:-}" ]

# ---------------------------------------------------------------- run -----
lab: $(DEPS_LAB)
	$(MAKE) --no-print-directory open-lab

lab-zh: $(DEPS_LAB)
	$(MAKE) --no-print-directory open-lab LESSON_LANG=zh

lab-torch: $(DEPS_TORCH)
	$(MAKE) --no-print-directory open-lab

lab-teacher: $(DEPS_LAB)
	$(MAKE) --no-print-directory open-lab TEACHER=1

LEARNER_FLAGS := --ServerApp.jpserver_extensions=jupyterlab_jupytext=False \
  "--ContentsManager.hide_globs=['__pycache__', '*.pyc', '*.pyo', '.DS_Store', '*.so', '*.dylib', '*~', '[0-9][0-9]_*.md']"

open-lab:
	@command -v dot >/dev/null || echo "warning: graphviz 'dot' not found; graph drawings will not render (apt-get install -y graphviz)"
	@# the lessons are ours: trust them so their stored drawings show before they are run; no news pop-up
	$(VENV)/bin/jupyter trust lessons/*.ipynb $(wildcard lessons/zh/*.ipynb) >/dev/null
	$(VENV)/bin/jupyter labextension disable --level=sys_prefix "@jupyterlab/apputils-extension:announcements" >/dev/null 2>&1 || true
	@echo ">> English: lesson 0 is $(EN_START) (make lab LESSON_LANG=en)"
	@echo ">> 中文课程：第 0 课是 $(ZH_START)（用 make lab-zh 直接打开它）"
	@echo ">> opening $(START_NB); in the URL printed below, /lab/tree/$(EN_START) and /lab/tree/$(ZH_START) open either one"
	@# a learner's lab leaves jupytext's server extension off: with it, each notebook would open merged
	@# with its .md source, and so show the exercises' solutions (tests/browser/lab_harness.py does the same);
	@# the file browser does not list the sources either (jupyter_server's default hide_globs, plus NN_*.md)
	$(VENV)/bin/jupyter lab $(ROOT_FLAG) --ServerApp.root_dir="$(CURDIR)" \
	  $(if $(TEACHER),,$(LEARNER_FLAGS)) $(LAB_ARGS) \
	  $(if $(START_NB),--LabApp.default_url=/lab/tree/$(START_NB) $(START_NB))

# Lessons: lessons/*.md (and lessons/zh/*.md) are the sources; see scripts/build_lessons.py.
# The build needs the lab extra (jupytext, nbclient, ipykernel, matplotlib, scikit-learn, tqdm) and
# graphviz's dot for the drawings: not the test stack (torch, Playwright, ...).
lessons: $(DEPS_LAB) check-graphviz
	$(VPY) scripts/build_lessons.py

lesson: $(DEPS_LAB) check-graphviz
	@[ -n "$(L)" ] || { echo "usage: make lesson L=01   (a lesson's file name prefix)"; exit 2; }
	$(VPY) scripts/build_lessons.py $(L)

check-graphviz:
	@command -v dot >/dev/null || { echo "error: graphviz 'dot' not found; the lessons' drawings need it (apt-get install -y graphviz)"; exit 1; }

lint: $(DEPS_TEST)
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)
	$(VPY) -m mypy  # the files of [tool.mypy] in pyproject.toml

# The gradient suites on the reference path, then one pytest run: tests/ (unit, parity, browser, binder) + nbval
# over lessons/ and lessons/zh/.  Both always run; the exit code is the first failure's; artifacts/junit.xml holds
# both runs (the reference one as its own test suite).  (pytest's code 5, "no tests ran", is no failure for the
# reference run: PYTEST_ARGS='-k ...' may select nothing there.)
test: $(DEPS_TEST) check-system-deps lint
	@mkdir -p artifacts
	@rc=0; \
	echo "LEAFKIT_FAST=0 $(VPY) -m pytest $(REFERENCE_TESTS) ..."; \
	LEAFKIT_FAST=0 $(VPY) -m pytest $(REFERENCE_TESTS) -p no:cacheprovider \
	  --junitxml=artifacts/junit-reference.xml $(PYTEST_ARGS) || { r=$$?; [ $$r = 5 ] || rc=$$r; }; \
	echo "$(VPY) -m pytest tests $(NBVAL_ARGS) ..."; \
	$(VPY) -m pytest tests $(NBVAL_ARGS) --junitxml=artifacts/junit-main.xml --durations=15 $(PYTEST_ARGS) \
	  || { r=$$?; [ $$rc != 0 ] || rc=$$r; }; \
	$(VPY) scripts/merge_junit.py artifacts/junit.xml artifacts/junit-main.xml \
	  "artifacts/junit-reference.xml=reference path (LEAFKIT_FAST=0)" || true; \
	exit $$rc

test-fast: $(DEPS_FAST)
	$(VPY) -m pytest tests -m "not browser and not slow and not parity" \
	  --ignore=tests/browser --ignore=tests/test_binder_config.py $(PYTEST_ARGS)

test-browser: $(DEPS_TEST) check-system-deps
	$(VPY) -m pytest tests/browser $(PYTEST_ARGS)

binder-pins: $(DEPS_TEST)
	$(VPY) scripts/binder_pins.py --write
