"""OCaml cases with dune: type and unbound-value errors, a warning that the dev profile makes an error, a library
that is not installed, and OUnit2 test failures run by `dune test`."""

from __future__ import annotations

from gen import case
from ws import Case, block, find, version

ECO = "ocaml"
OCAML = version("ocamlc -version")
DUNE = version("dune --version")

PROJECT = "(lang dune 2.9)\n"
LIB_DUNE = "(library\n (name stock))\n"
BIN_DUNE = "(executable\n (name main)\n (libraries stock))\n"
TEST_DUNE = "(test\n (name test_stock)\n (libraries stock ounit2))\n"
ITEM = """
type item = { sku : string; name : string; qty : int; price : int }

let make ~sku ~name ~qty ~price = { sku; name; qty; price }

let value it = it.qty * it.price
"""
INVENTORY = """
let total items = List.fold_left (fun acc it -> acc + Item.value it) 0 items

let low_stock ~threshold items =
  List.filter (fun (it : Item.item) -> it.qty < threshold) items
  |> List.map (fun (it : Item.item) -> it.sku)

let format_money cents = Printf.sprintf "%d.%02d" (cents / 100) (cents mod 100)

let report items =
  items
  |> List.map (fun (it : Item.item) -> Printf.sprintf "%-8s %4d" it.name it.qty)
  |> String.concat "\\n"
"""
MAIN = """
let () =
  let items =
    [ Stock.Item.make ~sku:"A1" ~name:"bolt" ~qty:120 ~price:25;
      Stock.Item.make ~sku:"B2" ~name:"nut" ~qty:4 ~price:5 ]
  in
  print_endline (Stock.Inventory.report items);
  print_endline (Stock.Inventory.format_money (Stock.Inventory.total items))
"""
TEST = """
open OUnit2
open Stock

let items =
  [ Item.make ~sku:"A1" ~name:"bolt" ~qty:120 ~price:25;
    Item.make ~sku:"B2" ~name:"nut" ~qty:4 ~price:5;
    Item.make ~sku:"C3" ~name:"washer" ~qty:9 ~price:2 ]

let tests =
  "stock"
  >::: [ ("total" >:: fun _ -> assert_equal ~printer:string_of_int 3038 (Inventory.total items));
         ("low stock" >:: fun _ ->
            assert_equal ~printer:(String.concat ",") [ "B2"; "C3" ] (Inventory.low_stock ~threshold:10 items));
         ("money" >:: fun _ -> assert_equal ~printer:Fun.id "30.38" (Inventory.format_money 3038));
         ("value" >:: fun _ -> assert_equal 50 (Item.value (Item.make ~sku:"x" ~name:"x" ~qty:10 ~price:5))) ]

let () = run_test_tt_main tests
"""


def project(c: Case, **over: str) -> None:
    files = {"dune-project": PROJECT, "src/dune": LIB_DUNE, "src/item.ml": ITEM, "src/inventory.ml": INVENTORY,
             "bin/dune": BIN_DUNE, "bin/main.ml": MAIN, "test/dune": TEST_DUNE, "test/test_stock.ml": TEST}
    files.update(over)
    c.files(files)


def made(name: str) -> str:
    return f"OCaml {OCAML}, dune {DUNE}, OUnit 2.2.6 on make/ocaml/gen.py:{name}, run here"


def errors(o: list[str], limit: int = 4) -> list[int]:
    """`File "x.ml", line N, characters a-b:`, its excerpt and the `Error:` lines under it."""
    return block(o, r'^File "\S+\.ml", line \d+', 3, limit, stop=r"^File ") + find(o, r"^Error", limit=limit)


def run(c: Case, name: str, causal, test: bool = False, category: str = "build", tool: str = "dune") -> None:
    c.step("Toolchain", "ocamlc -version && dune --version")
    c.step("Build", "dune build 2>&1", causal=None if test else causal)
    if test:
        c.step("Test", "dune test 2>&1", causal=causal)
    c.write(tool=tool, category=category, made_by=made(name))


@case(ECO)
def dune_type_error(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"src/inventory.ml": INVENTORY.replace('Printf.sprintf "%-8s %4d" it.name it.qty', 'Printf.sprintf "%-8s %4s" it.name it.qty')})
    run(c, name, errors)


@case(ECO)
def dune_unbound_value(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"bin/main.ml": MAIN.replace("Stock.Inventory.report items", "Stock.Inventory.render items")})
    run(c, name, errors)


@case(ECO)
def dune_unused_variable(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"src/item.ml": ITEM.replace("let value it = it.qty * it.price", "let value it =\n  let rounding = 5 in\n  it.qty * it.price")})
    run(c, name, errors)


@case(ECO)
def dune_missing_library(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"src/dune": "(library\n (name stock)\n (libraries yojson))\n"})
    run(c, name, lambda o: block(o, r'^File "src/dune"', 3, 1) + find(o, r'Library "yojson" not found', limit=1), category="dependency")


@case(ECO)
def ounit_failures(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "stock")
    project(c, **{"src/inventory.ml": INVENTORY.replace("it.qty < threshold", "it.qty <= threshold / 2")
                  .replace('"%d.%02d"', '"%d.%d"')})
    run(c, name, lambda o: find(o, r"^Error: stock:\d+:", r"^expected: ", r"^(but got|got)\s*:", r"^File \".*test_stock\.ml\"", limit=3),
        test=True, category="test", tool="ounit2")
