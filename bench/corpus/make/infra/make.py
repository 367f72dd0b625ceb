"""Infrastructure and network failures made for real, on loopback only: package managers against a closed port on
127.0.0.1 or an unresolvable `.invalid` host, a full disk (a tiny tmpfs mounted under the project; needs root),
and processes that run out of memory (a V8 heap limit; a SIGKILL at an RSS limit, standing in for the kernel's
OOM killer). Each case goes to the ecosystem of the tool that failed; wrapped in the five CI shapes.

    sudo python3 bench/corpus/make/infra/make.py [CASE...]
"""

from __future__ import annotations

import contextlib
import http.server
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import WORK, Step, cleanup, env, first3, grep, node_project, project, version
from maker import ANSI_COLOUR, Cases, make_all, passing
from maker import failing as failing_step
from record import run, write_case

Made = tuple[list[Step], str, str, str, str]  # steps, tool, category, made_by, ecosystem
PY = sys.executable


def pre_steps(root: Path, cmds: list[str], e: dict[str, str] | None = None) -> list[Step]:
    return [passing(c, root, env(**(e or {}))) for c in cmds]


def failing(name: str, root: Path, cmd: str, causal: Callable[[list[str]], list[int]],
            e: dict[str, str] | None = None, shown: str | None = None) -> Step:
    # The shared step, in the argument order this file's cases were written with.
    return failing_step(cmd, root, env(**(e or {})), name, causal, strip=ANSI_COLOUR, shown=shown)


class TinyDisk:
    """A tmpfs of `size` mounted at `path` for the duration of a with-block."""

    def __init__(self, path: Path, size: str) -> None:
        self.path, self.size = path, size

    def __enter__(self) -> Path:
        self.path.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size}", "tmpfs", str(self.path)], check=True)
        return self.path

    def __exit__(self, *exc: object) -> None:
        subprocess.run(["umount", str(self.path)], check=False)


CASES: Cases[Callable[[str, str], Made]] = Cases()
case = CASES.case


PYFILES = {"requirements.txt": "requests==2.32.3\nattrs==24.2.0\n", "app/__init__.py": "",
           "tests/test_app.py": "def test_import():\n    import app\n"}


def pip_venv(name: str) -> str:
    v = WORK / "venvs" / name
    run(f"rm -rf {v} && {PY} -m venv {v}", cwd=WORK)
    return str(v / "bin" / "python")


@case
def pip_index_connection_refused(name: str, shape: str) -> Made:
    root = project(name, shape, PYFILES)
    py = pip_venv(name)
    steps = pre_steps(root, ["python --version"])
    steps.append(failing("Install", root, f"{py} -m pip install --index-url http://127.0.0.1:9/simple -r "
                                          "requirements.txt",
                         lambda o: first3(o, grep(o, r"Connection refused", limit=3) +
                                          grep(o, r"^ERROR: (Could not find|No matching)")),
                         shown="python -m pip install --index-url http://127.0.0.1:9/simple -r requirements.txt"))
    cleanup(root)
    return steps, "pip", "network", "pip " + version(f"{py} -m pip --version").split()[1], "python"


@case
def pip_dns_failure(name: str, shape: str) -> Made:
    root = project(name, shape, PYFILES)
    py = pip_venv(name)
    steps = pre_steps(root, ["python --version"])
    steps.append(failing("Install", root, f"{py} -m pip install --index-url https://pypi.mirror.invalid/simple -r "
                                          "requirements.txt",
                         lambda o: first3(o, grep(o, r"Name or service not known|Temporary failure in name "
                                                     r"resolution|Failed to resolve", limit=3) +
                                          grep(o, r"^ERROR: (Could not find|No matching)")),
                         shown="python -m pip install --index-url https://pypi.mirror.invalid/simple -r "
                               "requirements.txt"))
    cleanup(root)
    return steps, "pip", "network", "pip " + version(f"{py} -m pip --version").split()[1], "python"


@case
def pip_no_space_left(name: str, shape: str) -> Made:
    root = project(name, shape, {**PYFILES, "requirements.txt": "pygments==2.21.0\nidna==3.20\n"})
    py = pip_venv(name)
    steps = pre_steps(root, ["python --version"])
    with TinyDisk(root / "vendor", "600k"):
        steps.append(failing("Vendor dependencies", root, f"{py} -m pip install --target vendor -r requirements.txt",
                             lambda o: grep(o, r"No space left on device"),
                             shown="python -m pip install --target vendor -r requirements.txt"))
    cleanup(root)
    return steps, "pip", "infrastructure", "pip " + version(f"{py} -m pip --version").split()[1] + \
        ", vendor/ a 600 KiB tmpfs", "python"


def kill_at_rss(limit_mb: int, parent_cmd: str, stop: threading.Event) -> None:
    """Watch for the process running `parent_cmd`; SIGKILL it once its RSS passes `limit_mb` (the OOM killer)."""
    while not stop.is_set():
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            if parent_cmd in cmdline and "bash" not in cmdline.split()[0]:
                rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) if "VmRSS" in status else 0
                if rss > limit_mb * 1024:
                    os.kill(int(pid), signal.SIGKILL)
                    return
        time.sleep(0.05)


@case
def pytest_oom_killed(name: str, shape: str) -> Made:
    test = '''import pytest


def test_small():
    assert sum(range(10)) == 45


@pytest.mark.parametrize("n", [10, 100, 1000])
def test_table(n):
    assert len([0] * n) == n


def test_load_all_rows():
    rows = []
    for i in range(50_000_000):
        rows.append({"id": i, "name": f"row-{i}", "tags": ["a", "b"]})
    assert len(rows) == 50_000_000
'''
    # ulimit -v only as a safety net should the watchdog miss: it is far above the 400 MB at which it kills
    root = project(name, shape, {"tests/test_big.py": test, "ci.sh": "set -e\nulimit -v 3000000\npytest -v -p no:cacheprovider "
                                                                       "tests/test_big.py\necho done\n"})
    steps = pre_steps(root, ["python --version"])
    stop = threading.Event()
    t = threading.Thread(target=kill_at_rss, args=(400, "pytest -v -p no:cacheprovider tests/test_big.py", stop))
    t.start()
    try:
        steps.append(failing("Test", root, "bash ci.sh", lambda o: grep(o, r"Killed")))
    finally:
        stop.set()
        t.join()
    cleanup(root)
    return steps, "pytest", "infrastructure", version("pytest --version") + \
        "; SIGKILLed at 400 MB RSS by the generator's watchdog (the OOM killer's signal)", "python"


@case
def python_memoryerror_ulimit(name: str, shape: str) -> Made:
    script = '''"""Build the search index from the exported catalogue."""
import json
import sys

print("loading catalogue", flush=True)
items = [{"sku": f"SKU{i:07d}", "words": ["tea", "cake", str(i)]} for i in range(20_000)]
print(f"{len(items)} items", flush=True)
index = {}
for rep in range(10_000):
    for item in items:
        index.setdefault(item["sku"] + str(rep), item["words"] * 4)
print(json.dumps({"entries": len(index)}))
'''
    root = project(name, shape, {"scripts/build_index.py": script})
    steps = pre_steps(root, ["python --version"])
    steps.append(failing("Build index", root, "ulimit -v 400000 && python scripts/build_index.py",
                         lambda o: grep(o, r"^MemoryError", r'File ".*scripts/build_index\.py", line \d+'),
                         shown="python scripts/build_index.py"))
    cleanup(root)
    return steps, "python", "infrastructure", version("python --version") + " under ulimit -v 400000", "python"


@case
def node_heap_out_of_memory(name: str, shape: str) -> Made:
    build = '''// Pre-render every product page into one bundle.
const pages = [];
console.log("rendering product pages");
for (let i = 0; ; i++) {
  pages.push({ id: i, html: `<article id="p${i}">${"<p>lorem ipsum</p>".repeat(20)}</article>` });
  if (i % 200000 === 0) console.log(`rendered ${i} pages`);
}
'''
    root, ci_out = node_project(name, shape, {}, {"scripts/prerender.js": build},
                                {"build": "node --max-old-space-size=96 scripts/prerender.js"})
    steps = [Step("Install", "npm ci", ci_out)]
    steps.append(failing("Build", root, "npm run build", lambda o: grep(o, r"FATAL ERROR: .*heap out of memory|"
                                                                         r"JavaScript heap out of memory")))
    cleanup(root)
    return steps, "node", "infrastructure", f"node {version('node --version')}, --max-old-space-size=96", \
        "javascript"


@case
def npm_registry_connection_refused(name: str, shape: str) -> Made:
    root, _ = node_project(name, shape, {"left-pad": "1.3.0"}, {"index.js": "module.exports = 1;\n"},
                           {"test": "node index.js"})
    run("rm -rf node_modules", cwd=root)
    cache = WORK / "empty-npm-cache"
    run(f"rm -rf {cache}", cwd=WORK)
    e = {"npm_config_cache": str(cache), "npm_config_registry": "http://127.0.0.1:9/",
         "npm_config_fetch_retry_mintimeout": "500", "npm_config_fetch_retry_maxtimeout": "1000"}
    steps = pre_steps(root, ["node --version"])
    steps.append(failing("Install", root, "npm ci", lambda o: grep(o, r"ECONNREFUSED", limit=3), e=e))
    cleanup(root)
    return steps, "npm", "network", "npm " + version("npm --version"), "javascript"


@case
def npm_registry_dns(name: str, shape: str) -> Made:
    root, _ = node_project(name, shape, {"left-pad": "1.3.0"}, {"index.js": "module.exports = 1;\n"},
                           {"test": "node index.js"})
    run("rm -rf node_modules", cwd=root)
    (root / ".npmrc").write_text("registry=https://npm.internal.invalid/\n")
    cache = WORK / "empty-npm-cache"
    run(f"rm -rf {cache}", cwd=WORK)
    e = {"npm_config_cache": str(cache), "npm_config_fetch_retry_mintimeout": "500",
         "npm_config_fetch_retry_maxtimeout": "1000"}
    steps = pre_steps(root, ["node --version", "cat .npmrc"])
    steps.append(failing("Install", root, "npm install", lambda o: grep(o, r"ENOTFOUND", limit=3), e=e))
    cleanup(root)
    return steps, "npm", "network", "npm " + version("npm --version"), "javascript"


@case
def git_clone_connection_refused(name: str, shape: str) -> Made:
    root = project(name, shape, {"README.md": "# app\n", ".gitmodules": ""})
    steps = pre_steps(root, ["git --version"])
    steps.append(failing("Fetch vendored library", root, "git clone --depth 1 http://127.0.0.1:9/platform/"
                                                         "shared-lib.git vendor/shared-lib",
                         lambda o: grep(o, r"^fatal: unable to access")))
    cleanup(root)
    return steps, "git", "network", version("git --version"), "git"


@case
def curl_could_not_resolve(name: str, shape: str) -> Made:
    script = '''#!/usr/bin/env bash
set -euo pipefail
VERSION=0.9.4
echo "installing protoc-gen-lint $VERSION"
curl -fsSL "https://downloads.toolchain.invalid/protoc-gen-lint/v$VERSION/linux-amd64.tar.gz" | tar -xz -C "$HOME/bin"
protoc-gen-lint --version
'''
    root = project(name, shape, {"scripts/install-tools.sh": script})
    steps = pre_steps(root, ["bash --version"])
    steps.append(failing("Install tools", root, "bash scripts/install-tools.sh",
                         lambda o: grep(o, r"Could not resolve host")))
    cleanup(root)
    return steps, "curl", "network", version("curl --version"), "shell"


@case
def tar_no_space_left(name: str, shape: str) -> Made:
    root = project(name, shape, {"README.md": "# site\n"})
    payload = root / "site.tar.gz"
    src = WORK / "payload"
    src.mkdir(exist_ok=True)
    (src / "assets").mkdir(exist_ok=True)
    for i in range(6):
        (src / "assets" / f"bundle-{i}.js").write_bytes(os.urandom(200_000))
    run(f"tar -czf {payload} -C {src} assets", cwd=WORK)
    steps = pre_steps(root, ["ls -l site.tar.gz", "df -h /tmp"])
    with TinyDisk(root / "public", "512k"):
        steps.append(failing("Unpack site", root, "tar -xzvf site.tar.gz -C public",
                             lambda o: first3(o, grep(o, r"No space left on device", limit=3))))
    cleanup(root)
    return steps, "tar", "infrastructure", version("tar --version") + ", public/ a 512 KiB tmpfs", "shell"


@case
def pytest_disk_full(name: str, shape: str) -> Made:
    test = '''from pathlib import Path


def test_export_small(tmp_path):
    (tmp_path / "a.csv").write_text("id,name\\n1,tea\\n")
    assert (tmp_path / "a.csv").read_text().startswith("id")


def test_export_report():
    out = Path("reports")
    out.mkdir(exist_ok=True)
    with open(out / "full.csv", "w") as fh:
        for i in range(200_000):
            fh.write(f"{i},item-{i},{i * 3 % 97}\\n")
    assert (out / "full.csv").stat().st_size > 0
'''
    root = project(name, shape, {"tests/test_export.py": test, "pyproject.toml": "[tool.pytest.ini_options]\n"
                                 "testpaths = [\"tests\"]\n"})
    steps = pre_steps(root, ["python --version"])
    with TinyDisk(root / "reports", "256k"):
        steps.append(failing("Test", root, "pytest -p no:cacheprovider",
                             lambda o: first3(o, grep(o, r"No space left on device", r"^_{3,} test_export_report",
                                                      r"^tests/test_export\.py:\d+: "))))
    cleanup(root)
    return steps, "pytest", "infrastructure", version("pytest --version") + ", reports/ a 256 KiB tmpfs", "python"


@case
def bundler_source_connection_refused(name: str, shape: str) -> Made:
    gemfile = 'source "http://127.0.0.1:9"\n\ngem "rake"\ngem "rspec", "~> 3.12"\n'
    root = project(name, shape, {"Gemfile": gemfile, "lib/app.rb": "module App; end\n"})
    steps = pre_steps(root, ["ruby --version"])
    steps.append(failing("Install gems", root, "bundle install --retry 1",
                         lambda o: grep(o, r"Could not fetch specs", limit=3) +
                         [i + k for i in grep(o, r"^Could not fetch specs", limit=1) for k in (1, 2)]))
    cleanup(root)
    return steps, "bundler", "network", version("bundle --version"), "ruby"



# --- second round: a loopback server that answers 503 or never answers; more disk and memory ----------------

class _Handler(http.server.BaseHTTPRequestHandler):
    mode = "503"

    def do_GET(self) -> None:
        if self.mode == "hang":
            time.sleep(30)
            return
        body = b"<html><body><h1>503 Service Unavailable</h1>upstream overloaded</body></html>"
        self.send_response(503, "Service Unavailable")
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_HEAD = do_GET

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def loopback(mode: str):  # type: ignore[no-untyped-def]
    """An HTTP server on 127.0.0.1 (a free port) that answers every request with 503, or never answers."""
    handler = type("H", (_Handler,), {"mode": mode})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


@case
def pip_read_timeout(name: str, shape: str) -> Made:
    root = project(name, shape, PYFILES)
    py = pip_venv(name)
    steps = pre_steps(root, ["python --version"])
    with loopback("hang") as url:
        steps.append(failing("Install", root, f"{py} -m pip install --timeout 2 --retries 2 --index-url {url}/simple "
                                              "-r requirements.txt",
                             lambda o: first3(o, grep(o, r"Read timed out|ReadTimeoutError", limit=3) +
                                              grep(o, r"^ERROR: (Could not find|No matching)")),
                             shown=f"python -m pip install --timeout 2 --retries 2 --index-url {url}/simple -r "
                                   "requirements.txt"))
    cleanup(root)
    return steps, "pip", "network", "pip " + version(f"{py} -m pip --version").split()[1] + \
        ", index a loopback server that never answers", "python"


@case
def npm_registry_503(name: str, shape: str) -> Made:
    root, _ = node_project(name, shape, {"left-pad": "1.3.0"}, {"index.js": "module.exports = 1;\n"},
                           {"test": "node index.js"})
    run("rm -rf node_modules", cwd=root)
    cache = WORK / "empty-npm-cache"
    run(f"rm -rf {cache}", cwd=WORK)
    steps = pre_steps(root, ["node --version"])
    with loopback("503") as url:
        e = {"npm_config_cache": str(cache), "npm_config_registry": url + "/",
             "npm_config_fetch_retry_mintimeout": "500", "npm_config_fetch_retry_maxtimeout": "1000"}
        steps.append(failing("Install", root, "npm ci", lambda o: grep(o, r"503", limit=3), e=e))
    cleanup(root)
    return steps, "npm", "network", "npm " + version("npm --version") + ", registry a loopback server answering 503", \
        "javascript"


@case
def jest_oom_killed(name: str, shape: str) -> Made:
    test = """test("indexes every product", () => {
  const index = new Map();
  for (let i = 0; i < 50_000_000; i++) {
    index.set(`sku-${i}`, { id: i, words: ["tea", "cake", String(i)] });
  }
  expect(index.size).toBe(50_000_000);
});
"""
    root, ci_out = node_project(name, shape, {"jest": "30.5.2"}, {"test/index.test.js": test,
                                                                  "ci.sh": "set -e\nnpx jest --ci -i\n"},
                                {"test": "jest --ci -i"}, {"jest": {"testEnvironment": "node"}})
    steps = [Step("Install", "npm ci", ci_out)]
    stop = threading.Event()
    t = threading.Thread(target=kill_at_rss, args=(600, "jest --ci -i", stop))
    t.start()
    try:
        steps.append(failing("Test", root, "bash ci.sh", lambda o: grep(o, r"Killed"),
                             e={"NODE_OPTIONS": "--max-old-space-size=4096"}))
    finally:
        stop.set()
        t.join()
    cleanup(root)
    return steps, "jest", "infrastructure", "jest 30.5.2; SIGKILLed at 600 MB RSS by the generator's watchdog (the " \
        "OOM killer's signal)", "javascript"


@case
def git_clone_dns(name: str, shape: str) -> Made:
    root = project(name, shape, {"README.md": "# app\n"})
    steps = pre_steps(root, ["git --version"])
    steps.append(failing("Checkout submodules", root, "git clone --depth 1 https://git.internal.invalid/platform/"
                                                      "proto.git third_party/proto",
                         lambda o: grep(o, r"^fatal: unable to access")))
    cleanup(root)
    return steps, "git", "network", version("git --version"), "git"


@case
def bundler_source_503(name: str, shape: str) -> Made:
    root = project(name, shape, {"lib/app.rb": "module App; end\n"})
    with loopback("503") as url:
        (root / "Gemfile").write_text(f'source "{url}"\n\ngem "rake"\ngem "rspec", "~> 3.12"\n')
        steps = pre_steps(root, ["ruby --version"])
        steps.append(failing("Install gems", root, "bundle install --retry 1",
                             lambda o: grep(o, r"Could not fetch specs|503|Service Unavailable", limit=3)))
    cleanup(root)
    return steps, "bundler", "network", version("bundle --version") + ", source a loopback server answering 503", \
        "ruby"


def write(cname: str, fn: Callable[[str, str], Made], shape: str, n: int) -> tuple[str, Path]:
    steps, tool, category, made, eco = fn(cname, shape)
    folder = write_case(eco, cname, steps, shape, tool=tool, category=category, seed=800 + n,
                        made_by=f"{made}; a real failure made on this machine (make/infra/make.py:{fn.__name__}), "
                                "loopback or .invalid hosts only; shape by make/shapes.py", job="ci")
    return f"{eco} {cname} {shape} {tool} {category}", folder


def main(argv: list[str]) -> int:
    return make_all(CASES, argv, shape_from=0, write=write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
