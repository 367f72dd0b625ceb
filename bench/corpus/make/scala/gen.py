"""Scala cases: scalac (Debian's Scala 2.11) type errors, names not found, a non-exhaustive match made fatal by
-Xfatal-warnings, and a failing check in a small test runner object."""

from __future__ import annotations

from gen import case
from ws import Case, find, version

ECO = "scala"
SCALAC = version("scalac -version 2>&1")

SHAPES_SCALA = """
package geo

sealed trait Shape
final case class Circle(r: Double) extends Shape
final case class Rect(w: Double, h: Double) extends Shape
final case class Triangle(a: Double, b: Double, c: Double) extends Shape

object Geometry {
  def area(s: Shape): Double = s match {
    case Circle(r)  => math.Pi * r * r
    case Rect(w, h) => w * h
    case Triangle(a, b, c) =>
      val p = (a + b + c) / 2
      math.sqrt(p * (p - a) * (p - b) * (p - c))
  }

  def perimeter(s: Shape): Double = s match {
    case Circle(r)         => 2 * math.Pi * r
    case Rect(w, h)        => 2 * (w + h)
    case Triangle(a, b, c) => a + b + c
  }

  def largest(shapes: Seq[Shape]): Option[Shape] =
    if (shapes.isEmpty) None else Some(shapes.maxBy(area))
}
"""
MAIN_SCALA = """
package geo

object Main {
  def main(args: Array[String]): Unit = {
    val shapes = List(Circle(1), Rect(2, 3), Triangle(3, 4, 5))
    shapes.foreach(s => println(f"$s%-24s area ${Geometry.area(s)}%8.3f"))
    println(s"largest: ${Geometry.largest(shapes)}")
  }
}
"""
CHECKS_SCALA = """
package geo

object Checks {
  private var failed = 0

  private def check(name: String, got: Double, want: Double): Unit =
    if (math.abs(got - want) < 1e-9) println(s"[ok]   $name")
    else { println(s"[FAIL] $name: got $got, want $want"); failed += 1 }

  def main(args: Array[String]): Unit = {
    check("rect area", Geometry.area(Rect(2, 3)), 6)
    check("triangle area", Geometry.area(Triangle(3, 4, 5)), 6)
    check("rect perimeter", Geometry.perimeter(Rect(2, 3)), 10)
    check("circle perimeter", Geometry.perimeter(Circle(1)), 2 * math.Pi)
    println(s"${4 - failed} passed, $failed failed")
    if (failed > 0) sys.exit(1)
  }
}
"""
BUILD = "mkdir -p out && scalac -deprecation -feature -d out src/geo/*.scala"


def project(c: Case, **over: str) -> None:
    files = {"src/geo/Shapes.scala": SHAPES_SCALA, "src/geo/Main.scala": MAIN_SCALA, "src/geo/Checks.scala": CHECKS_SCALA}
    files.update(over)
    c.files(files)
    c.step("Toolchain", "scalac -version 2>&1 && java -version 2>&1 | sed -n 1p")


def errors(o: list[str]) -> list[int]:
    return find(o, r"\.scala:\d+: error: ", limit=4) + [i + 1 for i in find(o, r"\.scala:\d+: error: ", limit=4)
                                                        if i + 1 < len(o) and o[i + 1].startswith(" found")] + \
        [i + 2 for i in find(o, r"\.scala:\d+: error: ", limit=4) if i + 2 < len(o) and o[i + 2].startswith(" required")]


def made(name: str) -> str:
    return f"{SCALAC} on make/scala/gen.py:{name}, run here"


@case(ECO)
def scalac_type_mismatch(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "geo")
    project(c, **{"src/geo/Shapes.scala": SHAPES_SCALA.replace("if (shapes.isEmpty) None else Some(shapes.maxBy(area))",
                                                               "if (shapes.isEmpty) None else shapes.maxBy(area)")})
    c.step("Build", BUILD, causal=errors)
    c.write(tool="scalac", category="build", made_by=made(name))


@case(ECO)
def scalac_not_found(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "geo")
    project(c, **{"src/geo/Main.scala": MAIN_SCALA.replace("Geometry.largest(shapes)", "Geometry.biggest(shapes)")})
    c.step("Build", BUILD, causal=errors)
    c.write(tool="scalac", category="build", made_by=made(name))


@case(ECO)
def scalac_fatal_warnings(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "geo")
    project(c, **{"src/geo/Shapes.scala": SHAPES_SCALA.replace("    case Triangle(a, b, c) => a + b + c\n", "")})
    c.step("Build", BUILD + " -Xfatal-warnings",
           causal=lambda o: find(o, r"\.scala:\d+: (warning|error): match may not be exhaustive", r"It would fail on the following input",
                                 r"No warnings can be incurred under -Xfatal-warnings", limit=1))
    c.write(tool="scalac", category="build", made_by=made(name))


@case(ECO)
def scala_checks_fail(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "geo")
    project(c, **{"src/geo/Shapes.scala": SHAPES_SCALA.replace("case Rect(w, h)        => 2 * (w + h)", "case Rect(w, h)        => w + h")})
    c.step("Build", BUILD)
    c.step("Test", "scala -cp out geo.Checks", causal=lambda o: find(o, r"^\[FAIL\] ", limit=3))
    c.write(tool="scala", category="test", made_by=made(name))
