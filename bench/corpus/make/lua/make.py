"""Lua cases: busted (plain and TAP output), luacheck and a plain `lua` test script failing on a small module, run
here with Debian's lua5.4 / lua-busted / lua-check, wrapped in the five CI shapes.

    python3 bench/corpus/make/lua/make.py [CASE...]
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import Step, cleanup, env, first3, grep, project, version
from maker import ANSI_COLOUR, Cases, failing, make_all, passing
from record import write_case

Made = tuple[list[Step], str, str, str]

QUEUE = '''-- A bounded FIFO queue.
local Queue = {}
Queue.__index = Queue

function Queue.new(capacity)
  assert(type(capacity) == "number" and capacity > 0, "capacity must be a positive number")
  return setmetatable({ first = 1, last = 0, items = {}, capacity = capacity }, Queue)
end

function Queue:size()
  return self.last - self.first + 1
end

function Queue:push(value)
  if self:size() >= self.capacity then
    return nil, "queue full"
  end
  self.last = self.last + 1
  self.items[self.last] = value
  return true
end

function Queue:pop()
  if self:size() == 0 then
    return nil
  end
  local value = self.items[self.first]
  self.items[self.first] = nil
  self.first = self.first + 1
  return value
end

function Queue:drain()
  local out = {}
  while self:size() > 0 do
    out[#out + 1] = self:pop()
  end
  return out
end

return Queue
'''

SPEC = '''local Queue = require("queue")

describe("Queue", function()
  it("starts empty", function()
    assert.are.equal(0, Queue.new(3):size())
  end)

  it("pops in FIFO order", function()
    local q = Queue.new(3)
    q:push("a"); q:push("b")
    assert.are.equal("a", q:pop())
    assert.are.equal("b", q:pop())
  end)

  it("refuses to overflow", function()
    local q = Queue.new(1)
    assert.is_true(q:push(1))
    local ok, err = q:push(2)
    assert.is_nil(ok)
    assert.are.equal("queue full", err)
  end)

  it("drains everything", function()
    local q = Queue.new(5)
    for i = 1, 4 do q:push(i) end
    assert.are.same({ 1, 2, 3, 4 }, q:drain())
  end)

  it("rejects a bad capacity", function()
    assert.has_error(function() Queue.new(0) end)
  end)
end)
'''

SMOKE = '''package.path = "./src/?.lua;" .. package.path
local Queue = require("queue")

local q = Queue.new(2)
q:push("x")
q:push("y")
print("size after two pushes", q:size())
local drained = q:drain()
print("drained", #drained, "items")
assert(#drained == 2, "expected 2 items")
print("first item", drained[1]:upper())
print("smoke ok")
'''


def files(over: dict[str, str | None]) -> dict[str, str]:
    f: dict[str, str | None] = {"src/queue.lua": QUEUE, "spec/queue_spec.lua": SPEC, "scripts/smoke.lua": SMOKE,
                                ".busted": 'return { default = { lpath = "./src/?.lua" } }\n',
                                ".luacheckrc": 'std = "max"\nfiles["spec"] = { std = "+busted" }\n'}
    f.update(over)
    return {k: v for k, v in f.items() if v is not None}


def lua_case(name: str, shape: str, over: dict[str, str | None], cmd: str, tool: str, category: str,
             causal: Callable[[list[str]], list[int]], pre: list[str] = (), ctx: str | None = None) -> Made:
    root = project(name, shape, files(over))
    steps = [passing(p, root, env()) for p in ["lua5.4 -v", *pre]]
    steps.append(failing(cmd, root, env(), tool.title(), causal, ctx=ctx, strip=ANSI_COLOUR))
    cleanup(root)
    return steps, tool, category, version(f"{tool.split(maxsplit=1)[0]} --version 2>&1 | head -1") + \
        f" ({version('lua5.4 -v')})"


def busted_plain(o: list[str]) -> list[int]:
    """busted's plainTerminal/utfTerminal: each `Failure ->`/`Error ->` header with its spec location, the
    message and its Expected/Passed in lines, and the project's traceback lines."""
    idx: list[int] = []
    block = False
    for i, t in enumerate(o):
        s = t.strip()
        if re.match(r"^(Failure|Error) → |^(Failure|Error) -> ", s):
            block = True
            idx.append(i)
        elif re.match(r"^\d+ success", s):
            block = False
        elif block and s and not s.startswith("stack traceback") and not re.match(r"^\[C\]|^/usr/", s):
            idx.append(i)
    return sorted(set(idx))


def busted_tap(o: list[str]) -> list[int]:
    idx: list[int] = []
    for i, t in enumerate(o):
        if t.startswith("not ok "):
            idx.append(i)
            j = i + 1
            while j < len(o) and o[j].startswith("#"):
                # the location, the message, and of the two value dumps their headers and the differing element
                if re.match(r"^# (\S+\.lua @ \d+|Failure message|Error message|Passed in|Expected)|^#.*\*\[", o[j]):
                    idx.append(j)
                j += 1
    return sorted(set(idx))


CASES: Cases[Callable[[str, str], Made]] = Cases()
case = CASES.case


@case
def busted_assert_equal(name: str, shape: str) -> Made:
    return lua_case(name, shape, {"src/queue.lua": QUEUE.replace("if self:size() >= self.capacity then",
                                                                  "if self:size() > self.capacity then")},
                    "busted -o plainTerminal spec", "busted", "test", busted_plain, pre=["luacheck src"],
                    ctx=r"^\d+ success")


@case
def busted_error(name: str, shape: str) -> Made:
    return lua_case(name, shape, {"src/queue.lua": QUEUE.replace("self.items[self.last] = value",
                                                                  "self.item[self.last] = value")},
                    "busted -o utfTerminal spec", "busted", "test", busted_plain, ctx=r"^\d+ success")


@case
def busted_tap_same(name: str, shape: str) -> Made:
    return lua_case(name, shape, {"src/queue.lua": QUEUE.replace("while self:size() > 0 do", "while self:size() > 1 do")},
                    "busted -o TAP spec", "busted", "test", busted_tap, ctx=r"^1\.\.\d+")


@case
def luacheck_warnings(name: str, shape: str) -> Made:
    bad = QUEUE.replace("function Queue:drain()\n  local out = {}", "function Queue:drain(limit)\n  local out = {}\n"
                        "  local count = 0\n  total = 0").replace("  return value\nend", "  return valeu\nend")
    return lua_case(name, shape, {"src/queue.lua": bad}, "luacheck --no-color src spec", "luacheck", "lint",
                    lambda o: grep(o, r"^\s+\S+\.lua:\d+:\d+: ", limit=20), ctx=r"^Total: ")


@case
def lua_smoke_runtime_error(name: str, shape: str) -> Made:
    return lua_case(name, shape, {"src/queue.lua": QUEUE.replace("  self.first = self.first + 1\n  return value",
                                                                  "  self.first = self.first + 1\n  return nil")},
                    "lua5.4 scripts/smoke.lua", "lua5.4", "test",
                    lambda o: grep(o, r"^lua5\.4: ", r"^\s+scripts/smoke\.lua:\d+: in main chunk"))



@case
def busted_before_each_error(name: str, shape: str) -> Made:
    spec = SPEC.replace('describe("Queue", function()', '''describe("Queue", function()
  local fixture
  before_each(function()
    fixture = dofile("spec/fixtures/items.lua")
  end)
''')
    return lua_case(name, shape, {"spec/queue_spec.lua": spec}, "busted -o plainTerminal spec", "busted", "test",
                    lambda o: first3(o, busted_plain(o)), ctx=r"^\d+ success")


def write(cname: str, fn: Callable[[str, str], Made], shape: str, n: int) -> tuple[str, Path]:
    steps, tool, category, made = fn(cname, shape)
    folder = write_case("lua", cname, steps, shape, tool=tool, category=category, seed=600 + n,
                        made_by=f"{made} (Debian) on a small generated module (make/lua/make.py:{fn.__name__}), "
                                "run here; shape by make/shapes.py", job="test" if category == "test" else "ci")
    return f"{cname} {shape} {tool} {category}", folder


def main(argv: list[str]) -> int:
    return make_all(CASES, argv, shape_from=3, write=write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
