"""Ruby cases: rspec, minitest (through rake), rubocop, `ruby -wc` and bundler failing on a small project, run here
with Debian's ruby 3.1 and its packaged gems, wrapped in the five CI shapes.

    python3 bench/corpus/make/ruby/make.py [CASE...]
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import Step, cleanup, env, grep, project, version
from maker import ANSI_COLOUR, Cases, failing, make_all, passing
from record import run, write_case

Made = tuple[list[Step], str, str, str]

INVENTORY = '''# frozen_string_literal: true

# Stock levels per SKU, with reservations.
class Inventory
  class OutOfStock < StandardError; end

  def initialize(stock = {})
    @stock = stock.dup
    @reserved = Hash.new(0)
  end

  def add(sku, qty)
    raise ArgumentError, "qty must be positive" unless qty.positive?

    @stock[sku] = @stock.fetch(sku, 0) + qty
  end

  def available(sku)
    @stock.fetch(sku, 0) - @reserved[sku]
  end

  def reserve(sku, qty)
    raise OutOfStock, "#{sku}: only #{available(sku)} left" if qty > available(sku)

    @reserved[sku] += qty
  end

  def total
    @stock.values.sum
  end

  def report
    @stock.keys.sort.map { |sku| format("%-8s %4d", sku, available(sku)) }.join("\\n")
  end
end
'''

SPEC = '''# frozen_string_literal: true

require "inventory"

RSpec.describe Inventory do
  subject(:inv) { described_class.new("apple" => 5, "pear" => 2) }

  describe "#add" do
    it "adds to existing stock" do
      inv.add("apple", 3)
      expect(inv.available("apple")).to eq(8)
    end

    it "rejects zero" do
      expect { inv.add("apple", 0) }.to raise_error(ArgumentError)
    end
  end

  describe "#reserve" do
    it "lowers availability" do
      inv.reserve("pear", 1)
      expect(inv.available("pear")).to eq(1)
    end

    it "refuses to oversell" do
      expect { inv.reserve("pear", 3) }.to raise_error(Inventory::OutOfStock, /only 2 left/)
    end
  end

  describe "#total" do
    it "sums all stock" do
      expect(inv.total).to eq(7)
    end
  end

  describe "#report" do
    it "lists skus in order" do
      expect(inv.report.lines.map(&:split).map(&:first)).to eq(%w[apple pear])
    end
  end
end
'''

MINITEST = '''# frozen_string_literal: true

require "minitest/autorun"
require "inventory"

class InventoryTest < Minitest::Test
  def setup
    @inv = Inventory.new("apple" => 5, "pear" => 2)
  end

  def test_add
    @inv.add("apple", 3)
    assert_equal 8, @inv.available("apple")
  end

  def test_reserve
    @inv.reserve("pear", 2)
    assert_equal 0, @inv.available("pear")
  end

  def test_oversell
    assert_raises(Inventory::OutOfStock) { @inv.reserve("pear", 5) }
  end

  def test_total
    assert_equal 7, @inv.total
  end

  def test_report
    assert_match(/^apple\\s+5$/, @inv.report)
  end
end
'''

RAKEFILE = '''# frozen_string_literal: true

require "rake/testtask"

Rake::TestTask.new(:test) do |t|
  t.libs << "lib" << "test"
  t.test_files = FileList["test/**/*_test.rb"]
  t.warning = false
end

task default: :test
'''

GEMFILE = '''# frozen_string_literal: true

source "https://rubygems.org"

gem "rake"

group :test do
  gem "minitest"
  gem "rspec"
end

group :lint do
  gem "rubocop", require: false
end
'''

RUBOCOP = '''AllCops:
  TargetRubyVersion: 3.1
  NewCops: enable
  SuggestExtensions: false

Style/StringLiterals:
  EnforcedStyle: double_quotes
'''


def files(over: dict[str, str | None]) -> dict[str, str]:
    f: dict[str, str | None] = {"lib/inventory.rb": INVENTORY, "spec/inventory_spec.rb": SPEC,
                                "test/inventory_test.rb": MINITEST, "Rakefile": RAKEFILE, "Gemfile": GEMFILE,
                                ".rspec": "--require spec_helper\n", "spec/spec_helper.rb":
                                '# frozen_string_literal: true\n\n$LOAD_PATH.unshift File.expand_path("../lib", '
                                '__dir__)\n', ".rubocop.yml": RUBOCOP}
    f.update(over)
    return {k: v for k, v in f.items() if v is not None}


def bundle(root: Path) -> Step:
    out, code = run("bundle install --local", cwd=root, env=env())
    assert code == 0, out
    return Step("Install gems", "bundle install", out)


def rb_case(name: str, shape: str, over: dict[str, str | None], cmd: str, tool: str, category: str,
            causal: Callable[[list[str]], list[int]], pre: list[str] = (), ctx: str | None = None,
            made: str = "", install: bool = True, post: list[str] = ()) -> Made:
    root = project(name, shape, files(over))
    o0, _ = run("ruby --version", cwd=root, env=env())
    steps = [Step("Set up Ruby", "ruby --version", o0)]
    if install:
        steps.append(bundle(root))
    steps += [passing(p, root, env(), title=p.split()[-1].title()) for p in pre]
    steps.append(failing(cmd, root, env(), tool.title(), causal, ctx=ctx, strip=ANSI_COLOUR))
    for p in post:  # runs after the failure too, like an `if: always()` step
        o, _ = run(p, cwd=root, env=env())
        steps.append(Step(p.split()[0].title(), p, o, always=True))
    cleanup(root)
    return steps, tool, category, (made or version(f"{tool} --version")) + f", {o0[0].split(' (')[0]}"


CASES: Cases[Callable[[str, str], Made]] = Cases()
case = CASES.case


def _three_from(i: int) -> list[int]:
    """A message's line and the two after it (the source line and its caret)."""
    return [i, i + 1, i + 2]


def rspec_causal(o: list[str]) -> list[int]:
    """Each numbered failure's title, its Failure/Error line, the expected/got or error lines under it, and the
    project's `# ./` frames; the closing `rspec ./spec/...` re-run list is context (the guideline's closing list)."""
    idx: list[int] = []
    start = grep(o, r"^Failures:")[0]
    block = False
    for i in range(start + 1, len(o)):
        t = o[i].strip()
        if re.match(r"^\d+\) ", t):
            block = True
            idx.append(i)
        elif re.match(r"^(Finished in|\d+ examples?,)", t):
            block = False
        elif block and t and not t.startswith("(compared using") and not t.startswith("Diff:"):
            if t.startswith("# "):
                if re.match(r"^# \./(lib|spec)/", t):
                    idx.append(i)
            else:
                idx.append(i)
    return sorted(set(idx))


@case
def rspec_expectation(name: str, shape: str) -> Made:
    return rb_case(name, shape, {"lib/inventory.rb": INVENTORY.replace('@stock.fetch(sku, 0) + qty',
                                                                       '@stock.fetch(sku, 0) + qty - 1')},
                   "bundle exec rspec", "rspec", "test", rspec_causal, ctx=r"^\d+ examples?, \d+ failure|^rspec \./spec/")


@case
def rspec_nomethoderror(name: str, shape: str) -> Made:
    return rb_case(name, shape, {"lib/inventory.rb": INVENTORY.replace("@stock.keys.sort.map", "@stock.keys.sort.mapp")},
                   "bundle exec rspec --format documentation", "rspec", "test", rspec_causal,
                   ctx=r"^\d+ examples?, \d+ failure|^rspec \./spec/")


@case
def rspec_raise_error_mismatch(name: str, shape: str) -> Made:
    return rb_case(name, shape, {"lib/inventory.rb": INVENTORY.replace(
        'raise OutOfStock, "#{sku}: only #{available(sku)} left"', 'raise ArgumentError, "#{sku}: sold out"')
        .replace("@stock.values.sum", "@stock.values.sum - @reserved.values.sum")},
        "bundle exec rspec --format progress", "rspec", "test", rspec_causal, pre=["ruby -wc lib/inventory.rb"],
        ctx=r"^\d+ examples?, \d+ failure|^rspec \./spec/")


@case
def rspec_load_error(name: str, shape: str) -> Made:
    spec = SPEC.replace('require "inventory"', 'require "inventory"\nrequire "inventory/warehouse"')

    def causal(o: list[str]) -> list[int]:
        return grep(o, r"An error occurred while loading", r"^Failure/Error: ", r"^LoadError:", r"cannot load such file",
                    r"^# \./spec/")
    return rb_case(name, shape, {"spec/inventory_spec.rb": spec}, "bundle exec rspec", "rspec", "test", causal,
                   ctx=r"^\d+ examples?, \d+ failure|^rspec \./spec/")


def minitest_causal(o: list[str]) -> list[int]:
    """Each numbered Failure/Error header, the test line, the message lines, and up to three frames in the
    project's own files (not the gems' or Ruby's)."""
    idx: list[int] = []
    block = False
    frames = 0
    for i, t in enumerate(o):
        s = t.strip()
        if re.match(r"^\s+\d+\) (Failure|Error):", t):
            block, frames = True, 0
            idx.append(i)
        elif re.match(r"^\d+ runs, ", t):
            block = False
        elif not block or not s or re.match(r"^-{3,}", s):
            continue
        elif re.match(r"^/\S+:\d+:in ", s):
            if "/usr/lib/ruby" not in s and "/gems/" not in s and frames < 3:
                idx.append(i)
                frames += 1
        else:
            idx.append(i)
    return sorted(set(idx))


@case
def minitest_assert_equal(name: str, shape: str) -> Made:
    return rb_case(name, shape, {"lib/inventory.rb": INVENTORY.replace("@stock.values.sum", "@stock.values.max")},
                   "bundle exec rake test", "minitest", "test", minitest_causal, ctx=r"^\d+ runs, ",
                   made=version("ruby -e 'require \"minitest\"; puts \"minitest #{Minitest::VERSION}\"'"))


@case
def minitest_error_and_failure(name: str, shape: str) -> Made:
    return rb_case(name, shape, {"lib/inventory.rb": INVENTORY.replace("@reserved = Hash.new(0)", "@reserved = {}")
                                 .replace('format("%-8s %4d"', 'format("%-8s %5d"')},
                   "bundle exec rake test TESTOPTS=-v", "minitest", "test", minitest_causal, ctx=r"^\d+ runs, ",
                   made=version("ruby -e 'require \"minitest\"; puts \"minitest #{Minitest::VERSION}\"'"))


@case
def minitest_syntax_error(name: str, shape: str) -> Made:
    lib = INVENTORY.replace("  def total\n    @stock.values.sum\n  end\n", "  def total\n    @stock.values.sum\n")
    return rb_case(name, shape, {"lib/inventory.rb": lib}, "bundle exec rake test", "minitest", "test",
                   lambda o: grep(o, r"syntax error", r"^\s+from /\S+/test/\S+_test\.rb:", limit=2),
                   made=version("ruby -e 'require \"minitest\"; puts \"minitest #{Minitest::VERSION}\"'"))


def rubocop_causal(o: list[str]) -> list[int]:
    idx: list[int] = []
    for i, t in enumerate(o):
        if re.match(r"^\S+\.rb:\d+:\d+: [CWEF]: ", t):
            idx.append(i)
            if i + 2 < len(o) and re.match(r"^\s*\^+$", o[i + 2]):
                idx += [i + 1, i + 2]
    return sorted(set(idx))


@case
def rubocop_offenses(name: str, shape: str) -> Made:
    lib = INVENTORY.replace("# frozen_string_literal: true\n\n", "").replace(
        "  def total\n    @stock.values.sum\n  end", "  def total()\n    result = 0\n    @stock.values.each { |v| result "
        "= result + v }\n    return result\n  end").replace('"qty must be positive"', "'qty must be positive'")
    return rb_case(name, shape, {"lib/inventory.rb": lib}, "bundle exec rubocop", "rubocop", "lint", rubocop_causal,
                   pre=["bundle exec rspec"], ctx=r"files? inspected")


@case
def rubocop_lint_warnings(name: str, shape: str) -> Made:
    lib = INVENTORY.replace("  def available(sku)\n", "  def available(sku)\n    unused = sku.to_s\n").replace(
        "raise ArgumentError, \"qty must be positive\" unless qty.positive?",
        "raise ArgumentError, \"qty must be positive\" unless qty.positive?\n    if qty = 0 then return end")
    return rb_case(name, shape, {"lib/inventory.rb": lib}, "bundle exec rubocop --format clang lib spec", "rubocop",
                   "lint", rubocop_causal, ctx=r"files? inspected")


@case
def rubocop_emacs_format(name: str, shape: str) -> Made:
    spec = SPEC.replace('"apple" => 5', "'apple' => 5").replace("expect(inv.total).to eq(7)",
                                                               "expect(inv.total).to eq(7) ; expect(inv.total).not_to be_nil")
    return rb_case(name, shape, {"spec/inventory_spec.rb": spec}, "bundle exec rubocop --format emacs", "rubocop",
                   "lint", lambda o: grep(o, r"^/\S+\.rb:\d+:\d+: [CWEF]: ", limit=20))


@case
def ruby_syntax_check(name: str, shape: str) -> Made:
    lib = INVENTORY.replace('"#{sku}: only #{available(sku)} left"', '"#{sku}: only #{available(sku) left"')
    return rb_case(name, shape, {"lib/inventory.rb": lib},
                   "for f in lib/*.rb spec/*.rb; do ruby -wc $f || exit 1; done", "ruby", "lint",
                   lambda o: _three_from(grep(o, r"^lib/inventory\.rb:\d+: syntax error")[0]),
                   install=False, made=version("ruby --version"))


@case
def bundler_missing_gem(name: str, shape: str) -> Made:
    gemfile = GEMFILE.replace('gem "rake"', 'gem "rake"\ngem "nokogiri", "~> 1.16"')
    return rb_case(name, shape, {"Gemfile": gemfile}, "bundle install --local", "bundler", "dependency",
                   lambda o: grep(o, r"Could not find gem"), install=False, made=version("bundle --version"))


@case
def bundler_frozen_lockfile(name: str, shape: str) -> Made:
    root_files = files({})
    lock_dir = project(name + "-lock", "plain", root_files)
    run("bundle lock --local", cwd=lock_dir, env=env())
    lock = (lock_dir / "Gemfile.lock").read_text()
    cleanup(lock_dir)
    gemfile = GEMFILE.replace('  gem "rspec"\n', '  gem "rspec"\n  gem "simplecov"\n')
    return rb_case(name, shape, {"Gemfile": gemfile, "Gemfile.lock": lock},
                   "bundle config set --local frozen true && bundle install --local", "bundler", "dependency",
                   lambda o: _three_from(grep(o, r"install in (frozen|deployment) mode")[0]) +
                   grep(o, r"You have added to the Gemfile", r"^\* simplecov"), install=False,
                   made=version("bundle --version"))



# --- added in the second round (after the frame learnt `always` steps) --------------------------------------

@case
def rspec_aggregate_failures(name: str, shape: str) -> Made:
    spec = SPEC.replace('''    it "sums all stock" do
      expect(inv.total).to eq(7)
    end''', '''    it "sums all stock and reports it", :aggregate_failures do
      expect(inv.total).to eq(7)
      expect(inv.report).to include("apple")
      expect(inv.report.lines.size).to eq(2)
    end''')
    lib = INVENTORY.replace("@stock.values.sum", "@stock.values.sum + 1").replace(
        '.join("\\n")', '.join("; ")')
    return rb_case(name, shape, {"spec/inventory_spec.rb": spec, "lib/inventory.rb": lib},
                   "bundle exec rspec --format progress --no-color", "rspec", "test", rspec_causal,
                   ctx=r"^\d+ examples?, \d+ failure|^rspec \./spec/", post=["ls -la spec"])


@case
def rspec_pending_now_passes(name: str, shape: str) -> Made:
    spec = SPEC.replace('''    it "refuses to oversell" do''', '''    it "rounds availability down" do
      pending "fractional stock is not supported yet"
      inv.add("apple", 2)
      expect(inv.available("apple")).to eq(7)
    end

    it "refuses to oversell" do''')
    return rb_case(name, shape, {"spec/inventory_spec.rb": spec}, "bundle exec rspec", "rspec", "test",
                   rspec_causal, ctx=r"^\d+ examples?, \d+ failure|^rspec \./spec/")


@case
def rake_task_error(name: str, shape: str) -> Made:
    rakefile = RAKEFILE + '''
desc "Build the release notes from the changelog"
task :notes do
  version = File.read("VERSION").strip
  notes = File.read("CHANGELOG.md").split(/^## /).find { |s| s.start_with?(version) }
  File.write("dist/NOTES.md", notes.lines.drop(1).join)
  puts "wrote notes for #{version}"
end
'''
    files_over = {"Rakefile": rakefile, "VERSION": "1.5.0\n", "CHANGELOG.md": "# Changelog\n\n## 1.4.0\n\n- reserve\n"}
    return rb_case(name, shape, files_over, "bundle exec rake notes", "rake", "build",
                   lambda o: grep(o, r"^rake aborted!", r"NoMethodError|undefined method", r"/Rakefile:\d+:in",
                                  limit=1), pre=["bundle exec rake test"], made=version("rake --version"))


def write(cname: str, fn: Callable[[str, str], Made], shape: str, n: int) -> tuple[str, Path]:
    steps, tool, category, made = fn(cname, shape)
    folder = write_case("ruby", cname, steps, shape, tool=tool, category=category, seed=300 + n,
                        made_by=f"{made} (Debian packages) on a small generated project (make/ruby/make.py:"
                                f"{fn.__name__}), run here; shape by make/shapes.py", job="test" if category == "test"
                        else "ci")
    return f"{cname} {shape} {tool} {category}", folder


def main(argv: list[str]) -> int:
    return make_all(CASES, argv, shape_from=4, write=write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
