"""Erlang (rebar3: compile errors, warnings_as_errors, EUnit failures, xref) and Elixir (mix: compile errors,
--warnings-as-errors, ExUnit failures and raises, mix format --check-formatted, a dependency not fetched).
No Hex packages are used: every project builds offline."""

from __future__ import annotations

from gen import case
from ws import Case, block, find, version

REBAR = version("rebar3 version")
ELIXIR = version("elixir --version 2>&1 | grep Elixir")
ENV = {"HEX_OFFLINE": "1", "MIX_ENV": "test", "ERL_AFLAGS": "-kernel shell_history disabled"}

# ---------------------------------------------------------------- Erlang

APP_SRC = """
{application, cart,
 [{description, "A shopping cart"},
  {vsn, "0.3.0"},
  {registered, []},
  {applications, [kernel, stdlib]},
  {env, []}]}.
"""
REBAR_CONFIG = "{erl_opts, [debug_info]}.\n{xref_checks, [undefined_function_calls, deprecated_function_calls]}.\n"
CART = """
-module(cart).
-export([new/0, add/3, remove/2, total/1, count/1]).

new() -> #{}.

add(Sku, Price, Cart) when is_integer(Price), Price >= 0 ->
    maps:update_with(Sku, fun({P, N}) -> {P, N + 1} end, {Price, 1}, Cart).

remove(Sku, Cart) ->
    case maps:find(Sku, Cart) of
        {ok, {_P, 1}} -> maps:remove(Sku, Cart);
        {ok, {P, N}} -> Cart#{Sku := {P, N - 1}};
        error -> Cart
    end.

total(Cart) ->
    maps:fold(fun(_Sku, {P, N}, Acc) -> Acc + P * N end, 0, Cart).

count(Cart) ->
    maps:fold(fun(_Sku, {_P, N}, Acc) -> Acc + N end, 0, Cart).
"""
PROMO = """
-module(promo).
-export([apply/2]).

%% Percent off for a code; unknown codes give no discount.
apply(Total, Code) ->
    Off = case Code of
              <<"TEN">> -> 10;
              <<"HALF">> -> 50;
              _ -> 0
          end,
    Total - (Total * Off) div 100.
"""
CART_TESTS = """
-module(cart_tests).
-include_lib("eunit/include/eunit.hrl").

add_twice_test() ->
    C = cart:add(tea, 450, cart:add(tea, 450, cart:new())),
    ?assertEqual(2, cart:count(C)).

total_test() ->
    C = cart:add(cup, 1200, cart:add(tea, 450, cart:new())),
    ?assertEqual(1650, cart:total(C)).

remove_last_test() ->
    C = cart:remove(tea, cart:add(tea, 450, cart:new())),
    ?assertEqual(0, cart:count(C)).

promo_test_() ->
    [?_assertEqual(900, promo:apply(1000, <<"TEN">>)),
     ?_assertEqual(500, promo:apply(1000, <<"HALF">>)),
     ?_assertEqual(1000, promo:apply(1000, <<"NOPE">>))].

negative_price_test() ->
    ?assertError(function_clause, cart:add(tea, -1, cart:new())).
"""


def erl_project(c: Case, **over: str) -> None:
    files = {"rebar.config": REBAR_CONFIG, "src/cart.app.src": APP_SRC, "src/cart.erl": CART, "src/promo.erl": PROMO,
             "test/cart_tests.erl": CART_TESTS}
    files.update(over)
    c.files(files)


def erl_case(c: Case, name: str, cmd: str, causal, category: str, tool: str = "rebar3") -> None:
    c.step("Set up Erlang", "rebar3 version", env=ENV)
    if cmd != "rebar3 compile":
        c.step("Compile", "rebar3 compile", env=ENV)
    c.step("Test" if "eunit" in cmd else ("Xref" if "xref" in cmd else "Compile"), cmd, causal=causal, env=ENV)
    c.write(tool=tool, category=category, made_by=f"{REBAR} on make/beam/gen.py:{name}, run here")


@case("erlang")
def rebar3_syntax_error(name: str, shape: str) -> None:
    c = Case("erlang", name, shape, "cart")
    erl_project(c, **{"src/promo.erl": PROMO.replace("_ -> 0\n", "_ -> 0,\n")})
    erl_case(c, name, "rebar3 compile", lambda o: find(o, r"^\S*src/\w+\.erl:\d+:\d+: (?!Warning)", limit=4), "build")


@case("erlang")
def rebar3_unbound_variable(name: str, shape: str) -> None:
    c = Case("erlang", name, shape, "cart")
    erl_project(c, **{"src/cart.erl": CART.replace("{ok, {P, N}} -> Cart#{Sku := {P, N - 1}};", "{ok, {P, N}} -> Cart#{Sku := {Price, N - 1}};")})
    erl_case(c, name, "rebar3 compile", lambda o: find(o, r"^\S*src/\w+\.erl:\d+:\d+: (?!Warning)", limit=4), "build")


@case("erlang")
def rebar3_warnings_as_errors(name: str, shape: str) -> None:
    c = Case("erlang", name, shape, "cart")
    erl_project(c, **{"rebar.config": "{erl_opts, [debug_info, warnings_as_errors]}.\n",
                      "src/cart.erl": CART.replace("count(Cart) ->\n", "count(Cart) ->\n    Unused = maps:size(Cart),\n")})
    erl_case(c, name, "rebar3 compile", lambda o: find(o, r"^\S*src/\w+\.erl:\d+:\d+: (?!Warning)", limit=4), "build")


@case("erlang")
def eunit_assert_equal(name: str, shape: str) -> None:
    c = Case("erlang", name, shape, "cart")
    erl_project(c, **{"src/promo.erl": PROMO.replace("Total - (Total * Off) div 100.", "Total - Off.")})
    erl_case(c, name, "rebar3 eunit", lambda o: find(o, r"^\s+\d+\) cart_tests:", r"Failure/Error: ", r"^\s+expected: ", r"^\s+got: ", limit=3), "test", tool="eunit")


@case("erlang")
def eunit_crash(name: str, shape: str) -> None:
    c = Case("erlang", name, shape, "cart")
    erl_project(c, **{"src/cart.erl": CART.replace("{ok, {P, N}} -> Cart#{Sku := {P, N - 1}};\n        error -> Cart", "{ok, {P, N}} -> Cart#{Sku := {P, N - 1}}"),
                      "test/cart_tests.erl": CART_TESTS + "\nremove_missing_test() ->\n    ?assertEqual(0, cart:count(cart:remove(coffee, cart:new()))).\n"})
    erl_case(c, name, "rebar3 eunit", lambda o: find(o, r"^\s+\d+\) cart_tests:", r"Failure/Error: ", r"case_clause", r"cart\.erl:\d+", limit=2),
             "test", tool="eunit")


@case("erlang")
def rebar3_xref_undefined(name: str, shape: str) -> None:
    c = Case("erlang", name, shape, "cart")
    erl_project(c, **{"src/promo.erl": PROMO.replace("Total - (Total * Off) div 100.", "cart_log:info(Code),\n    Total - (Total * Off) div 100.")})
    erl_case(c, name, "rebar3 xref", lambda o: find(o, r"calls undefined function", limit=3), "lint", tool="xref")


# ---------------------------------------------------------------- Elixir

MIX = """
defmodule Cart.MixProject do
  use Mix.Project

  def project do
    [app: :cart, version: "0.3.0", elixir: "~> 1.14", start_permanent: Mix.env() == :prod, deps: deps()]
  end

  def application, do: [extra_applications: [:logger]]

  defp deps, do: []
end
"""
FORMATTER = '[inputs: ["{mix,.formatter}.exs", "{config,lib,test}/**/*.{ex,exs}"]]\n'
CART_EX = """
defmodule Cart do
  @moduledoc "A shopping cart: SKUs with a unit price and a quantity."

  defstruct items: %{}

  def new, do: %Cart{}

  def add(%Cart{items: items} = cart, sku, price) when is_integer(price) and price >= 0 do
    %{cart | items: Map.update(items, sku, {price, 1}, fn {p, n} -> {p, n + 1} end)}
  end

  def remove(%Cart{items: items} = cart, sku) do
    case Map.fetch(items, sku) do
      {:ok, {_p, 1}} -> %{cart | items: Map.delete(items, sku)}
      {:ok, {p, n}} -> %{cart | items: Map.put(items, sku, {p, n - 1})}
      :error -> cart
    end
  end

  def total(%Cart{items: items}) do
    Enum.reduce(items, 0, fn {_sku, {p, n}}, acc -> acc + p * n end)
  end

  def count(%Cart{items: items}), do: items |> Map.values() |> Enum.map(&elem(&1, 1)) |> Enum.sum()
end
"""
PROMO_EX = """
defmodule Cart.Promo do
  @moduledoc "Promotion codes."

  @codes %{"TEN" => 10, "HALF" => 50}

  def apply(total, code) do
    off = Map.get(@codes, code, 0)
    total - div(total * off, 100)
  end

  def describe(code) do
    case Map.fetch(@codes, code) do
      {:ok, off} -> "#{off}% off"
      :error -> "no promotion"
    end
  end
end
"""
CART_TEST_EXS = """
defmodule CartTest do
  use ExUnit.Case, async: true

  test "adding twice counts two" do
    cart = Cart.new() |> Cart.add("tea", 450) |> Cart.add("tea", 450)
    assert Cart.count(cart) == 2
  end

  test "total sums price times quantity" do
    cart = Cart.new() |> Cart.add("tea", 450) |> Cart.add("cup", 1200)
    assert Cart.total(cart) == 1650
  end

  test "removing the last one empties the cart" do
    cart = Cart.new() |> Cart.add("tea", 450) |> Cart.remove("tea")
    assert Cart.count(cart) == 0
  end

  test "negative prices are refused" do
    assert_raise FunctionClauseError, fn -> Cart.add(Cart.new(), "tea", -1) end
  end
end
"""
PROMO_TEST_EXS = """
defmodule Cart.PromoTest do
  use ExUnit.Case, async: true
  alias Cart.Promo

  test "ten percent" do
    assert Promo.apply(1000, "TEN") == 900
  end

  test "half" do
    assert Promo.apply(1000, "HALF") == 500
  end

  test "unknown code" do
    assert Promo.apply(1000, "NOPE") == 1000
    assert Promo.describe("NOPE") == "no promotion"
  end
end
"""


def ex_project(c: Case, **over: str) -> None:
    files = {"mix.exs": MIX, ".formatter.exs": FORMATTER, "lib/cart.ex": CART_EX, "lib/cart/promo.ex": PROMO_EX,
             "test/test_helper.exs": "ExUnit.start()\n", "test/cart_test.exs": CART_TEST_EXS,
             "test/cart/promo_test.exs": PROMO_TEST_EXS}
    files.update(over)
    c.files(files)


def ex_case(c: Case, name: str, cmd: str, causal, category: str, tool: str = "mix", compile_first: bool = True) -> None:
    c.step("Set up Elixir", "elixir --version", env=ENV)
    if compile_first:
        c.step("Compile", "mix compile", env=ENV)
    c.step("Test" if "test" in cmd.split()[1:2] else ("Format" if "format" in cmd else "Compile"), cmd, causal=causal, env=ENV)
    c.write(tool=tool, category=category, made_by=f"{ELIXIR} (mix) on make/beam/gen.py:{name}, run here")


@case("elixir")
def mix_compile_undefined(name: str, shape: str) -> None:
    c = Case("elixir", name, shape, "cart")
    ex_project(c, **{"lib/cart/promo.ex": PROMO_EX.replace("off = Map.get(@codes, code, 0)", "off = Map.get(@codes, normalise(code), 0)")})
    ex_case(c, name, "mix compile", lambda o: block(o, r"^\*\* \(CompileError\)|error: undefined function", 2, 2), "build",
            compile_first=False)


@case("elixir")
def mix_warnings_as_errors(name: str, shape: str) -> None:
    c = Case("elixir", name, shape, "cart")
    ex_project(c, **{"lib/cart.ex": CART_EX.replace("def total(%Cart{items: items}) do", "def total(%Cart{items: items} = cart) do")})
    ex_case(c, name, "mix compile --warnings-as-errors --force",
            lambda o: block(o, r"^warning: variable \"cart\" is unused", 3, 1, stop=r"^\s*$")
            + find(o, r"Compilation failed due to warnings while using the --warnings-as-errors option", limit=1), "build",
            compile_first=False)


@case("elixir")
def exunit_assert(name: str, shape: str) -> None:
    c = Case("elixir", name, shape, "cart")
    ex_project(c, **{"lib/cart/promo.ex": PROMO_EX.replace('@codes %{"TEN" => 10, "HALF" => 50}', '@codes %{"TEN" => 10, "HALF" => 5}')})
    ex_case(c, name, "mix test", lambda o: find(o, r"^\s+\d+\) test ", r"^\s+test/\S+_test\.exs:\d+$", r"^\s+Assertion with == failed",
                                               r"^\s+code:\s+assert", r"^\s+left:\s", r"^\s+right:\s", limit=3), "test", tool="exunit")


@case("elixir")
def exunit_raise(name: str, shape: str) -> None:
    c = Case("elixir", name, shape, "cart")
    ex_project(c, **{"lib/cart.ex": CART_EX.replace("      :error -> cart\n", ""),
                     "test/cart_test.exs": CART_TEST_EXS.replace('  test "negative prices',
                                                                 '  test "removing a missing sku keeps the cart" do\n    assert Cart.new() |> Cart.remove("tea") |> Cart.count() == 0\n  end\n\n  test "negative prices')})
    ex_case(c, name, "mix test --trace", lambda o: find(o, r"^\s+\d+\) test ", r"^\s+\*\* \(CaseClauseError\)", r"^\s+\(cart [\d.]+\) lib/cart\.ex:\d+",
                                                       r"^\s+test/cart_test\.exs:\d+: \(test\)", limit=3), "test", tool="exunit")


@case("elixir")
def mix_format_check(name: str, shape: str) -> None:
    c = Case("elixir", name, shape, "cart")
    ex_project(c)
    c.sh("mix format", env=ENV)
    c.files({"lib/cart/promo.ex": PROMO_EX.replace("total - div(total * off, 100)", "total-div(total*off,100)"),
             "test/cart_test.exs": CART_TEST_EXS.replace('Cart.add("cup", 1200)', 'Cart.add( "cup",1200 )')})
    ex_case(c, name, "mix format --check-formatted", lambda o: find(o, r"^\*\* \(Mix\) mix format failed", r"^\s+\* \S+\.exs?$", limit=4),
            "lint", tool="mix format")


@case("elixir")
def mix_deps_not_fetched(name: str, shape: str) -> None:
    c = Case("elixir", name, shape, "cart")
    ex_project(c, **{"mix.exs": MIX.replace("defp deps, do: []", 'defp deps, do: [{:jason, "~> 1.4"}]')})
    ex_case(c, name, "mix test", lambda o: find(o, r"Could not find Hex, which is needed to build dependency", r"Could not find an SCM for dependency :jason", limit=1),
            "dependency", tool="mix", compile_first=False)


@case("elixir")
def exunit_timeout(name: str, shape: str) -> None:
    c = Case("elixir", name, shape, "cart")
    ex_project(c, **{"test/cart/promo_test.exs": PROMO_TEST_EXS.replace('  test "half" do\n',
                                                                         '  @tag timeout: 200\n  test "half" do\n    Process.sleep(1_000)\n')})
    ex_case(c, name, "mix test", lambda o: find(o, r"^\s+\d+\) test half", r"\*\* \(ExUnit\.TimeoutError\)", r"^\s+test/cart/promo_test\.exs:\d+", limit=1),
            "test", tool="exunit")
